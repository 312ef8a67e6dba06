package dibs;

import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 29 (6): what becomes of a tick whose task threw. By default it stays done for all of
 * atMost, as a tick that succeeded: no instance runs it again, and the history records the
 * failure. With {@code retryFailedTicks}, its lock is let go at once, so that another instance
 * whose scheduler fires the same tick later runs it. Against a real redis-server.
 */
@Timeout(60)
class FailedTickTest extends RedisTestBase {
    private static int runs(DibsClient client, String job, String tick, AtomicInteger count, boolean fail) {
        try {
            client.executeOnce(job, tick, Duration.ofSeconds(30), () -> {
                count.incrementAndGet();
                if (fail) {
                    throw new IllegalStateException("the report's database is down");
                }
            });
        } catch (IllegalStateException expected) {
            // the task's own
        }
        return count.get();
    }

    @Test
    void aFailedTickStaysDoneByDefault() throws Exception {
        String job = uniqueName("failed-tick");
        AtomicInteger count = new AtomicInteger();
        try (DibsClient first = Dibs.client(local().build());
                DibsClient later = Dibs.client(local().build())) {
            assertEquals(1, runs(first, job, "2026-12-04", count, true));
            assertTrue(keyExists("dibs:" + job + "@2026-12-04"), "the tick's done-mark stays");
            assertEquals(1, runs(later, job, "2026-12-04", count, false), "the later fire skips it");
            DibsHistory history = first.history(job, 10);
            assertEquals(1, history.size(), history.toString());
            assertFalse(history.get(0).succeeded());
            assertEquals("kept", history.get(0).ended());
        }
    }

    @Test
    void withRetryFailedTicksALaterFireRunsItAgain() throws Exception {
        String job = uniqueName("retried-tick");
        AtomicInteger count = new AtomicInteger();
        try (DibsClient first = Dibs.client(local().retryFailedTicks(true).build());
                DibsClient later = Dibs.client(local().retryFailedTicks(true).build())) {
            assertEquals(1, runs(first, job, "2026-12-04", count, true));
            assertFalse(keyExists("dibs:" + job + "@2026-12-04"), "let go at once");
            assertEquals(2, runs(later, job, "2026-12-04", count, false), "the later fire runs it");
            assertEquals(2, runs(first, job, "2026-12-04", count, false), "done once it succeeded");
            DibsHistory history = first.history(job, 10);
            assertEquals(2, history.size(), history.toString());
            assertTrue(history.get(0).succeeded());
            assertEquals("kept", history.get(0).ended());
            assertFalse(history.get(1).succeeded());
            assertEquals("released", history.get(1).ended());
        }
        DibsArgumentException bad = assertThrows(
                DibsArgumentException.class,
                () -> Dibs.client(
                        java.util.Map.of("host", "127.0.0.1", "port", redis.port(), "retry-failed-ticks", "maybe")));
        assertEquals("retry-failed-ticks", bad.argument());
    }
}
