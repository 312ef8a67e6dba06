package bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
 *   <li>{@code first-call-rounds HOST PORT ROUNDS [BEFORE_JAR]}: not in a fresh JVM itself, but
 *       the driver of {@code bench/run.sh --first-call-only}: bench (e) alone, dibs against
 *       ShedLock-Jedis (and dibs built from BEFORE_JAR, swapped into the class path), each
 *       {@code first-call} in a fresh JVM, in rotating order over ROUNDS rounds; prints each
 *       round and the medians, and dibs's median as a multiple of ShedLock-Jedis's.
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
        int port = mode.equals("first-call-rounds") ? -1 : Integer.parseInt(args[3]);
        switch (mode) {
            case "first-call":
                firstCall(start, name, host, port);
                break;
            case "leak":
                leak(name, host, port, Long.parseLong(args[4]), Integer.parseInt(args[5]));
                break;
            case "first-call-rounds":
                // Here args[1] is the host, args[2] the port, args[3] the rounds.
                firstCallRounds(args[1], args[2], Integer.parseInt(args[3]), args.length > 4 ? args[4] : null);
                break;
            default:
                throw new IllegalArgumentException("unknown mode " + mode);
        }
        // Lettuce's and Jedis's threads must not keep the JVM alive for long after close.
        System.exit(0);
    }

    private static void firstCall(long start, String name, String host, int port) throws Exception {
        try (Contender contender = Contender.create(name, host, port, 1);
                Contender.Caller caller =
                        contender.caller("first-call-" + ProcessHandle.current().pid())) {
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
                Thread t = new Thread(
                        () -> {
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
                        },
                        "leak-" + i);
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

    private static void firstCallRounds(String host, String port, int rounds, String beforeJar) throws Exception {
        String own = System.getProperty("java.class.path");
        // label -> {class path, contender}; each dibs build extracts into a directory of its own,
        // as one deployed version would: a build's clean-up never takes the other's copy.
        Map<String, String[]> runs = new LinkedHashMap<>();
        runs.put("dibs", new String[] {own, DibsContender.NAME});
        if (beforeJar != null) {
            runs.put("dibs (before)", new String[] {BeforeAfter.swapDibsJar(own, beforeJar), DibsContender.NAME});
        }
        runs.put(ShedLockContender.JEDIS, new String[] {own, ShedLockContender.JEDIS});
        Map<String, Path> tmpdirs = new LinkedHashMap<>();
        for (String label : runs.keySet()) {
            tmpdirs.put(label, Files.createTempDirectory("bench-first-call-"));
        }
        Map<String, List<Double>> ms = new LinkedHashMap<>();
        List<String> labels = new ArrayList<>(runs.keySet());
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < labels.size(); i++) {
                String label = labels.get((i + round) % labels.size());
                String[] run = runs.get(label);
                List<String> command = new ArrayList<>(List.of(
                        Paths.get(System.getProperty("java.home"), "bin", "java")
                                .toString(),
                        "--enable-native-access=ALL-UNNAMED",
                        "-Ddibs.native.tmpdir=" + tmpdirs.get(label)));
                String nativePath = System.getProperty("dibs.native.path");
                if (nativePath != null) {
                    command.add("-Ddibs.native.path=" + nativePath);
                }
                command.addAll(List.of("-cp", run[0], Fresh.class.getName(), "first-call", run[1], host, port));
                Map<String, String> out = spawn(command);
                double first = Long.parseLong(out.get("first_ns")) / 1e6;
                ms.computeIfAbsent(label, k -> new ArrayList<>()).add(first);
                System.out.println(
                        String.format(Locale.ROOT, "round %d  %-17s first call %7.1f ms", round + 1, label, first));
            }
        }
        for (Path dir : tmpdirs.values()) {
            try (java.util.stream.Stream<Path> files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
        double shedlock = Samples.median(toArray(ms.get(ShedLockContender.JEDIS)));
        System.out.println();
        for (Map.Entry<String, List<Double>> e : ms.entrySet()) {
            double[] v = toArray(e.getValue());
            double median = Samples.median(v);
            System.out.println(String.format(
                    Locale.ROOT,
                    "median %-17s %7.1f ms (min %.1f, max %.1f, %d rounds) = %.2fx ShedLock-Jedis",
                    e.getKey(),
                    median,
                    java.util.Arrays.stream(v).min().orElse(0),
                    java.util.Arrays.stream(v).max().orElse(0),
                    v.length,
                    median / shedlock));
        }
    }

    private static double[] toArray(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** Runs a command to its end; its key=value pairs. */
    private static Map<String, String> spawn(List<String> command) throws IOException, InterruptedException {
        Path log = Files.createTempFile("dibs-bench-", ".out");
        try {
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            if (!p.waitFor(180, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new IOException("timed out: " + String.join(" ", command));
            }
            String text = Files.readString(log);
            if (p.exitValue() != 0) {
                throw new IOException("fresh JVM failed (" + String.join(" ", command) + "):\n" + text);
            }
            return Bench.keyValues(text);
        } finally {
            Files.deleteIfExists(log);
        }
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
