package dibs.robustness;

import java.util.Random;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One front end of {@link LibraryWorker}: a way of calling dibs, fired on the epoch seconds its
 * schedule names, each fire up to {@link #MAX_LATE_MS} late at random, as schedulers on several
 * hosts fire the same tick apart.
 *
 * <p>Each front end has its own pool of {@link #THREADS} threads: a call stuck in a fault (a
 * stopped Redis, a proxy that swallows packets) holds back neither another front end nor this
 * one's next fires, until every thread of the pool is stuck. The lateness and work time of each
 * fire are drawn when it is scheduled, on the one thread that schedules, so that a seed gives the
 * same sequence of them whatever the calls do.
 */
abstract class FrontEnd {
    static final int MAX_LATE_MS = 200;
    static final int THREADS = 4;

    final String name;
    private final Random random;
    private final int workMinMs;
    private final int workMaxMs;
    private final int longOneIn;
    static final int LONG_MIN_MS = 2200;
    static final int LONG_MAX_MS = 3000;
    private final ScheduledThreadPoolExecutor pool;

    /**
     * @param name the front end, {@code f} in the ledger
     * @param workMinMs the shortest work of a run
     * @param workMaxMs the longest work of a run
     * @param seed the run's seed, mixed with {@code instance} and {@code name}: instances differ,
     *     reruns with the same seed do not
     */
    FrontEnd(String name, int workMinMs, int workMaxMs, long seed, String instance) {
        this(name, workMinMs, workMaxMs, 0, seed, instance);
    }

    /**
     * As the other, and one fire in {@code longOneIn} (none for 0) works {@link #LONG_MIN_MS} to
     * {@link #LONG_MAX_MS}: longer than a tick's period, so that a later fire looks back at a tick
     * whose run still holds its lock.
     */
    FrontEnd(String name, int workMinMs, int workMaxMs, int longOneIn, long seed, String instance) {
        this.longOneIn = longOneIn;
        this.name = name;
        this.random = new Random(seed * 1_000_003L + (instance + "/" + name).hashCode());
        this.workMinMs = workMinMs;
        this.workMaxMs = workMaxMs;
        AtomicInteger threads = new AtomicInteger();
        ThreadFactory factory = r -> {
            // Named, so that a thread dump of a stuck worker says which front end is stuck.
            Thread t = new Thread(r, "fe-" + name + "-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.pool = new ScheduledThreadPoolExecutor(THREADS, factory);
    }

    /** @return whether this front end fires for the epoch second {@code second} */
    abstract boolean firesAt(long second);

    /**
     * The fire for epoch second {@code second}: one dibs call and its ledger events. Must report
     * whatever dibs throws as the call's outcome, not throw it.
     */
    abstract void fire(long second, long workMs);

    /** Schedules the fire of {@code second}, up to {@link #MAX_LATE_MS} after it on the wall clock. */
    final void schedule(long second) {
        long late = random.nextInt(MAX_LATE_MS + 1);
        long drawn = workMinMs + random.nextInt(workMaxMs - workMinMs + 1);
        long workMs = longOneIn > 0 && random.nextInt(longOneIn) == 0
                ? LONG_MIN_MS + random.nextInt(LONG_MAX_MS - LONG_MIN_MS + 1)
                : drawn;
        long delay = Math.max(0, second * 1000 + late - System.currentTimeMillis());
        pool.schedule(
                () -> {
                    try {
                        fire(second, workMs);
                    } catch (Throwable e) { // a bug of the worker: said, never lost in a Future
                        Out.line("WORKER-ERROR " + name + " " + second + " " + e);
                    }
                },
                delay,
                TimeUnit.MILLISECONDS);
    }

    /** No more fires; those scheduled still run (the executor's default after shutdown). */
    final void shutdown() {
        pool.shutdown();
    }

    /** @return whether every fire ended by {@code deadlineMs} (epoch ms) */
    final boolean awaitUntil(long deadlineMs) throws InterruptedException {
        return pool.awaitTermination(Math.max(0, deadlineMs - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
    }

    /** @return how many fires are running now */
    final int active() {
        return pool.getActiveCount();
    }
}
