package bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

/** The measuring loops, the same for every contender. */
final class Workloads {
    private static final int WARMING = 0;
    private static final int MEASURING = 1;
    private static final int STOPPED = 2;
    /** Skip latencies kept per thread in a window; far more than a thread manages in seconds. */
    private static final int MAX_SKIPS_PER_THREAD = 1 << 18;

    private Workloads() {}

    /**
     * One thread: {@code warmup} unmeasured calls, then {@code count} timed ones. Every call must
     * win ({@code expectWin}) or every call must skip, or the figures would mix two paths.
     */
    static Samples latency(Contender contender, String lockName, int warmup, int count, boolean expectWin)
            throws Exception {
        long[] nanos = new long[count];
        try (Contender.Caller caller = contender.caller(lockName)) {
            for (int i = 0; i < warmup; i++) {
                check(contender, lockName, caller.call(), expectWin);
            }
            for (int i = 0; i < count; i++) {
                long start = System.nanoTime();
                boolean won = caller.call();
                nanos[i] = System.nanoTime() - start;
                check(contender, lockName, won, expectWin);
            }
        }
        return new Samples(nanos, count);
    }

    private static void check(Contender contender, String lockName, boolean won, boolean expectWin) {
        if (won != expectWin) {
            throw new IllegalStateException(contender.name() + ": a call on '" + lockName + "' "
                    + (won ? "won a lock that another holder had" : "skipped a free lock"));
        }
    }

    /** What a multi-thread window measured. */
    static final class Window {
        final double callsPerSec;
        final long calls;
        final long wins;
        /** Latencies of the calls that skipped, when asked for; else empty. */
        final Samples skips;

        Window(double callsPerSec, long calls, long wins, Samples skips) {
            this.callsPerSec = callsPerSec;
            this.calls = calls;
            this.wins = wins;
            this.skips = skips;
        }
    }

    /**
     * {@code threads} threads call in a loop, thread i on lock {@code nameOf.apply(i)}: unmeasured
     * for {@code warmupMs} (long enough for every thread to connect), then counted for
     * {@code windowMs}. A call counts when it starts and ends inside the window.
     */
    static Window window(
            Contender contender,
            int threads,
            IntFunction<String> nameOf,
            long warmupMs,
            long windowMs,
            boolean recordSkips)
            throws Exception {
        PhaseFlag phase = new PhaseFlag();
        CountDownLatch ready = new CountDownLatch(threads);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Worker w = new Worker(contender, nameOf.apply(i), phase, ready, failure, recordSkips);
            workers.add(w);
            w.thread.start();
        }
        ready.await();
        Thread.sleep(warmupMs);
        phase.value = MEASURING;
        long start = System.nanoTime();
        Thread.sleep(windowMs);
        phase.value = STOPPED;
        long elapsed = System.nanoTime() - start;
        long calls = 0;
        long wins = 0;
        long[] skipped = new long[0];
        int skipCount = 0;
        for (Worker w : workers) {
            w.thread.join();
            calls += w.calls;
            wins += w.wins;
            if (recordSkips) {
                if (skipCount + w.skipCount > skipped.length) {
                    skipped = Arrays.copyOf(skipped, Math.max(2 * skipped.length, skipCount + w.skipCount));
                }
                System.arraycopy(w.skipNanos, 0, skipped, skipCount, w.skipCount);
                skipCount += w.skipCount;
            }
        }
        if (failure.get() != null) {
            throw new IllegalStateException(contender.name() + " failed with " + threads + " threads", failure.get());
        }
        return new Window(calls / (elapsed / 1e9), calls, wins, new Samples(skipped, skipCount));
    }

    private static final class PhaseFlag {
        volatile int value = WARMING;
    }

    private static final class Worker implements Runnable {
        final Thread thread;
        private final Contender contender;
        private final String lockName;
        private final PhaseFlag phase;
        private final CountDownLatch ready;
        private final AtomicReference<Throwable> failure;
        private final long[] skipNanos;
        long calls;
        long wins;
        int skipCount;

        Worker(
                Contender contender,
                String lockName,
                PhaseFlag phase,
                CountDownLatch ready,
                AtomicReference<Throwable> failure,
                boolean recordSkips) {
            this.contender = contender;
            this.lockName = lockName;
            this.phase = phase;
            this.ready = ready;
            this.failure = failure;
            this.skipNanos = new long[recordSkips ? MAX_SKIPS_PER_THREAD : 0];
            this.thread = new Thread(this, "bench-" + lockName);
        }

        @Override
        public void run() {
            boolean counted = false;
            try (Contender.Caller caller = contender.caller(lockName)) {
                ready.countDown();
                counted = true;
                int p;
                while ((p = phase.value) != STOPPED && failure.get() == null) {
                    long start = System.nanoTime();
                    boolean won = caller.call();
                    long took = System.nanoTime() - start;
                    if (p == MEASURING && phase.value == MEASURING) {
                        calls++;
                        if (won) {
                            wins++;
                        } else if (skipCount < skipNanos.length) {
                            skipNanos[skipCount++] = took;
                        }
                    }
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            } finally {
                if (!counted) {
                    ready.countDown();
                }
            }
        }
    }
}
