package bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What runs in a fresh JVM, spawned by {@link Bench} once per contender and round, so that
 * nothing loaded or allocated by another contender is counted. It prints one line of
 * {@code key=value} pairs.
 *
 * <ul>
 *   <li>{@code first-call NAME HOST PORT}: the time to build the contender (pools, factories) and
 *       make its first call, class loading and native library loading included; then a second
 *       call for comparison.
 *   <li>{@code leak NAME HOST PORT CALLS THREADS}: CALLS full lock cycles over THREADS threads on
 *       distinct lock names; the process's RSS after {@link #RSS_MARK} calls and at the end.
 * </ul>
 */
final class Fresh {
    static final long RSS_MARK = 100_000;

    private Fresh() {}

    public static void main(String[] args) throws Exception {
        long start = System.nanoTime();
        String mode = args[0];
        String name = args[1];
        String host = args[2];
        int port = Integer.parseInt(args[3]);
        switch (mode) {
            case "first-call":
                firstCall(start, name, host, port);
                break;
            case "leak":
                leak(name, host, port, Long.parseLong(args[4]), Integer.parseInt(args[5]));
                break;
            default:
                throw new IllegalArgumentException("unknown mode " + mode);
        }
        // Lettuce's and Jedis's threads must not keep the JVM alive for long after close.
        System.exit(0);
    }

    private static void firstCall(long start, String name, String host, int port) throws Exception {
        try (Contender contender = Contender.create(name, host, port, 1);
                Contender.Caller caller = contender.caller("first-call-" + ProcessHandle.current().pid())) {
            boolean won = caller.call();
            long first = System.nanoTime() - start;
            long secondStart = System.nanoTime();
            won &= caller.call();
            long second = System.nanoTime() - secondStart;
            if (!won) {
                throw new IllegalStateException(name + ": a first call on a fresh lock name did not win");
            }
            System.out.println("first_ns=" + first + " second_ns=" + second);
        }
    }

    private static void leak(String name, String host, int port, long calls, int threads) throws Exception {
        AtomicLong issued = new AtomicLong();
        AtomicLong rssAtMark = new AtomicLong(-1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long start = System.nanoTime();
        long rssAtEnd;
        try (Contender contender = Contender.create(name, host, port, threads)) {
            List<Thread> workers = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                String lockName = "leak-" + i;
                Thread t = new Thread(() -> {
                    try (Contender.Caller caller = contender.caller(lockName)) {
                        long n;
                        while ((n = issued.incrementAndGet()) <= calls && failure.get() == null) {
                            if (!caller.call()) {
                                throw new IllegalStateException(name + " skipped free lock " + lockName);
                            }
                            if (n == RSS_MARK) {
                                rssAtMark.set(rssKb());
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "leak-" + i);
                workers.add(t);
                t.start();
            }
            for (Thread t : workers) {
                t.join();
            }
            rssAtEnd = rssKb(); // before close, which frees the contender's pools
        }
        if (failure.get() != null) {
            throw new IllegalStateException(name + " failed in the leak check", failure.get());
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.println("rss_mark_kb=" + rssAtMark.get() + " rss_end_kb=" + rssAtEnd + " seconds=" + seconds);
    }

    /** VmRSS of this process, in kB. */
    static long rssKb() throws IOException {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IOException("no VmRSS in /proc/self/status");
    }
}
