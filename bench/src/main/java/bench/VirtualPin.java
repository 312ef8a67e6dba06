package bench;

import dibs.Dibs;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * (f) virtual threads, in a JVM of its own on Java 21+ (bench/run.sh uses JDK 25) with
 * {@code -Djdk.virtualThreadScheduler.parallelism=2 -Djdk.virtualThreadScheduler.maxPoolSize=2}:
 * THREADS virtual threads each run {@code Dibs.execute(uri, "pin-" + i, 30, 0, task)} whose task
 * sleeps SLEEP_MS. A caller pinned to its carrier for the whole call (a native frame on its stack
 * while the task runs) holds one of the 2 carriers through the sleep, so 8 calls take 4 sleeps;
 * a caller that parks takes about one sleep. The same sleeps without dibs are the floor.
 * Virtual threads are started by reflection, so that the harness still compiles for Java 17.
 *
 * <p>Usage: {@code VirtualPin URI THREADS SLEEP_MS}; prints one line of key=value pairs.
 */
final class VirtualPin {
    static final int THREADS = 8;
    static final long SLEEP_MS = 1000;
    static final List<String> FLAGS =
            List.of("-Djdk.virtualThreadScheduler.parallelism=2", "-Djdk.virtualThreadScheduler.maxPoolSize=2");

    private VirtualPin() {}

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        int threads = Integer.parseInt(args[1]);
        long sleepMs = Long.parseLong(args[2]);
        // Unmeasured: the native library, the pool and its connection, and a first virtual caller
        // (which starts whatever the library keeps for virtual callers).
        if (!Dibs.execute(uri, "pin-warm", 30, 0, () -> {})) {
            throw new IllegalStateException("a warm-up call skipped a free lock");
        }
        run(1, i -> Dibs.execute(uri, "pin-warm", 30, 0, () -> {}));

        long plainNs = run(threads, i -> sleep(sleepMs));
        long dibsNs = run(threads, i -> {
            if (!Dibs.execute(uri, "pin-" + i, 30, 0, () -> sleep(sleepMs))) {
                throw new IllegalStateException("pin-" + i + " was skipped: the lock was held");
            }
        });
        System.out.println("plain_ms=" + plainNs / 1e6 + " dibs_ms=" + dibsNs / 1e6 + " java="
                + System.getProperty("java.runtime.version") + " parallelism="
                + System.getProperty("jdk.virtualThreadScheduler.parallelism") + " max_pool_size="
                + System.getProperty("jdk.virtualThreadScheduler.maxPoolSize"));
        System.exit(0);
    }

    interface Body {
        void run(int i) throws Exception;
    }

    /** Starts {@code threads} virtual threads on {@code body} at once; the wall time until all have ended. */
    private static long run(int threads, Body body) throws Exception {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> started = new ArrayList<>();
        long begin = System.nanoTime();
        for (int i = 0; i < threads; i++) {
            int index = i;
            Runnable r = () -> {
                try {
                    body.run(index);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            };
            started.add((Thread) start.invoke(builder, r));
        }
        for (Thread t : started) {
            t.join();
        }
        long took = System.nanoTime() - begin;
        if (failure.get() != null) {
            throw new IllegalStateException("a virtual caller failed", failure.get());
        }
        return took;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
