package dibs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * Invalid arguments are IllegalArgumentException, found before any network I/O: every conn here
 * points at a closed port, so a connection error would show that validation came too late.
 */
@Timeout(30)
class ValidationTest {
    private static String closed;
    private final AtomicBoolean ran = new AtomicBoolean();
    private final Runnable task = () -> ran.set(true);
    private final Supplier<Integer> supplier = () -> {
        ran.set(true);
        return 1;
    };

    @BeforeAll
    static void closedPort() throws IOException {
        closed = TestSupport.closedPortUri();
    }

    private IllegalArgumentException invalid(Executable call, String... fragments) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        for (String fragment : fragments) {
            assertTrue(String.valueOf(e.getMessage()).contains(fragment),
                    "message should contain '" + fragment + "': " + e.getMessage());
        }
        assertFalse(ran.get(), "the task must not run");
        return e;
    }

    @Test
    void emptyLockName() {
        invalid(() -> Dibs.execute(closed, "", 10, 0, task));
        invalid(() -> Dibs.executeWithResult(closed, "", Duration.ofSeconds(10), Duration.ZERO, supplier));
    }

    @Test
    void lockNamesTooLongOrWithControlCharacters() {
        invalid(() -> Dibs.execute(closed, "x".repeat(513), 10, 0, task), "lockName");
        invalid(() -> Dibs.execute(closed, "line\nbreak", 10, 0, task), "lockName");
        invalid(() -> Dibs.execute(closed, "nul\u0000", 10, 0, task), "lockName");
    }

    @Test
    void atLeastAboveAtMost() {
        invalid(() -> Dibs.execute(closed, "job", 5, 6, task));
        invalid(() -> Dibs.execute(closed, "job", Duration.ofMillis(1000), Duration.ofMillis(1001), task));
        invalid(() -> Dibs.executeWithResult(closed, "job", 5, 6, supplier));
    }

    @Test
    void negativeDurations() {
        invalid(() -> Dibs.execute(closed, "job", -1, 0, task));
        invalid(() -> Dibs.execute(closed, "job", 10, -1, task));
        invalid(() -> Dibs.execute(closed, "job", Duration.ofMillis(-5), Duration.ZERO, task));
        invalid(() -> Dibs.execute(closed, "job", Duration.ofSeconds(10), Duration.ofMillis(-1), task));
    }

    @Test
    void zeroAtMost() {
        invalid(() -> Dibs.execute(closed, "job", 0, 0, task));
        // Truncated to whole milliseconds: 0.999 ms is 0 ms.
        invalid(() -> Dibs.execute(closed, "job", Duration.ofNanos(999_999), Duration.ZERO, task));
    }

    @Test
    void overflowingDurations() {
        invalid(() -> Dibs.execute(closed, "job", Long.MAX_VALUE, 0, task));
        invalid(() -> Dibs.execute(closed, "job", Long.MAX_VALUE / 1000 + 1, 0, task));
        invalid(() -> Dibs.execute(closed, "job", Duration.ofSeconds(Long.MAX_VALUE), Duration.ZERO, task));
        invalid(() -> Dibs.executeWithResult(closed, "job", Duration.ofSeconds(10), Duration.ofSeconds(Long.MAX_VALUE), supplier));
    }

    @Test
    void nullsAreIllegalArgumentsNamingTheArgument() {
        invalid(() -> Dibs.execute(null, "job", 10, 0, task), "conn");
        invalid(() -> Dibs.execute(closed, null, 10, 0, task), "lockName");
        invalid(() -> Dibs.execute(closed, "job", 10, 0, null), "task");
        invalid(() -> Dibs.executeWithResult(null, "job", 10, 0, supplier), "conn");
        invalid(() -> Dibs.executeWithResult(closed, null, 10, 0, supplier), "lockName");
        invalid(() -> Dibs.executeWithResult(closed, "job", 10, 0, (Supplier<Integer>) null), "task");
        invalid(() -> Dibs.execute(closed, "job", null, Duration.ZERO, task), "atMost");
        invalid(() -> Dibs.execute(closed, "job", Duration.ofSeconds(1), null, task), "atLeast");
        invalid(() -> Dibs.executeWithResult(closed, "job", null, Duration.ZERO, supplier), "atMost");
        invalid(() -> Dibs.executeWithResult(closed, "job", Duration.ofSeconds(1), null, supplier), "atLeast");
        invalid(() -> Dibs.execute(closed, "job", Duration.ofSeconds(1), Duration.ZERO, null), "task");
    }

    @Test
    void connOfAnotherTypeNamesTheTypeAndWhatIsAccepted() {
        invalid(() -> Dibs.execute(42, "job", 10, 0, task), "conn", "java.lang.Integer", "String", "Map");
        invalid(() -> Dibs.execute(List.of("redis://h"), "job", 10, 0, task), "conn", "List");
    }

    @Test
    void malformedConns() {
        invalid(() -> Dibs.execute("localhost:6379", "job", 10, 0, task));
        invalid(() -> Dibs.execute("http://h", "job", 10, 0, task));
        invalid(() -> Dibs.execute(Map.of("hots", "h"), "job", 10, 0, task), "hots");
        invalid(() -> Dibs.execute(Map.of("host", "127.0.0.1", "port", 6379.0), "job", 10, 0, task), "java.lang.Double");
        invalid(() -> Dibs.execute(Map.of("host", "127.0.0.1", "port", "abc"), "job", 10, 0, task), "port");
        invalid(() -> Dibs.execute(Map.of("spec", "redis://h"), "job", 10, 0, task), "spec");
        Map<Object, Object> badKey = new HashMap<>();
        badKey.put(7, "x");
        invalid(() -> Dibs.execute(badKey, "job", 10, 0, task), "7");
    }

    @Test
    void messagesNeverShowThePassword() {
        IllegalArgumentException e = invalid(() -> Dibs.execute("redis://user:hunter2@127.0.0.1:99999", "job", 10, 0, task));
        assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
        e = invalid(() -> Dibs.execute(Map.of("uri", "redis://:hunter2@h:1", "password", "other-secret"), "job", 10, 0, task));
        assertFalse(e.getMessage().contains("hunter2") || e.getMessage().contains("other-secret"), e.getMessage());
    }

    @Test
    void invalidArgumentWinsOverAnUnreachableServerForEveryConnForm() {
        int port = Integer.parseInt(closed.substring(closed.lastIndexOf(':') + 1));
        for (Object conn : List.of(closed, Map.of("uri", closed), Map.of("host", "127.0.0.1", "port", port))) {
            invalid(() -> Dibs.execute(conn, "", 10, 0, task));
            invalid(() -> Dibs.execute(conn, "job", 1, 2, task));
        }
    }
}
