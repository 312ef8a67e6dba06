package dibs.shedlock;

import static java.time.Duration.ZERO;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.DibsHistory;
import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import org.junit.jupiter.api.Test;

/**
 * Issue 29 (2): a ShedLock task that throws is recorded as failed in its lock's history where
 * dibs can see its outcome: through {@link DibsLockingTaskExecutor} (and the starter's advice,
 * tested there). Before, 3 runs that each threw were all recorded as succeeded. Against a real
 * redis-server.
 */
class TaskOutcomeTest extends ProviderFixture {
    private static LockConfiguration config(String name) {
        return new LockConfiguration(Instant.now(), name, Duration.ofSeconds(30), ZERO);
    }

    private static boolean keyExists(String name) throws IOException {
        return "1".equals(redis.command("EXISTS", RedisServer.lockKey(name)));
    }

    /** How each run's task ended, the newest first: true succeeded, false failed, null not seen. */
    private static List<Boolean> outcomes(String name) {
        DibsHistory runs = client.history(name, 10);
        return runs.stream()
                .map(r -> r.succeeded() ? Boolean.TRUE : r.failed() ? Boolean.FALSE : null)
                .collect(java.util.stream.Collectors.toList());
    }

    @Test
    void throughDibsLockingTaskExecutorATaskThatThrowsIsRecordedAsFailed() throws Throwable {
        String name = uniqueName("outcome", "nightly");
        LockingTaskExecutor executor = new DibsLockingTaskExecutor(client);
        for (int i = 0; i < 3; i++) {
            IllegalStateException boom = new IllegalStateException("boom " + i);
            IllegalStateException thrown = assertThrows(
                    IllegalStateException.class,
                    () -> executor.executeWithLock(
                            (Runnable) () -> {
                                throw boom;
                            },
                            config(name)));
            assertSame(boom, thrown, "the task's own exception");
            assertFalse(keyExists(name), "released");
        }
        assertEquals(List.of(false, false, false), outcomes(name));
        LockingTaskExecutor.TaskResult<String> ok = executor.executeWithLock(() -> "done", config(name));
        assertEquals("done", ok.getResult());
        assertEquals(List.of(true, false, false, false), outcomes(name));
        Exception checked = new Exception("checked");
        assertSame(
                checked,
                assertThrows(
                        Exception.class,
                        () -> executor.executeWithLock(
                                (LockingTaskExecutor.Task) () -> {
                                    throw checked;
                                },
                                config(name))));
        assertEquals(false, outcomes(name).get(0));
    }

    @Test
    void theReleaseWaitsOnlyForItsOwnTaskAndSurvivesAnExtend() throws Throwable {
        String outer = uniqueName("outcome", "outer");
        String inner = uniqueName("outcome", "inner");
        LockingTaskExecutor executor = new DibsLockingTaskExecutor(client);
        boolean[] innerFreeInside = new boolean[1];
        executor.executeWithLock(
                (LockingTaskExecutor.Task) () -> {
                    LockExtender.extendActiveLock(Duration.ofSeconds(40), ZERO);
                    // A lock taken through a bare provider within the task is released at its own unlock.
                    provider.lock(config(inner)).orElseThrow().unlock();
                    innerFreeInside[0] = !keyExists(inner);
                    assertTrue(keyExists(outer), "the task's own lock is held while it runs");
                },
                config(outer));
        assertTrue(innerFreeInside[0], "not held back until the outer task ended");
        assertFalse(keyExists(outer));
        assertEquals(List.of(true), outcomes(outer));
        assertEquals(Collections.singletonList(null), outcomes(inner), "a bare provider's: not seen");
    }

    /**
     * ShedLock's own executor releases the lock in a {@code finally} without the task's outcome:
     * through a bare {@link DibsLockProvider}, dibs cannot see it (as the README says), and records
     * it as unknown: neither a success nor a failure.
     */
    @Test
    void throughShedLocksOwnExecutorTheOutcomeIsNotSeen() {
        String name = uniqueName("outcome", "bare");
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        assertThrows(
                IllegalStateException.class,
                () -> executor.executeWithLock(
                        (Runnable) () -> {
                            throw new IllegalStateException("boom");
                        },
                        config(name)));
        assertEquals(Collections.singletonList(null), outcomes(name), "recorded as not seen");
    }
}
