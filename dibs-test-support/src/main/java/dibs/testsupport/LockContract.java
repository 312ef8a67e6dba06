package dibs.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The lock contract that every front end of dibs passes, in the style of ShedLock's
 * {@code AbstractLockProviderIntegrationTest}: {@code Dibs}, {@code DibsClient}, the ShedLock
 * provider (module dibs-shedlock) and the CLI ({@code dibs run}), each through a small adapter
 * that implements {@link #runLocked}. Against a real redis-server that the class starts.
 */
public abstract class LockContract {
    /**
     * The server every scenario of the class runs against: started before each front end's
     * first test (before its own {@code @BeforeAll} methods), stopped after its last.
     */
    @RegisterExtension
    protected static final RedisServer redis = RedisServer.perTestClass();

    /**
     * Through the front end under test: if the lock {@code name} is free, takes it for at most
     * {@code atMost}, runs {@code task} while holding it, and releases it (kept for the rest of
     * {@code atLeast}). Returns whether the lock was won, and so whether the task ran.
     */
    protected abstract boolean runLocked(String name, Duration atMost, Duration atLeast, Runnable task)
            throws Exception;

    /** What the front end under test is called in failure messages. */
    protected abstract String frontEnd();

    private static final AtomicInteger NAMES = new AtomicInteger();

    protected static String name(String base) {
        return "contract-" + base + "-p" + ProcessHandle.current().pid() + "-" + NAMES.incrementAndGet();
    }

    private boolean run(String name, Duration atMost, Duration atLeast, Runnable task) {
        try {
            return runLocked(name, atMost, atLeast, task);
        } catch (Exception e) {
            throw new AssertionError(frontEnd() + " failed on lock '" + name + "'", e);
        }
    }

    private boolean held(String name) throws Exception {
        return "1".equals(redis.command("EXISTS", RedisServer.lockKey(name)));
    }

    @Test
    void lockedTheTaskRunsAndASecondLockIsRefused() throws Exception {
        String name = name("refused");
        AtomicBoolean inner = new AtomicBoolean(true);
        AtomicBoolean innerRan = new AtomicBoolean();
        assertTrue(
                run(name, Duration.ofSeconds(30), Duration.ZERO, () -> {
                    assertHeld(name, true);
                    inner.set(run(name, Duration.ofSeconds(30), Duration.ZERO, () -> innerRan.set(true)));
                }),
                frontEnd() + ": the first lock is won");
        assertFalse(inner.get(), frontEnd() + ": the second lock is refused while the first is held");
        assertFalse(innerRan.get());
        assertFalse(held(name), frontEnd() + ": released after");
    }

    @Test
    void twoNamesAreIndependent() {
        AtomicBoolean inner = new AtomicBoolean();
        assertTrue(run(
                name("one"),
                Duration.ofSeconds(30),
                Duration.ZERO,
                () -> inner.set(run(name("two"), Duration.ofSeconds(30), Duration.ZERO, () -> {}))));
        assertTrue(inner.get(), frontEnd() + ": another name is free");
    }

    @Test
    void lockTwiceInARow() {
        String name = name("twice");
        assertTrue(run(name, Duration.ofSeconds(30), Duration.ZERO, () -> {}));
        assertTrue(run(name, Duration.ofSeconds(30), Duration.ZERO, () -> {}), frontEnd() + ": free again at once");
    }

    @Test
    void lockRightAfterUnlockTenTimes() {
        String name = name("ten");
        for (int i = 0; i < 10; i++) {
            assertTrue(run(name, Duration.ofSeconds(30), Duration.ZERO, () -> {}), frontEnd() + ": round " + i);
        }
    }

    @Test
    void aLockLapsesAfterAtMost() {
        String name = name("lapses");
        AtomicBoolean inner = new AtomicBoolean();
        assertTrue(run(name, Duration.ofMillis(50), Duration.ZERO, () -> {
            TestSupport.sleep(150);
            inner.set(run(name, Duration.ofSeconds(30), Duration.ZERO, () -> {}));
        }));
        assertTrue(inner.get(), frontEnd() + ": after atMost (50 ms) the lock is free, though its task still runs");
    }

    @Test
    void atLeastHoldsTheLockAfterTheTask() throws Exception {
        String name = name("at-least");
        assertTrue(run(name, Duration.ofSeconds(30), Duration.ofSeconds(2), () -> {}));
        assertTrue(held(name), frontEnd() + ": kept for atLeast");
        assertFalse(
                run(name, Duration.ofSeconds(30), Duration.ZERO, () -> {}), frontEnd() + ": refused within atLeast");
        TestSupport.sleep(2100);
        assertTrue(run(name, Duration.ofSeconds(30), Duration.ZERO, () -> {}), frontEnd() + ": free after atLeast");
    }

    @Test
    void eightThreadsOnTwoLocksNeverOverlap() throws Exception {
        String[] names = {name("fuzz-a"), name("fuzz-b")};
        int[] counters = new int[2]; // unsynchronized on purpose: only the lock protects them
        AtomicInteger[] inside = {new AtomicInteger(), new AtomicInteger()};
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger won = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int lock = t % 2;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < attemptsPerThread(); i++) {
                        boolean ran = run(names[lock], Duration.ofSeconds(30), Duration.ZERO, () -> {
                            if (inside[lock].incrementAndGet() > 1) {
                                overlaps.incrementAndGet();
                            }
                            int before = counters[lock];
                            Thread.yield();
                            counters[lock] = before + 1;
                            inside[lock].decrementAndGet();
                        });
                        if (ran) {
                            won.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(0, overlaps.get(), frontEnd() + ": two holders of one lock at once");
        assertEquals(
                won.get(),
                counters[0] + counters[1],
                frontEnd() + ": every won task incremented once, with no lost update");
        assertTrue(won.get() > 0);
    }

    /** How many attempts each of the 8 threads makes; a slow front end (a process each) makes fewer. */
    protected int attemptsPerThread() {
        return 50;
    }

    private void assertHeld(String name, boolean expected) {
        try {
            assertEquals(expected, held(name), frontEnd() + ": lock '" + name + "' held");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
