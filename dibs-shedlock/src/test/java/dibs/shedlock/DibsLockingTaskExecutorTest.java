package dibs.shedlock;

import static java.time.Duration.ZERO;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.Dibs;
import dibs.DibsRun;
import dibs.testsupport.DibsCli;
import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's own {@link DefaultLockingTaskExecutor} (what {@code @SchedulerLock} goes through)
 * on {@link DibsLockProvider}, against a real redis-server.
 */
class DibsLockingTaskExecutorTest extends ProviderFixture {
    private static LockingTaskExecutor executor;

    @BeforeAll
    static void startExecutor() {
        executor = new DefaultLockingTaskExecutor(provider);
    }

    private static String name(String base) {
        return uniqueName("executor", base);
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(Instant.now(), name, atMost, atLeast);
    }

    /** Runs, through {@code through}, a task that throws {@code thrown}; returns what the caller got. */
    private static RuntimeException thrownThrough(LockingTaskExecutor through, String name, RuntimeException thrown) {
        return assertThrows(
                RuntimeException.class,
                () -> through.executeWithLock(
                        (Runnable) () -> {
                            throw thrown;
                        },
                        config(name, Duration.ofSeconds(30), ZERO)));
    }

    private static boolean keyExists(String name) throws IOException {
        return "1".equals(redis.command("EXISTS", RedisServer.lockKey(name)));
    }

    @Test
    void runsTheTaskUnderTheLockAndReleasesIt() throws IOException {
        String name = name("runs");
        AtomicBoolean heldInside = new AtomicBoolean();
        executor.executeWithLock(
                (Runnable) () -> {
                    try {
                        heldInside.set(keyExists(name));
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                },
                config(name, Duration.ofSeconds(30), ZERO));
        assertTrue(heldInside.get(), "the lock is held while the task runs");
        assertFalse(keyExists(name), "released after");
    }

    /**
     * A bare provider never hears how its task ended (ShedLock's executor releases in a {@code
     * finally}): the run is recorded as unknown, never as a success, and {@code dibs check} says
     * it cannot tell (exit 3), where it said ok before.
     */
    @Test
    void aTaskThatThrowsThroughABareProviderIsRecordedUnknownNotAsASuccess() throws Exception {
        String name = name("threw");
        IllegalStateException thrown = new IllegalStateException("export failed");
        assertSame(thrown, thrownThrough(executor, name, thrown));
        List<DibsRun> runs = client.history(Dibs.jobOf(name), 10);
        assertEquals(1, runs.size(), runs.toString());
        DibsRun run = runs.get(0);
        assertFalse(run.succeeded(), run.toString());
        assertFalse(run.failed(), "dibs did not see it throw: " + run);
        assertEquals("released", run.ended());
        assertTrue(run.toString().contains("task unknown"), run.toString());
        DibsCli check = DibsCli.run(redis.uri(), "check", name, "--within", "1h");
        assertEquals(3, check.exitCode(), check.output());
        assertTrue(check.output().contains("not told to dibs"), check.output());
        // Through dibs's own executor the outcome is seen, and recorded.
        String seen = name("seen");
        assertSame(thrown, thrownThrough(new DibsLockingTaskExecutor(client), seen, thrown));
        assertTrue(client.history(Dibs.jobOf(seen), 1).get(0).failed());
        assertEquals(
                1, DibsCli.run(redis.uri(), "check", seen, "--within", "1h").exitCode());
    }

    @Test
    void skipsTheTaskWhileTheLockIsHeldElsewhere() throws Throwable {
        String name = name("skips");
        SimpleLock elsewhere =
                provider.lock(config(name, Duration.ofSeconds(30), ZERO)).orElseThrow();
        AtomicBoolean ran = new AtomicBoolean();
        executor.executeWithLock((Runnable) () -> ran.set(true), config(name, Duration.ofSeconds(30), ZERO));
        assertFalse(ran.get(), "skipped");
        LockingTaskExecutor.TaskResult<String> result =
                executor.executeWithLock(() -> "ran", config(name, Duration.ofSeconds(30), ZERO));
        assertFalse(result.wasExecuted());
        elsewhere.unlock();
        result = executor.executeWithLock(() -> "ran", config(name, Duration.ofSeconds(30), ZERO));
        assertTrue(result.wasExecuted());
        assertEquals("ran", result.getResult());
    }

    @Test
    void theTasksExceptionComesThroughAndTheLockIsReleased() throws IOException {
        String name = name("throws");
        IllegalStateException thrown = new IllegalStateException("task failed");
        assertSame(thrown, thrownThrough(executor, name, thrown), "the very same exception");
        assertFalse(keyExists(name), "released after the failure");
        Exception checked = new Exception("checked");
        Throwable caughtChecked = assertThrows(
                Exception.class,
                () -> executor.executeWithLock(
                        () -> {
                            throw checked;
                        },
                        config(name, Duration.ofSeconds(30), Duration.ofSeconds(5))));
        assertSame(checked, caughtChecked, "a Task's checked exception comes through as is");
        long pttl = Long.parseLong(redis.command("PTTL", RedisServer.lockKey(name)));
        assertTrue(pttl > 4_000 && pttl <= 5_000, "kept for lockAtLeastFor after a failure too: PTTL " + pttl);
    }

    @Test
    void lockExtenderExtendsTheActiveLock() throws Throwable {
        String name = name("extender");
        executor.executeWithLock(
                (LockingTaskExecutor.Task) () -> {
                    LockExtender.extendActiveLock(Duration.ofSeconds(20), ZERO);
                    long pttl = Long.parseLong(redis.command("PTTL", RedisServer.lockKey(name)));
                    assertTrue(pttl > 15_000 && pttl <= 20_000, "extended from inside the task: PTTL " + pttl);
                },
                config(name, Duration.ofMillis(500), ZERO));
        assertFalse(keyExists(name), "the extended lock is the one released");
    }
}
