package dibs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.TestSupport;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An invalid argument is an IllegalArgumentException even when the server is unreachable: the
 * conn points at a closed port, so a connection error would show that validation came too late.
 * The table of bad inputs, each checked against a live server that must receive no command, is
 * {@link BadInputTest}.
 */
@Timeout(30)
class ValidationTest {
    private static String closed;
    private final AtomicBoolean ran = new AtomicBoolean();
    private final Runnable task = () -> ran.set(true);

    @BeforeAll
    static void closedPort() throws IOException {
        closed = TestSupport.closedPortUri();
    }

    @Test
    void invalidArgumentWinsOverAnUnreachableServerForEveryConnForm() {
        int port = Integer.parseInt(closed.substring(closed.lastIndexOf(':') + 1));
        for (Object conn : List.of(closed, Map.of("uri", closed), Map.of("host", "127.0.0.1", "port", port))) {
            assertThrows(IllegalArgumentException.class, () -> Dibs.execute(conn, "", 10, 0, task));
            assertThrows(IllegalArgumentException.class, () -> Dibs.execute(conn, "job", 1, 2, task));
            assertFalse(ran.get(), "the task must not run");
        }
    }

    @Test
    void aLoneSurrogateInALockNameIsRefusedNotCollapsedIntoAnotherName() {
        // Two names that a lossy conversion would both turn into one key.
        for (String name : List.of("job-\uD800", "job-\uDBFF", "\uDC00x")) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> Dibs.execute(closed, name, 10, 0, task));
            assertTrue(e.getMessage().contains("lockName") && e.getMessage().contains("surrogate"), e.getMessage());
        }
        assertFalse(ran.get(), "the task must not run");
    }
}
