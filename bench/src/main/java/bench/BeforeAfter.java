package bench;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import redis.clients.jedis.Jedis;

/**
 * Two builds of dibs side by side in one run, against the same redis-server: (a)-(c)
 * ({@link DibsRound}) and (f) ({@link VirtualPin}) for each build, each in a JVM of its own (both
 * jars hold the same classes), interleaved round by round with the order alternating (before,
 * after; after, before; ...). Writes before-after.md and before-after.csv, and appends the section
 * to results.md when there is one (replacing one from an earlier run).
 *
 * <p>Usage: {@code BeforeAfter --port P --before-jar JAR --before-label TEXT --after-label TEXT
 * [--jdk25 JAVA] [--rounds N] [--samples N] [--warmup-ms MS] [--window-ms MS] [--out DIR]
 * [--history-off after|both]}. The "after" build is the dibs jar on this JVM's class path;
 * "before" swaps in --before-jar. {@code --history-off} runs (a)-(c) with the run history off: in
 * the after build (to compare with a build from before the history), or in both.
 */
public final class BeforeAfter {
    private static final long SPAWN_TIMEOUT_S = 180;
    private static final int PIN_THREADS = VirtualPin.THREADS;
    private static final long PIN_SLEEP_MS = VirtualPin.SLEEP_MS;
    /** The control arm (--control true): the after build again, in JVMs of its own, as a third build. */
    private static final String AGAIN = "after again";

    /** A figure of the table: its key in the children's output, its label, and which way is better. */
    private static final class Figure {
        final String key;
        final String workload;
        final String label;
        final boolean lowerIsBetter;
        final int decimals;

        Figure(String key, String workload, String label, boolean lowerIsBetter, int decimals) {
            this.key = key;
            this.workload = workload;
            this.label = label;
            this.lowerIsBetter = lowerIsBetter;
            this.decimals = decimals;
        }
    }

    private static final List<Figure> FIGURES = List.of(
            new Figure("a_cycle_p50_us", "(a) uncontended, 1 thread", "cycle p50, µs", true, 1),
            new Figure("a_cycle_p99_us", "", "cycle p99, µs", true, 1),
            new Figure("skip_p50_us", "skip path, 1 thread, held lock", "p50, µs", true, 1),
            new Figure("skip_p99_us", "", "p99, µs", true, 1),
            new Figure("a_cycle_client_cpu_us", "CPU per call, 1 thread", "cycle: the calling thread, µs", true, 2),
            new Figure("a_cycle_server_cpu_us", "", "cycle: redis-server, µs", true, 2),
            new Figure("skip_client_cpu_us", "", "skip: the calling thread, µs", true, 2),
            new Figure("skip_server_cpu_us", "", "skip: redis-server, µs", true, 2),
            new Figure("b_1_cycles_per_s", "(b) throughput, distinct names", "1 thread, cycles/s", false, 0),
            new Figure("b_4_cycles_per_s", "", "4 threads, cycles/s", false, 0),
            new Figure("b_16_cycles_per_s", "", "16 threads, cycles/s", false, 0),
            new Figure("b_64_cycles_per_s", "", "64 threads, cycles/s", false, 0),
            new Figure("c_skip_p50_us", "(c) contended, 16 threads, one name", "skipped calls p50, µs", true, 1),
            new Figure("c_skip_p99_us", "", "skipped calls p99, µs", true, 1),
            new Figure("c_calls_per_s", "", "calls/s", false, 0),
            new Figure(
                    "f_dibs_ms",
                    "(f) 8 virtual threads, 2 carriers, task sleeps 1 s",
                    "wall time with dibs, ms",
                    true,
                    0),
            new Figure("f_plain_ms", "", "wall time without dibs (the sleeps alone), ms", true, 0),
            new Figure("f_ratio", "", "with / without dibs", true, 2),
            new Figure(
                    "others_pct", "noise", "CPU of other processes during the (a)-(c) JVM, % of the machine", true, 1));

    private final Map<String, String> opt;
    private final String host;
    private final int port;
    private final CpuMonitor cpu;
    /** version ("before", "after") -> figure -> one value per round. */
    private final Map<String, Map<String, List<Double>>> values = new LinkedHashMap<>();
    /** The share of the machine other processes took while each child ran, by version. */
    private final Map<String, List<Double>> others = new LinkedHashMap<>();

    private BeforeAfter(Map<String, String> opt) {
        this.opt = opt;
        this.host = opt.getOrDefault("--host", "127.0.0.1");
        this.port = Integer.parseInt(required(opt, "--port"));
        String info;
        try (Jedis jedis = new Jedis(host, port)) {
            info = jedis.info("server");
        }
        this.cpu = new CpuMonitor(Long.parseLong(Bench.infoField(info, "process_id:")));
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            opt.put(args[i], args[i + 1]);
        }
        new BeforeAfter(opt).run();
        System.exit(0);
    }

    private static String required(Map<String, String> opt, String name) {
        String v = opt.get(name);
        if (v == null) {
            throw new IllegalArgumentException(name + " is required");
        }
        return v;
    }

    private void run() throws Exception {
        long start = System.nanoTime();
        int rounds = Integer.parseInt(opt.getOrDefault("--rounds", "3"));
        String jdk25 = opt.get("--jdk25");
        Map<String, String> classpaths = new LinkedHashMap<>();
        String own = System.getProperty("java.class.path");
        classpaths.put("before", swapDibsJar(own, required(opt, "--before-jar")));
        classpaths.put("after", own);
        boolean control = Boolean.parseBoolean(opt.getOrDefault("--control", "false"));
        if (control) {
            classpaths.put(AGAIN, own);
        }
        List<String> versions = List.copyOf(classpaths.keySet());
        System.out.println();
        System.out.println("== before/after: " + opt.get("--before-label") + " against " + opt.get("--after-label")
                + ", " + rounds + " rounds, each build in JVMs of its own");
        for (int round = 0; round < rounds; round++) {
            List<String> order = new ArrayList<>(versions);
            if (control) { // each build first, second and third in turn
                Collections.rotate(order, -round);
            } else if (round % 2 == 1) {
                Collections.reverse(order);
            }
            for (String version : order) {
                String cp = classpaths.get(version);
                List<String> flags = new ArrayList<>(List.of("-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"));
                String historyOff = opt.getOrDefault("--history-off", "");
                String build = version.equals(AGAIN) ? "after" : version;
                if (historyOff.equals("both") || historyOff.equals(build)) {
                    flags.add("-D" + DibsContender.HISTORY_PROPERTY + "=false");
                }
                Map<String, String> abc = spawn(
                        version,
                        javaHere(),
                        flags,
                        cp,
                        DibsRound.class.getName(),
                        host,
                        Integer.toString(port),
                        opt.getOrDefault("--samples", "20000"),
                        opt.getOrDefault("--warmup-ms", "500"),
                        opt.getOrDefault("--window-ms", "2000"));
                abc.forEach((k, v) -> add(version, k, Double.parseDouble(v)));
                List<Double> shares = others.get(version);
                add(version, "others_pct", 100 * shares.get(shares.size() - 1));
                String pin = "";
                if (jdk25 != null) {
                    Map<String, String> f = spawn(
                            version,
                            jdk25,
                            VirtualPin.FLAGS,
                            cp,
                            VirtualPin.class.getName(),
                            "redis://" + host + ":" + port,
                            Integer.toString(PIN_THREADS),
                            Long.toString(PIN_SLEEP_MS));
                    double dibsMs = Double.parseDouble(f.get("dibs_ms"));
                    double plainMs = Double.parseDouble(f.get("plain_ms"));
                    add(version, "f_dibs_ms", dibsMs);
                    add(version, "f_plain_ms", plainMs);
                    add(version, "f_ratio", dibsMs / plainMs);
                    pin = String.format(Locale.ROOT, " | (f) %,.0f ms with dibs, %,.0f ms without", dibsMs, plainMs);
                }
                System.out.println(String.format(
                        Locale.ROOT,
                        "round %d  %-6s cycle p50 %6.1f µs, skip p50 %6.1f µs,"
                                + " %,7.0f / %,7.0f / %,7.0f / %,7.0f cycles/s at 1/4/16/64 threads, contended %,7.0f calls/s%s",
                        round + 1,
                        version,
                        last(version, "a_cycle_p50_us"),
                        last(version, "skip_p50_us"),
                        last(version, "b_1_cycles_per_s"),
                        last(version, "b_4_cycles_per_s"),
                        last(version, "b_16_cycles_per_s"),
                        last(version, "b_64_cycles_per_s"),
                        last(version, "c_calls_per_s"),
                        pin));
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        Path out = Paths.get(opt.getOrDefault("--out", "bench/results"));
        Files.createDirectories(out);
        String md = markdown(rounds, seconds, jdk25);
        Files.writeString(out.resolve("before-after.md"), md);
        Files.writeString(out.resolve("before-after.csv"), csv());
        Path results = out.resolve("results.md");
        if (Files.exists(results)) {
            // A section from an earlier run (bench/run.sh --before-after REV --skip-main) is replaced.
            String text = Files.readString(results);
            int earlier = text.indexOf("\n## Before and after: ");
            if (earlier >= 0) {
                text = text.substring(0, earlier + 1);
            }
            Files.writeString(results, text + "\n" + md);
        }
        System.out.println();
        System.out.println(md);
        System.out.println("wrote " + out.resolve("before-after.md") + " and before-after.csv"
                + (Files.exists(results) ? ", and appended the section to " + results : ""));
    }

    private void add(String version, String key, double value) {
        values.computeIfAbsent(version, k -> new LinkedHashMap<>())
                .computeIfAbsent(key, k -> new ArrayList<>())
                .add(value);
    }

    private double last(String version, String key) {
        List<Double> v = values.getOrDefault(version, Map.of()).get(key);
        return v == null || v.isEmpty() ? Double.NaN : v.get(v.size() - 1);
    }

    private List<Double> rounds(String version, String key) {
        return values.getOrDefault(version, Map.of()).getOrDefault(key, List.of());
    }

    private String markdown(int rounds, double seconds, String jdk25) {
        StringBuilder md = new StringBuilder();
        md.append("## Before and after: ")
                .append(opt.get("--before-label"))
                .append(" → ")
                .append(opt.get("--after-label"))
                .append("\n\n");
        md.append(
                Boolean.parseBoolean(opt.getOrDefault("--after-main", "true"))
                        ? "Produced by `bash bench/run.sh --before-after REV`, after the tables above, against the same"
                                + " redis-server and with the same pinning."
                        : "Produced by `bash bench/run.sh --before-after REV --skip-main`: a run of its own, later than the"
                                + " tables above, on its own redis-server, with the same pinning.");
        boolean control = values.containsKey(AGAIN);
        md.append(" dibs alone; each build in JVMs of its own (both jars hold" + " the same classes), ")
                .append(rounds)
                .append(
                        control
                                ? " rounds, each build first, second and third in turn; with a control arm, `after again`:"
                                        + " the after build once more in JVMs of its own, whose ratio to `after` is this"
                                        + " sitting's noise."
                                : " rounds, interleaved with the order alternating (before, after; after, before; ...).")
                .append(" Per round and build: one JVM for (a)-(c) (the workloads,"
                        + " warm-up and parameters of the tables above), one JVM on ")
                .append(jdk25 == null ? "(no JDK 25 found: (f) not run)" : "`" + jdk25 + "`")
                .append(" for (f), with `-Djdk.virtualThreadScheduler.parallelism=2"
                        + " -Djdk.virtualThreadScheduler.maxPoolSize=2`: " + PIN_THREADS + " virtual threads each run"
                        + " `Dibs.execute(uri, \"pin-\" + i, 30, 0, task)` with a task that sleeps " + PIN_SLEEP_MS
                        + " ms, and the same " + PIN_THREADS + " sleeps without dibs.\n\n");
        md.append(String.format(
                Locale.ROOT,
                "- before: %s (`%s`)\n- after: %s (the jar installed from the work tree)\n",
                opt.get("--before-label"),
                opt.get("--before-jar"),
                opt.get("--after-label")));
        for (String version : values.keySet()) {
            double[] o = others.getOrDefault(version, List.of()).stream()
                    .mapToDouble(Double::doubleValue)
                    .toArray();
            md.append(String.format(
                    Locale.ROOT,
                    "- CPU taken by other processes while the %s JVMs ran: median %.1f%%,"
                            + " max %.1f%% of the machine\n",
                    version,
                    100 * Samples.median(o),
                    100 * Arrays.stream(o).max().orElse(Double.NaN)));
        }
        md.append(String.format(Locale.ROOT, "- run time of this section: %.0f s\n", seconds));
        md.append("- ratio after / before per round, then their median: below 1 is faster after on latencies and"
                + " times, above 1 on rates");
        md.append(
                control
                        ? "; `worse in` counts the rounds in which the later build did worse on that figure"
                                + " (about half of them for two equal builds)\n\n"
                        : "\n\n");
        md.append("| workload | figure | before, per round | after, per round | median before | median after"
                + " | after / before, per round | median after / before |");
        md.append(
                control
                        ? " after worse in | control: after again / after, per round | control median |"
                                + " control worse in |\n"
                        : "\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---:|").append(control ? "---:|---:|---:|---:|\n" : "\n");
        for (Figure f : FIGURES) {
            List<Double> b = rounds("before", f.key);
            List<Double> a = rounds("after", f.key);
            if (b.isEmpty() && a.isEmpty()) {
                continue;
            }
            boolean noRatio = f.key.equals("others_pct");
            Ratios r = new Ratios(b, a, f.lowerIsBetter);
            md.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %s | %s | %s | %s | %s |",
                    f.workload,
                    f.label,
                    join(b, f.decimals),
                    join(a, f.decimals),
                    num(median(b), f.decimals),
                    num(median(a), f.decimals),
                    noRatio ? "" : r.perRound(),
                    noRatio ? "" : r.median()));
            if (control) {
                Ratios c = new Ratios(a, rounds(AGAIN, f.key), f.lowerIsBetter);
                md.append(
                        noRatio
                                ? " | | | |"
                                : String.format(
                                        Locale.ROOT,
                                        " %s | %s | %s | %s |",
                                        r.worseIn(),
                                        c.perRound(),
                                        c.median(),
                                        c.worseIn()));
            }
            md.append("\n");
        }
        return md.toString();
    }

    /** The per-round ratios of a later build's figure to an earlier one's. */
    private static final class Ratios {
        final double[] r;
        final boolean lowerIsBetter;

        Ratios(List<Double> earlier, List<Double> later, boolean lowerIsBetter) {
            this.r = new double[Math.min(earlier.size(), later.size())];
            for (int i = 0; i < r.length; i++) {
                r[i] = later.get(i) / earlier.get(i);
            }
            this.lowerIsBetter = lowerIsBetter;
        }

        String perRound() {
            List<String> s = new ArrayList<>();
            for (double v : r) {
                s.add(String.format(Locale.ROOT, "%.2f", v));
            }
            return String.join(" / ", s);
        }

        String median() {
            return String.format(Locale.ROOT, "**%.2f×**", Samples.median(r));
        }

        /** In how many rounds the later build did worse: "k of n". */
        String worseIn() {
            long worse =
                    Arrays.stream(r).filter(v -> lowerIsBetter ? v > 1 : v < 1).count();
            return worse + " of " + r.length;
        }
    }

    private String csv() {
        StringBuilder csv = new StringBuilder("version,figure,round,value\n");
        values.forEach((version, byKey) -> byKey.forEach((key, list) -> {
            for (int i = 0; i < list.size(); i++) {
                csv.append(String.format(Locale.ROOT, "%s,%s,%d,%.3f\n", version, key, i + 1, list.get(i)));
            }
        }));
        return csv.toString();
    }

    private static double median(List<Double> v) {
        return Samples.median(v.stream().mapToDouble(Double::doubleValue).toArray());
    }

    private static String join(List<Double> v, int decimals) {
        List<String> s = new ArrayList<>();
        for (double d : v) {
            s.add(num(d, decimals));
        }
        return String.join(" / ", s);
    }

    private static String num(double v, int decimals) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%,." + decimals + "f", v);
    }

    private static String javaHere() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** The class path with the installed dibs jar replaced by {@code jar}. */
    static String swapDibsJar(String classpath, String jar) {
        List<String> entries = new ArrayList<>();
        boolean swapped = false;
        for (String e : classpath.split(File.pathSeparator)) {
            String name = Paths.get(e).getFileName().toString();
            if (name.startsWith("dibs-") && name.endsWith(".jar") && !name.startsWith("dibs-bench")) {
                entries.add(jar);
                swapped = true;
            } else {
                entries.add(e);
            }
        }
        if (!swapped) {
            throw new IllegalStateException("no dibs jar on the class path: " + classpath);
        }
        return String.join(File.pathSeparator, entries);
    }

    /** Runs {@code mainClass} in a new JVM (pinned like this one) and parses its key=value line. */
    private Map<String, String> spawn(
            String version, String java, List<String> flags, String classpath, String mainClass, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(java);
        command.add("--enable-native-access=ALL-UNNAMED");
        command.addAll(flags);
        command.add("-cp");
        command.add(classpath);
        command.add(mainClass);
        command.addAll(List.of(args));
        Path log = Files.createTempFile("dibs-bench-", ".out");
        String text;
        CpuMonitor.Reading before = cpu.read();
        try {
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            if (!p.waitFor(SPAWN_TIMEOUT_S, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new IOException("timed out after " + SPAWN_TIMEOUT_S + " s: " + mainClass + " (" + version + ")");
            }
            text = Files.readString(log);
            if (p.exitValue() != 0) {
                throw new IOException(mainClass + " (" + version + ") failed:\n" + text);
            }
        } finally {
            Files.deleteIfExists(log);
        }
        others.computeIfAbsent(version, k -> new ArrayList<>()).add(CpuMonitor.othersShare(before, cpu.read()));
        return Bench.keyValues(text);
    }
}
