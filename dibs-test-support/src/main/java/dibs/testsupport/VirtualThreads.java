package dibs.testsupport;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Virtual threads for tests that compile for Java 11 (started by reflection, Java 21+), and the
 * measure of their starvation: a virtual ticker's largest gap while other virtual threads wait.
 */
public final class VirtualThreads {
    private VirtualThreads() {}

    /** Starts {@code task} on a new virtual thread. */
    public static Thread start(Runnable task) {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
            return (Thread) start.invoke(builder, task);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("no virtual threads on " + Runtime.version(), e);
        }
    }

    /** Runs each task on its own virtual thread; returns the wall time until all are done. */
    public static Duration run(List<Runnable> tasks) throws InterruptedException {
        long start = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (Runnable t : tasks) {
            threads.add(start(t));
        }
        for (Thread t : threads) {
            t.join();
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }

    public static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Runs {@code callers} on virtual threads beside a virtual ticker that sleeps 10 ms at a
     * time; returns the ticker's largest gap.
     */
    public static long largestTickerGapMs(String what, List<Runnable> callers) throws InterruptedException {
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong largestGapNs = new AtomicLong();
        Thread ticker = start(() -> {
            long last = System.nanoTime();
            while (!done.get()) {
                sleep(10);
                long now = System.nanoTime();
                largestGapNs.accumulateAndGet(now - last, Math::max);
                last = now;
            }
        });
        Duration waited = run(callers);
        done.set(true);
        ticker.join();
        long gapMs = Duration.ofNanos(largestGapNs.get()).toMillis();
        System.out.printf(
                "Redis frozen, Java %d: %s waited %d ms; a 10 ms ticker's largest gap: %d ms%n",
                Runtime.version().feature(), what, waited.toMillis(), gapMs);
        return gapMs;
    }

    public static void assertTickerKeptTicking(long gapMs) {
        // Pinned carriers would stall it for the whole read timeout (1500 ms); a third of
        // that leaves room for the scheduling noise of a loaded 2-core machine (57 ms seen).
        // Not under qemu, whose JIT and GC pauses alone exceeded it once (CI, aarch64).
        if (!Boolean.getBoolean("dibs.test.emulated")) {
            assertTrue(gapMs < 500, "the ticker stalled for " + gapMs + " ms");
        }
    }
}
