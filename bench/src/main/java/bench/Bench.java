package bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import redis.clients.jedis.Jedis;

/**
 * dibs side by side with ShedLock, Redisson and the raw Redis limit, against one redis-server that
 * bench/run.sh started for this run. Every workload runs every contender, in alternating order
 * over {@code --rounds} rounds; the tables show medians over rounds. Prints figures as it goes,
 * then writes bench/results/results.md and the CSVs behind the plots.
 *
 * <p>Usage: {@code Bench --port P [--host H] [--rounds N] [--window-ms MS] [--samples N]
 * [--leak-calls N] [--leak-all] [--pinning TEXT] [--jdk25 JAVA] [--out DIR]}
 */
public final class Bench {
    private static final int MAX_THREADS = 64;
    static final int CYCLE_WARMUP = 2_000;
    static final int SKIP_SAMPLES = 10_000;
    private static final String HELD = "held-elsewhere";
    private static final long SPAWN_TIMEOUT_S = 180;
    /** A point during which other processes used more of the machine than this is measured again. */
    private static final double MAX_OTHERS = 0.10;
    /** At most this many points measured again per run, and per point, to bound the run time. */
    private static final int MAX_REMEASURES = 12;

    private static final int MAX_REMEASURES_PER_POINT = 2;

    private final BenchOptions opt;
    private final Results results = new Results();
    private final Map<String, Contender> contenders = new LinkedHashMap<>();
    private final List<Double> othersShares = new ArrayList<>();
    private CpuMonitor cpu;
    private int remeasures;

    private Bench(BenchOptions opt) {
        this.opt = opt;
    }

    public static void main(String[] args) throws Exception {
        BenchOptions opt = BenchOptions.parse(args);
        Bench bench = new Bench(opt);
        try {
            bench.run();
        } finally {
            bench.contenders.values().forEach(Contender::close);
        }
        System.exit(0);
    }

    private void run() throws Exception {
        long start = System.nanoTime();
        describeSetup();
        for (String name : Contender.NAMES) {
            contenders.put(name, Contender.create(name, opt.host, opt.port, MAX_THREADS));
        }
        holdElsewhere();
        warmUp();
        uncontended();
        throughput();
        contended();
        firstCall();
        virtualThreads();
        leakCheck();

        double[] shares = othersShares.stream().mapToDouble(Double::doubleValue).toArray();
        results.setup.put(
                "CPU taken by other processes while measuring",
                String.format(
                        "median %.1f%%, max %.1f%% of the machine over %d points; %d point(s) measured again for"
                                + " exceeding %.0f%% (at most %d per point, %d per run)",
                        100 * Samples.median(shares),
                        100 * java.util.Arrays.stream(shares).max().orElse(0),
                        shares.length,
                        remeasures,
                        100 * MAX_OTHERS,
                        MAX_REMEASURES_PER_POINT,
                        MAX_REMEASURES));
        results.setup.put("scripts", scriptStats());
        results.setup.put("CPU pressure at end (this run's own threads included)", cpuPressure());
        results.setup.put(
                "run time", String.format("%.0f s (harness only, builds excluded)", (System.nanoTime() - start) / 1e9));
        String markdown = new Report(results).write(opt.out);
        System.out.println();
        System.out.println(markdown);
        System.out.println("wrote " + opt.out.resolve("results.md") + " and the CSVs beside it");
    }

    private void uncontended() throws Exception {
        section("(a) uncontended cycle, 1 thread, and the skip path on a held lock, 1 thread");
        for (int round = 0; round < opt.rounds; round++) {
            for (Contender c : order(round)) {
                CallCpu.Counted cycle = measured(
                        c.name() + " cycle",
                        () -> CallCpu.latency(opt.host, opt.port, c, "cycle", CYCLE_WARMUP, opt.samples, true));
                CallCpu.Counted held = measured(
                        c.name() + " skip",
                        () -> CallCpu.latency(opt.host, opt.port, c, HELD, CYCLE_WARMUP / 2, SKIP_SAMPLES, false));
                Samples s = cycle.samples;
                Samples skip = held.samples;
                Results.add(results.cycle, c.name(), s);
                Results.add(results.heldSkip, c.name(), skip);
                Results.add(results.cycleServerUs, c.name(), cycle.cpu.serverUs);
                Results.add(results.skipServerUs, c.name(), held.cpu.serverUs);
                print(
                        "round %d  %-17s cycle p50 %7.1f µs  p99 %7.1f µs | skip p50 %7.1f µs  p99 %7.1f µs",
                        round + 1, c.name(), s.p50(), s.p99(), skip.p50(), skip.p99());
            }
            redisBenchmark(round, 1);
        }
    }

    private void throughput() throws Exception {
        section("(b) throughput, distinct lock names");
        for (int threads : Results.THREADS) {
            Map<String, List<Double>> byContender =
                    results.throughput.computeIfAbsent(threads, k -> new LinkedHashMap<>());
            for (int round = 0; round < opt.rounds; round++) {
                for (Contender c : order(round)) {
                    String prefix = "tp" + threads + "-";
                    Workloads.Window w = measured(
                            c.name() + ", " + threads + " threads",
                            () -> Workloads.window(c, threads, i -> prefix + i, opt.warmupMs, opt.windowMs, false));
                    if (w.wins != w.calls) {
                        throw new IllegalStateException(
                                c.name() + " skipped " + (w.calls - w.wins) + " calls on distinct, free lock names");
                    }
                    Results.add(byContender, c.name(), w.callsPerSec);
                    print("round %d  %2d threads  %-17s %,9.0f cycles/s", round + 1, threads, c.name(), w.callsPerSec);
                }
                if (threads > 1) {
                    redisBenchmark(round, threads);
                }
            }
        }
    }

    private void contended() throws Exception {
        section("(c) contended: " + Results.CONTENDED_THREADS + " threads on one lock name");
        for (int round = 0; round < opt.rounds; round++) {
            for (Contender c : order(round)) {
                Workloads.Window w = measured(
                        c.name() + ", contended",
                        () -> Workloads.window(
                                c, Results.CONTENDED_THREADS, i -> "contended", opt.warmupMs, opt.windowMs, true));
                Results.add(results.contended, c.name(), w);
                print(
                        "round %d  %-17s %,9.0f calls/s, %5.1f%% won | skipped calls p50 %7.1f µs  p99 %7.1f µs",
                        round + 1, c.name(), w.callsPerSec, 100.0 * w.wins / w.calls, w.skips.p50(), w.skips.p99());
            }
        }
    }

    private void firstCall() throws Exception {
        section("(e) first call in a fresh JVM: class and library loading, pool or factory, connect, first cycle");
        for (int round = 0; round < opt.rounds; round++) {
            for (Contender c : order(round)) {
                double[] f = measured(c.name() + " first call", () -> {
                    long spawned = System.nanoTime();
                    Map<String, String> out =
                            spawn(List.of(), "first-call", c.name(), opt.host, Integer.toString(opt.port));
                    double wall = (System.nanoTime() - spawned) / 1e6;
                    return new double[] {
                        Long.parseLong(out.get("first_ns")) / 1e6, Long.parseLong(out.get("second_ns")) / 1e3, wall
                    };
                });
                Results.add(results.firstCall, c.name(), f);
                print(
                        "round %d  %-17s first call %7.1f ms (second %7.1f µs), whole JVM %7.1f ms",
                        round + 1, c.name(), f[0], f[1], f[2]);
            }
        }
    }

    private void virtualThreads() throws Exception {
        if (opt.jdk25 == null) {
            section("(f) virtual threads: skipped (no --jdk25)");
            return;
        }
        section("(f) virtual threads: " + VirtualPin.THREADS + " virtual threads on 2 carriers, each a dibs call whose"
                + " task sleeps " + VirtualPin.SLEEP_MS + " ms, in a fresh JVM on " + opt.jdk25);
        for (int round = 0; round < opt.rounds; round++) {
            double[] f = measured("virtual threads", () -> {
                Map<String, String> out = spawnWith(
                        opt.jdk25,
                        VirtualPin.class.getName(),
                        VirtualPin.FLAGS,
                        "redis://" + opt.host + ":" + opt.port,
                        Integer.toString(VirtualPin.THREADS),
                        Long.toString(VirtualPin.SLEEP_MS));
                return new double[] {Double.parseDouble(out.get("dibs_ms")), Double.parseDouble(out.get("plain_ms"))};
            });
            results.virtual.add(f);
            print("round %d  %,6.0f ms with dibs, %,6.0f ms without: %.2f×", round + 1, f[0], f[1], f[0] / f[1]);
        }
    }

    private void leakCheck() throws Exception {
        section("(d) leak check: " + String.format("%,d", opt.leakCalls) + " cycles in a fresh JVM, RSS after "
                + String.format("%,d", Fresh.RSS_MARK) + " and at the end");
        results.leakCalls = opt.leakCalls;
        List<String> leakers = opt.leakAll
                ? List.of(DibsContender.NAME, ShedLockContender.JEDIS, ShedLockContender.LETTUCE)
                : List.of(DibsContender.NAME);
        for (String name : leakers) {
            // A heap of fixed, pre-touched size: RSS then moves with native memory, not heap growth.
            Map<String, String> out = spawn(
                    List.of("-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch"),
                    "leak",
                    name,
                    opt.host,
                    Integer.toString(opt.port),
                    Long.toString(opt.leakCalls),
                    Integer.toString(Results.CONTENDED_THREADS));
            long[] kb = {Long.parseLong(out.get("rss_mark_kb")), Long.parseLong(out.get("rss_end_kb"))};
            results.leak.put(name, kb);
            print(
                    "%-17s RSS %,d kB at %,d calls, %,d kB at %,d: %+.1f MB (%.0f s)",
                    name,
                    kb[0],
                    Fresh.RSS_MARK,
                    kb[1],
                    opt.leakCalls,
                    results.rssGrowthMb(name),
                    Double.parseDouble(out.get("seconds")));
        }
    }

    private void describeSetup() throws IOException {
        String info;
        try (Jedis jedis = new Jedis(opt.host, opt.port)) {
            info = jedis.info("server");
        }
        String version = infoField(info, "redis_version:");
        cpu = new CpuMonitor(Long.parseLong(infoField(info, "process_id:")));
        Map<String, String> s = results.setup;
        s.put("redis-server", version + " on " + opt.host + ":" + opt.port + " (started by bench/run.sh for this run)");
        s.put(
                "JVM",
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version") + ", "
                        + Runtime.getRuntime().availableProcessors() + " CPU(s) visible to it");
        s.put("machine", cpuModel());
        s.put("libraries", versions());
        s.put("dibs native library", System.getProperty("dibs.native.path", "the one inside the installed jar"));
        s.put("pinning", opt.pinning);
        s.put("rounds", opt.rounds + ", contenders in alternating order; tables show medians over rounds");
        s.put(
                "lock parameters",
                "atMost " + Contender.AT_MOST_SEC + " s, atLeast 0 (every won cycle deletes its" + " key), no-op task");
        s.put(
                "(a)",
                String.format(
                        "%,d timed cycles per round after %,d warm-up calls; skip path: %,d on a lock"
                                + " held by another value",
                        opt.samples, CYCLE_WARMUP, SKIP_SAMPLES));
        s.put("(b), (c)", String.format("%d ms window per point after %d ms unmeasured", opt.windowMs, opt.warmupMs));
        if (opt.jdk25 != null) {
            s.put(
                    "(f)",
                    "dibs only, a fresh JVM per round on " + opt.jdk25 + " with " + String.join(" ", VirtualPin.FLAGS)
                            + ": " + VirtualPin.THREADS
                            + " virtual threads each run `Dibs.execute(uri, \"pin-\" + i, 30, 0, task)`,"
                            + " the task sleeping " + VirtualPin.SLEEP_MS + " ms; then the same sleeps without dibs");
        }
        s.put("CPU pressure before the run", cpuPressure());
        System.out.println("== dibs benchmark");
        s.forEach((k, v) -> System.out.println(k + ": " + v));
    }

    /** The benchmark-only dependencies' versions, as bench/pom.xml set them. */
    private static String versions() {
        java.util.Properties p = new java.util.Properties();
        try (java.io.InputStream in = Bench.class.getResourceAsStream("/bench-versions.properties")) {
            if (in == null) {
                return "unknown";
            }
            p.load(in);
        } catch (IOException e) {
            return "unknown";
        }
        return "ShedLock " + p.getProperty("shedlock") + ", Spring Data Redis " + p.getProperty("spring-data-redis")
                + ", Lettuce " + p.getProperty("lettuce") + ", Jedis " + p.getProperty("jedis") + ", Redisson "
                + p.getProperty("redisson");
    }

    static String infoField(String info, String prefix) {
        return info.lines()
                .filter(l -> l.startsWith(prefix))
                .findFirst()
                .map(l -> l.substring(prefix.length()).trim())
                .orElseThrow();
    }

    /** "2 CPUs, AMD EPYC ..." from /proc/cpuinfo: the whole machine, not what the pinned JVM sees. */
    private static String cpuModel() {
        try {
            List<String> lines = Files.readAllLines(Paths.get("/proc/cpuinfo"));
            long cpus = lines.stream().filter(l -> l.startsWith("processor")).count();
            String model = lines.stream()
                    .filter(l -> l.startsWith("model name"))
                    .findFirst()
                    .map(l -> l.substring(l.indexOf(':') + 1).trim())
                    .orElse("unknown model");
            return cpus + " CPU(s), " + model;
        } catch (IOException e) {
            return "unknown CPU";
        }
    }

    /**
     * Runs one measurement; if other processes took more than {@link #MAX_OTHERS} of the machine
     * meanwhile, runs it again (within the run's budget) and keeps the last one.
     */
    private <T> T measured(String what, Callable<T> body) throws Exception {
        for (int attempt = 0; ; attempt++) {
            CpuMonitor.Reading before = cpu.read();
            T result = body.call();
            double others = CpuMonitor.othersShare(before, cpu.read());
            if (others <= MAX_OTHERS || remeasures >= MAX_REMEASURES || attempt >= MAX_REMEASURES_PER_POINT) {
                othersShares.add(others);
                return result;
            }
            remeasures++;
            print("  (%s: other processes took %.0f%% of the machine; measuring again)", what, 100 * others);
        }
    }

    /**
     * The kernel's CPU pressure (the share of time some task waited for a CPU over the last 10,
     * 60 and 300 s) and the load averages: other work on the machine shows up here, and skews
     * the figures.
     */
    private static String cpuPressure() {
        try {
            String some = Files.readAllLines(Paths.get("/proc/pressure/cpu")).get(0);
            String[] load = Files.readString(Paths.get("/proc/loadavg")).trim().split(" ");
            return some.replaceFirst("^some ", "").replaceFirst(" total=.*", "") + "; load averages " + load[0] + " "
                    + load[1] + " " + load[2];
        } catch (IOException | RuntimeException e) {
            return "unknown (" + e + ")";
        }
    }

    /**
     * EVALSHA and EVAL counts from the server: a NOSCRIPT on every release would double its round
     * trips, so the misses must stay at one per script user.
     */
    private String scriptStats() {
        String stats;
        try (Jedis jedis = new Jedis(opt.host, opt.port)) {
            stats = jedis.info("commandstats");
        }
        return String.format(
                "EVALSHA %s; EVAL %s (dibs, raw Jedis and ShedLock-Lettuce release with EVALSHA and"
                        + " fall back to EVAL on NOSCRIPT, so failed EVALSHAs are script misses; ShedLock-Jedis sends"
                        + " the script with EVAL on every release, as ShedLock's Jedis provider does; Redisson runs both its"
                        + " acquire and its release as scripts)",
                commandStat(stats, "evalsha"), commandStat(stats, "eval"));
    }

    /** "N calls, M failed" for one command of INFO commandstats. */
    private static String commandStat(String stats, String command) {
        String line = stats.lines()
                .filter(l -> l.startsWith("cmdstat_" + command + ":"))
                .findFirst()
                .orElse("");
        return field(line, "calls") + " calls, " + field(line, "failed_calls") + " failed";
    }

    private static String field(String line, String name) {
        for (String pair : line.substring(line.indexOf(':') + 1).split(",")) {
            if (pair.startsWith(name + "=")) {
                return String.format("%,d", Long.parseLong(pair.substring(name.length() + 1)));
            }
        }
        return "0";
    }

    /** Lock {@link #HELD} of every contender is held by someone else, for the skip path. */
    private void holdElsewhere() {
        try (Jedis jedis = new Jedis(opt.host, opt.port)) {
            for (Contender c : contenders.values()) {
                c.holdElsewhere(jedis, HELD, 3_600_000);
            }
        }
    }

    /** Enough calls for the JIT to compile every contender's path, on 1 and on 16 threads. */
    private void warmUp() throws Exception {
        section("warm-up (unmeasured)");
        for (Contender c : contenders.values()) {
            Workloads.latency(c, "warm-up", 10_000, 1, true);
            Workloads.latency(c, HELD, 5_000, 1, false);
            Workloads.window(c, 16, i -> "warm-up-" + i, 500, 500, false);
            print("%-17s warmed up", c.name());
        }
    }

    /** Round 1 in the table's order, round 2 reversed, and so on. */
    private List<Contender> order(int round) {
        List<Contender> list = new ArrayList<>(contenders.values());
        if (round % 2 == 1) {
            Collections.reverse(list);
        }
        return list;
    }

    private void redisBenchmark(int round, int clients) throws Exception {
        RedisBenchmark.Result r =
                measured("redis-benchmark -c " + clients, () -> RedisBenchmark.run(opt.host, opt.port, clients));
        results.redisBenchmark.computeIfAbsent(clients, k -> new ArrayList<>()).add(r);
        print(
                "round %d  %2d clients  redis-benchmark SET %,9.0f req/s, p50 %5.0f µs, p99 %5.0f µs",
                round + 1, clients, r.rps, r.p50, r.p99);
    }

    /** Runs {@link Fresh} in a new JVM (pinned like this one) and parses its key=value line. */
    private Map<String, String> spawn(List<String> jvmFlags, String... args) throws IOException, InterruptedException {
        return spawnWith(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                Fresh.class.getName(),
                jvmFlags,
                args);
    }

    /** Runs {@code mainClass} with {@code java} in a new JVM (pinned like this one); its key=value pairs. */
    private Map<String, String> spawnWith(String java, String mainClass, List<String> jvmFlags, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(java);
        command.add("--enable-native-access=ALL-UNNAMED");
        // A library chosen for this run (BENCH_JAVA_OPTS in run.sh) is the one the fresh JVMs load too.
        String nativePath = System.getProperty("dibs.native.path");
        if (nativePath != null) {
            command.add("-Ddibs.native.path=" + nativePath);
        }
        command.addAll(jvmFlags);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(List.of(args));
        // Output to a file, so that a chatty child can never block on a full pipe.
        Path log = Files.createTempFile("dibs-bench-", ".out");
        String text;
        try {
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            if (!p.waitFor(SPAWN_TIMEOUT_S, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new IOException("timed out after " + SPAWN_TIMEOUT_S + " s: " + String.join(" ", args));
            }
            text = Files.readString(log);
            if (p.exitValue() != 0) {
                throw new IOException("fresh JVM failed (" + String.join(" ", args) + "):\n" + text);
            }
        } finally {
            Files.deleteIfExists(log);
        }
        return keyValues(text);
    }

    /** The {@code key=value} pairs a child JVM printed, separated by spaces or lines. */
    static Map<String, String> keyValues(String text) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            for (String pair : line.trim().split(" ")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    values.put(pair.substring(0, eq), pair.substring(eq + 1));
                }
            }
        }
        return values;
    }

    private static void section(String title) {
        System.out.println();
        System.out.println("== " + title);
    }

    private static void print(String format, Object... args) {
        System.out.println(String.format(format, args));
    }
}
