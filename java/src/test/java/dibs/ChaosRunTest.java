package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.demo.ChaosInstance;
import dibs.demo.TickRace;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The chaos run of issue 18: 3 instance JVMs ({@link ChaosInstance}) race for every one-second
 * tick of a job through {@code executeOnce} on a Sentinel-managed master with 2 replicas (3
 * Sentinels, quorum 2, down-after 1 s), while a seeded fault script kills the master with
 * SIGKILL (restarted later as a plain process, which Sentinel turns into a replica), freezes it
 * with SIGSTOP for 2 to 4 s, and drops one replica's replication stream for a few seconds. The
 * same script runs twice: with durable acquire as it comes ("default") and with
 * {@code durable("off")}. Each run is recorded by the task outside Redis (a file per instance,
 * synced), and the parent counts ticks run twice and ticks run by no one.
 *
 * <p>Under default: no tick runs twice; every run the instances reported is in the files and the
 * other way round; fencing tokens are unique, and ordered as the acquisitions were (a run whose
 * call started after another's task had started holds a greater token). Under off, and for ticks
 * run by no one, the figures are reported only (faults make some of them unavoidable, and luck
 * decides the rest).
 *
 * <p>Every node is reached through its own {@link NodeProxy}, which it announces as its address
 * ({@code replica-announce-port}); Sentinel monitors the proxies, so after a failover the new
 * master's replicas replicate through proxies as well, and any later fault can stall any
 * replica's stream. Each node makes its outgoing connections from its own loopback address
 * ({@code bind-source-addr}), which is how the proxy tells a replica's stream from other flows.
 *
 * <p>{@code -Ddibs.chaos.seconds=30} (or {@code DIBS_CHAOS_SECONDS}) shortens each mode's run
 * (default 120 s, with 7 faults; a shorter run fits fewer, and says so), {@code -Ddibs.chaos.seed}
 * changes the script. The whole test is bounded by {@code @Timeout(360)}: a run longer than
 * about 140 s per mode needs {@code -Djunit.jupiter.execution.timeout.mode=disabled}.
 */
@Timeout(value = 360, unit = TimeUnit.SECONDS)
class ChaosRunTest {
    private static final String MASTER = "mymaster";
    private static final int NODES = 3;
    private static final int INSTANCES = 3;
    private static final int MAX_SKEW_MS = 200;
    private static final long WARMUP_MS = 8_000;
    private static final long COOLDOWN_MS = 10_000;
    private static final long SLOT_MS = 14_000;
    private static final long HEAD_START_SEC = 5;

    @Test
    void executeOnceRunsNoTickTwiceThroughFailoversWithDurableAcquire() throws Exception {
        long seconds = chaosSeconds();
        long seed = Long.getLong("dibs.chaos.seed", 18L);
        List<PlannedFault> plan = plan(seed, seconds);
        System.out.printf("chaos seed=%d seconds=%d plan=%s%n", seed, seconds, plan);

        ModeResult def = runMode("default", seed, seconds, plan);
        ModeResult off = runMode("off", seed, seconds, plan);
        System.out.println(def.summary);
        System.out.println(off.summary);
        System.out.println(def.detail);
        System.out.println(off.detail);

        for (ModeResult m : List.of(def, off)) {
            assertEquals(Collections.nCopies(INSTANCES, 0), m.exitCodes, m.mode + ": every instance exits 0\n" + m.report);
            assertEquals(INSTANCES, m.done, m.mode + ": every instance finished its ticks\n" + m.report);
        }
        assertEquals(0, def.twice, "default: a tick ran twice\n" + def.twiceReport + "\n" + def.report);
        assertEquals(0, def.unrecorded, "default: every run the instances reported is recorded, and only those\n"
                + def.report);
        assertEquals(0, def.duplicateFences, "default: each fencing token is unique\n" + def.report);
        assertEquals(0, def.fenceInversions, "default: tokens follow the order of acquisition\n"
                + def.inversionReport + "\n" + def.report);
        assertTrue(def.runs > 0, "default: some tick ran\n" + def.report);
    }

    private static long chaosSeconds() {
        String value = System.getProperty("dibs.chaos.seconds");
        if (value == null || value.isEmpty()) {
            value = System.getenv("DIBS_CHAOS_SECONDS");
        }
        return value == null || value.isEmpty() ? 120 : Long.parseLong(value.trim());
    }

    // ----------------------------------------------------------------------------------------
    // The fault script

    /** One fault of the script, planned from the seed: when (from the first tick) and how long. */
    static final class PlannedFault {
        final String kind; // kill, stop, stall
        final long atMs;
        final long durationMs; // kill: until the restart; stop: frozen for; stall: stalled for
        final int pick; // stall: which of the master's replicas (by node index)

        PlannedFault(String kind, long atMs, long durationMs, int pick) {
            this.kind = kind;
            this.atMs = atMs;
            this.durationMs = durationMs;
            this.pick = pick;
        }

        @Override
        public String toString() {
            return kind + "@" + secs(atMs) + "/" + durationMs + "ms" + (kind.equals("stall") ? "/r" + pick : "");
        }
    }

    /**
     * 2 kills, 2 stops and 3 stalls in a seeded order, one per slot of about 14 s after 8 s of
     * warm-up and before 10 s of calm at the end; a run too short for all gets the first ones.
     */
    static List<PlannedFault> plan(long seed, long seconds) {
        Random r = new Random(seed);
        List<String> kinds = new ArrayList<>(List.of("kill", "kill", "stop", "stop", "stall", "stall", "stall"));
        Collections.shuffle(kinds, r);
        long window = seconds * 1000 - WARMUP_MS - COOLDOWN_MS;
        int n = window <= 0 ? 0 : (int) Math.max(1, Math.min(kinds.size(), window / SLOT_MS));
        long slot = n == 0 ? 0 : window / n;
        List<PlannedFault> plan = new ArrayList<>();
        for (int i = 0; i < kinds.size(); i++) {
            String kind = kinds.get(i);
            long jitter = r.nextInt(2000);
            long duration = kind.equals("kill") ? 4000 + r.nextInt(3001)
                    : kind.equals("stop") ? 2000 + r.nextInt(2001)
                    : 3000 + r.nextInt(3001);
            int pick = r.nextInt(2);
            if (i < n) {
                plan.add(new PlannedFault(kind, WARMUP_MS + i * slot + jitter, duration, pick));
            }
        }
        return plan;
    }

    // ----------------------------------------------------------------------------------------
    // One mode

    static final class ModeResult {
        String mode;
        String summary;
        String detail;
        String report = "";
        String twiceReport = "";
        String inversionReport = "";
        List<Integer> exitCodes = new ArrayList<>();
        int done;
        long twice;
        long none;
        long unconfirmed;
        long runs;
        long unrecorded;
        long duplicateFences;
        long fenceInversions;
        long unreplicated;
    }

    /** A run as the task recorded it in its instance's file. */
    static final class Run {
        final long tick;
        final String instance;
        final long fence;
        final long callStart;
        final long taskStart;

        Run(String line) {
            String[] p = line.trim().split(" ");
            tick = Long.parseLong(p[0]);
            instance = p[1];
            fence = Long.parseLong(p[2]);
            callStart = Long.parseLong(p[3]);
            taskStart = Long.parseLong(p[4]);
        }

        String key() {
            return tick + " " + instance + " " + fence;
        }
    }

    private ModeResult runMode(String mode, long seed, long seconds, List<PlannedFault> plan) throws Exception {
        long wallStart = System.nanoTime();
        Path dir = Files.createTempDirectory("dibs-chaos-" + mode + "-");
        ModeResult result = new ModeResult();
        result.mode = mode;
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Events events = new Events();
        List<Process> processes = new ArrayList<>();
        List<Thread> readers = new ArrayList<>();
        long first;
        String faults;
        List<String> sentinelEvents;
        Watcher watcher = null;
        try (Topology topo = Topology.start()) {
            topo.awaitReady(20_000);
            first = System.currentTimeMillis() / 1000 + HEAD_START_SEC;
            events.origin = first * 1000;
            events.add("topology up: master n" + topo.master() + ", sentinels " + topo.sentinelList()
                    + ", nodes " + topo.describe());
            for (int i = 1; i <= INSTANCES; i++) {
                String id = "i" + i;
                List<String> cmd = new ArrayList<>();
                cmd.add(TickRace.javaExecutable());
                cmd.addAll(TickRace.inheritedJvmFlags());
                cmd.addAll(List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
                cmd.add("-cp");
                cmd.add(System.getProperty("java.class.path"));
                cmd.add(ChaosInstance.class.getName());
                cmd.addAll(List.of(topo.sentinelList(), MASTER, id, mode, Long.toString(first),
                        Long.toString(seconds), Integer.toString(MAX_SKEW_MS), Long.toString(seed),
                        dir.resolve(id + ".runs").toString()));
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                processes.add(p);
                Thread reader = new Thread(() -> collect(p, id, lines), "chaos-reader-" + id);
                reader.setDaemon(true);
                reader.start();
                readers.add(reader);
            }
            Map<Long, String> instanceOfPid = new HashMap<>();
            for (int i = 0; i < processes.size(); i++) {
                instanceOfPid.put(processes.get(i).pid(), "i" + (i + 1));
            }
            watcher = new Watcher(topo, events, instanceOfPid);
            watcher.start();
            FaultRunner runner = new FaultRunner(topo, plan, events, first * 1000, seconds * 1000);
            Thread faultThread = new Thread(runner, "chaos-faults-" + mode);
            faultThread.setDaemon(true);
            faultThread.start();

            long deadline = first * 1000 + seconds * 1000 + 45_000;
            for (Process p : processes) {
                long left = deadline - System.currentTimeMillis();
                if (!p.waitFor(Math.max(left, 1), TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                    events.add("an instance did not finish in time: killed");
                }
                result.exitCodes.add(p.exitValue());
            }
            for (Thread r : readers) {
                r.join(5000);
            }
            faultThread.interrupt();
            faultThread.join(15_000);
            faults = runner.summary();
            watcher.close();
            sentinelEvents = topo.sentinelEvents(first * 1000);
        } finally {
            if (watcher != null) {
                watcher.close();
            }
            for (Process p : processes) {
                p.destroyForcibly();
            }
        }

        // ---- what happened
        Map<Long, List<Run>> runsByTick = new TreeMap<>();
        for (long t = first; t < first + seconds; t++) {
            runsByTick.put(t, new ArrayList<>());
        }
        List<Run> runs = new ArrayList<>();
        for (int i = 1; i <= INSTANCES; i++) {
            Path file = dir.resolve("i" + i + ".runs");
            if (Files.exists(file)) {
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    if (!line.isBlank()) {
                        Run run = new Run(line);
                        runs.add(run);
                        runsByTick.computeIfAbsent(run.tick, t -> new ArrayList<>()).add(run);
                    }
                }
            }
        }
        Map<Long, List<String>> outcomes = new TreeMap<>();
        Set<String> reportedRuns = new HashSet<>();
        List<String> logs = new ArrayList<>();
        List<String> other = new ArrayList<>();
        Map<String, Integer> outcomeCounts = new TreeMap<>();
        synchronized (lines) {
            for (String line : lines) {
                String[] p = line.split(" ", 9);
                // "<id>: OUT <tick> <id> <outcome> <fence> <callStart> <callEnd> [detail]"
                if (p.length >= 8 && p[1].equals("OUT")) {
                    long tick = Long.parseLong(p[2]);
                    String outcome = p[4];
                    outcomeCounts.merge(outcome, 1, Integer::sum);
                    String detail = p[3] + " " + outcome + (outcome.equals("RAN") ? " fence=" + p[5] : "")
                            + " call " + rel(Long.parseLong(p[6]), first) + ".." + rel(Long.parseLong(p[7]), first)
                            + (p.length > 8 ? " " + p[8] : "");
                    outcomes.computeIfAbsent(tick, t -> new ArrayList<>()).add(detail);
                    if (outcome.equals("RAN")) {
                        reportedRuns.add(tick + " " + p[3] + " " + p[5]);
                    }
                } else if (p.length >= 3 && p[1].equals("LOG")) {
                    logs.add(rel(Long.parseLong(p[2]), first) + " " + line);
                } else if (p.length >= 2 && p[1].equals("DONE")) {
                    result.done++;
                } else if (!(p.length >= 2 && p[1].equals("READY"))) {
                    other.add(line);
                }
            }
        }
        result.runs = runs.size();
        result.twice = runsByTick.values().stream().filter(r -> r.size() > 1).count();
        result.none = runsByTick.values().stream().filter(List::isEmpty).count();
        result.unconfirmed = outcomeCounts.getOrDefault("UNCONFIRMED", 0);
        Set<String> recorded = runs.stream().map(Run::key).collect(Collectors.toSet());
        Set<String> onlyReported = new HashSet<>(reportedRuns);
        onlyReported.removeAll(recorded);
        Set<String> onlyRecorded = new HashSet<>(recorded);
        onlyRecorded.removeAll(reportedRuns);
        result.unrecorded = onlyReported.size() + onlyRecorded.size();
        Map<Long, Long> fenceCounts = runs.stream().collect(Collectors.groupingBy(r -> r.fence, Collectors.counting()));
        result.duplicateFences = fenceCounts.values().stream().filter(c -> c > 1).count();
        StringBuilder inversions = new StringBuilder();
        long clockOutside = 0;
        for (Run a : runs) {
            // The token is the server's clock (microseconds) at the acquire, between the call's
            // start and the task's start on this same machine's clock.
            if (a.fence < (a.callStart - 5) * 1000 || a.fence > (a.taskStart + 5) * 1000) {
                clockOutside++;
            }
            for (Run b : runs) {
                if (a.taskStart < b.callStart && a.fence >= b.fence) {
                    result.fenceInversions++;
                    inversions.append(String.format("  %s tick %d fence %d (task %s) before %s tick %d fence %d (call %s)%n",
                            a.instance, a.tick, a.fence, rel(a.taskStart, first), b.instance, b.tick, b.fence,
                            rel(b.callStart, first)));
                }
            }
        }
        result.inversionReport = inversions.toString();

        List<Long> noneTicks = runsByTick.entrySet().stream().filter(e -> e.getValue().isEmpty())
                .map(Map.Entry::getKey).collect(Collectors.toList());
        List<Long> twiceTicks = runsByTick.entrySet().stream().filter(e -> e.getValue().size() > 1)
                .map(Map.Entry::getKey).collect(Collectors.toList());

        StringBuilder twice = new StringBuilder();
        for (long t : twiceTicks) {
            twice.append(String.format("tick %d (t+%ds) ran %d times:%n", t, t - first, runsByTick.get(t).size()));
            long from = Long.MAX_VALUE;
            long to = Long.MIN_VALUE;
            for (Run r : runsByTick.get(t)) {
                twice.append(String.format("  run: %s fence=%d call %s task %s, its lock seen on %s%n", r.instance,
                        r.fence, rel(r.callStart, first), rel(r.taskStart, first),
                        watcher.nodesOf(r.tick, r.instance).stream().map(n -> "n" + n).collect(Collectors.toList())));
                from = Math.min(from, r.callStart);
                to = Math.max(to, r.taskStart);
            }
            for (String o : outcomes.getOrDefault(t, List.of())) {
                twice.append("  outcome: ").append(o).append('\n');
            }
            for (String k : watcher.sightings(t)) {
                twice.append("  lock value seen: ").append(k).append('\n');
            }
            twice.append("  faults, roles and Sentinel around it:\n");
            for (String e : events.around(from - 20_000, to + 5_000)) {
                twice.append("    ").append(e).append('\n');
            }
            for (String e : sentinelEvents) {
                twice.append("    ").append(e).append('\n');
            }
            twice.append("  dibs logs around it:\n");
            for (String l : logs) {
                twice.append("    ").append(l).append('\n');
            }
        }
        result.twiceReport = twice.toString();

        StringBuilder report = new StringBuilder();
        report.append("---- chaos mode=").append(mode).append(" first tick ").append(first).append('\n');
        report.append("fault events and node roles (as the watcher saw them):\n");
        for (String e : events.all()) {
            report.append("  ").append(e).append('\n');
        }
        report.append("sentinel (first of 3) events:\n");
        for (String e : sentinelEvents) {
            report.append("  ").append(e).append('\n');
        }
        report.append("ticks other than one RAN and the rest SKIPPED:\n");
        for (long t = first; t < first + seconds; t++) {
            List<String> o = outcomes.getOrDefault(t, List.of());
            long ran = o.stream().filter(s -> s.contains(" RAN")).count();
            long skipped = o.stream().filter(s -> s.contains(" SKIPPED")).count();
            if (!(ran == 1 && skipped == INSTANCES - 1) || runsByTick.get(t).size() != 1) {
                report.append(String.format("  tick t+%d: runs recorded %d; %s; lock values seen: %s%n",
                        t - first, runsByTick.get(t).size(), o, watcher.sightings(t)));
            }
        }
        // Where each run's lock was: a value seen on one node only was never replicated (or the
        // watcher missed it: it reads each node about every 150 ms).
        StringBuilder landed = new StringBuilder();
        long unreplicated = 0;
        for (Run run : runs) {
            Set<Integer> on = watcher.nodesOf(run.tick, run.instance);
            landed.append(" t+").append(run.tick - first).append(':').append(run.instance).append('@')
                    .append(on.stream().map(n -> "n" + n).collect(Collectors.joining("+")));
            if (on.size() < 2) {
                unreplicated++;
            }
        }
        result.unreplicated = unreplicated;
        report.append("where each run's lock value was seen (tick:instance@nodes):").append(landed).append('\n');
        report.append("dibs logs:\n");
        for (String l : logs) {
            report.append("  ").append(l).append('\n');
        }
        if (!other.isEmpty()) {
            report.append("other instance output:\n");
            for (String l : other) {
                report.append("  ").append(l).append('\n');
            }
        }
        if (!onlyReported.isEmpty() || !onlyRecorded.isEmpty()) {
            report.append("reported RAN but not recorded: ").append(onlyReported)
                    .append("; recorded but not reported: ").append(onlyRecorded).append('\n');
        }
        if (!twice.toString().isEmpty()) {
            report.append("TICKS RUN TWICE:\n").append(twice);
        }
        if (result.fenceInversions > 0) {
            report.append("fence inversions:\n").append(inversions);
        }
        result.report = report.toString();
        long wallMs = (System.nanoTime() - wallStart) / 1_000_000;
        result.summary = String.format("chaos mode=%s seed=%d ticks=%d twice=%d none=%d unconfirmed=%d faults=[%s]",
                mode, seed, seconds, result.twice, result.none, result.unconfirmed, faults);
        result.detail = String.format("chaos mode=%s detail: runs=%d outcomes=%s twiceTicks=%s noneTicks=%s "
                        + "unrecorded=%d duplicateFences=%d fenceInversions=%d fenceOutsideCallWindow=%d runsSeenOnOneNodeOnly=%d "
                        + "wall=%.1fs",
                mode, result.runs, outcomeCounts, rels(twiceTicks, first), rels(noneTicks, first), result.unrecorded,
                result.duplicateFences, result.fenceInversions, clockOutside, result.unreplicated, wallMs / 1000.0);
        System.out.print(result.report);
        System.out.println(result.summary);
        System.out.println(result.detail);
        deleteRecursively(dir);
        return result;
    }

    private static void collect(Process p, String id, List<String> lines) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                lines.add(id + ": " + line);
            }
        } catch (IOException e) {
            lines.add(id + ": (read failed: " + e + ")");
        }
    }

    // ----------------------------------------------------------------------------------------
    // The topology: 3 nodes behind their proxies, 3 Sentinels

    static final class Topology implements AutoCloseable {
        final NodeProxy[] proxies = new NodeProxy[NODES];
        final RedisServer[] nodes = new RedisServer[NODES];
        final List<SentinelServer> sentinels = new ArrayList<>();

        static Topology start() throws IOException {
            Topology t = new Topology();
            try {
                for (int i = 0; i < NODES; i++) {
                    t.proxies[i] = NodeProxy.start();
                }
                String base = "dibs-chaos-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
                for (int i = 0; i < NODES; i++) {
                    String rdb = base + "-n" + i + ".rdb";
                    List<String> args = new ArrayList<>(List.of(
                            "--replica-announce-ip", "127.0.0.1",
                            "--replica-announce-port", Integer.toString(t.proxies[i].port()),
                            "--bind-source-addr", sourceAddress(i),
                            "--dbfilename", rdb,
                            "--repl-diskless-sync-delay", "0"));
                    if (i > 0) {
                        args.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(t.proxies[0].port())));
                    }
                    t.nodes[i] = RedisServer.launch(args.toArray(new String[0]));
                    t.proxies[i].target(t.nodes[i].port());
                }
                for (int i = 0; i < 3; i++) {
                    t.sentinels.add(SentinelServer.launch(MASTER, t.proxies[0].port(), 2,
                            "down-after-milliseconds 1000", "failover-timeout 4000", "parallel-syncs 2"));
                }
                return t;
            } catch (IOException | RuntimeException e) {
                t.close();
                throw e;
            }
        }

        /** The loopback address node {@code i} makes its outgoing connections from. */
        static String sourceAddress(int i) {
            return "127.0.0." + (11 + i);
        }

        String sentinelList() {
            return sentinels.stream().map(SentinelServer::address).collect(Collectors.joining(","));
        }

        String describe() {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < NODES; i++) {
                sb.append(i == 0 ? "" : ", ").append('n').append(i).append('=').append(nodes[i].port())
                        .append(" via ").append(proxies[i].port());
            }
            return sb.toString();
        }

        int nodeOfProxyPort(int port) {
            for (int i = 0; i < NODES; i++) {
                if (proxies[i].port() == port) {
                    return i;
                }
            }
            return -1;
        }

        /** The master a majority of the Sentinels names, or -1. */
        int master() {
            Map<Integer, Integer> votes = new HashMap<>();
            for (SentinelServer s : sentinels) {
                try {
                    votes.merge(nodeOfProxyPort(s.masterPort(MASTER)), 1, Integer::sum);
                } catch (IOException | RuntimeException e) {
                    // a Sentinel that does not answer has no vote
                }
            }
            for (Map.Entry<Integer, Integer> v : votes.entrySet()) {
                if (v.getValue() * 2 > sentinels.size()) {
                    return v.getKey();
                }
            }
            return -1;
        }

        static Map<String, String> replication(RedisServer node) throws IOException {
            Map<String, String> fields = new HashMap<>();
            for (String line : node.command("INFO", "replication").split("\\r?\\n")) {
                int colon = line.indexOf(':');
                if (colon > 0) {
                    fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
                }
            }
            return fields;
        }

        /** Null when all is well: one master by every Sentinel, 2 replicas linked to it; else why not. */
        String unhealthy() {
            try {
                int m = -2;
                for (SentinelServer s : sentinels) {
                    int n = nodeOfProxyPort(s.masterPort(MASTER));
                    if (m != -2 && n != m) {
                        return "the Sentinels disagree on the master";
                    }
                    m = n;
                    Map<String, String> view = s.master(MASTER);
                    if (!view.get("flags").equals("master")) {
                        return "Sentinel " + s.port() + " flags " + view.get("flags");
                    }
                    if (!view.get("num-other-sentinels").equals("2") || !view.get("num-slaves").equals("2")) {
                        return "Sentinel " + s.port() + " sees " + view.get("num-other-sentinels")
                                + " others and " + view.get("num-slaves") + " replicas";
                    }
                }
                if (m < 0) {
                    return "no master";
                }
                Map<String, String> master = replication(nodes[m]);
                if (!"master".equals(master.get("role")) || !"2".equals(master.get("connected_slaves"))) {
                    return "n" + m + " role " + master.get("role") + " with " + master.get("connected_slaves") + " replicas";
                }
                for (int i = 0; i < NODES; i++) {
                    if (i != m) {
                        Map<String, String> r = replication(nodes[i]);
                        if (!"slave".equals(r.get("role")) || !"up".equals(r.get("master_link_status"))
                                || !Integer.toString(proxies[m].port()).equals(r.get("master_port"))) {
                            return "n" + i + " role " + r.get("role") + " link " + r.get("master_link_status")
                                    + " to " + r.get("master_port");
                        }
                    }
                }
                return null;
            } catch (IOException | RuntimeException e) {
                return e.toString();
            }
        }

        /** Waits until {@link #unhealthy} says nothing; returns the last reason if time ran out. */
        String awaitHealthy(long timeoutMs) throws InterruptedException {
            long deadline = System.currentTimeMillis() + timeoutMs;
            String why;
            while ((why = unhealthy()) != null && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
            }
            return why;
        }

        void awaitReady(long timeoutMs) throws InterruptedException {
            String why = awaitHealthy(timeoutMs);
            if (why != null) {
                throw new AssertionError("the topology never came up: " + why + "\n" + sentinels.get(0).log());
            }
        }

        private static final DateTimeFormatter SENTINEL_TIME =
                DateTimeFormatter.ofPattern("dd MMM yyyy HH:mm:ss.SSS", Locale.ENGLISH);
        private static final List<String> WORTH_SHOWING = List.of("+sdown master", "-sdown master", "+odown",
                "+try-failover", "+elected-leader", "+selected-slave", "+promoted-slave", "+switch-master",
                "+failover-end", "-failover-abort", "+convert-to-slave", "+fix-slave-config", "+tilt", "-tilt",
                "+reboot");

        /** The first Sentinel's notable events, as "t+12.345s <event>". */
        List<String> sentinelEvents(long originMs) {
            List<String> out = new ArrayList<>();
            for (String line : sentinels.get(0).log().split("\n")) {
                // "1234:X 02 Dec 2026 05:27:27.467 # +switch-master mymaster 127.0.0.1 1 127.0.0.1 2"
                int x = line.indexOf(":X ");
                if (x < 0 || WORTH_SHOWING.stream().noneMatch(line::contains)) {
                    continue;
                }
                String stamp = line.substring(x + 3, Math.min(line.length(), x + 3 + 24));
                String event = line.substring(Math.min(line.length(), x + 3 + 27));
                try {
                    long ms = LocalDateTime.parse(stamp, SENTINEL_TIME).atZone(ZoneId.systemDefault())
                            .toInstant().toEpochMilli();
                    out.add(rel(ms, originMs / 1000) + " sentinel " + portsToNodes(event));
                } catch (RuntimeException e) {
                    out.add("sentinel " + line);
                }
            }
            return out;
        }

        /** Names proxy ports in a Sentinel event by their node ("127.0.0.1 40123" to "n1"). */
        String portsToNodes(String event) {
            String out = event;
            for (int i = 0; i < NODES; i++) {
                out = out.replace("127.0.0.1:" + proxies[i].port(), "n" + i)
                        .replace("127.0.0.1 " + proxies[i].port(), "n" + i);
            }
            return out;
        }

        @Override
        public void close() {
            for (SentinelServer s : sentinels) {
                s.close();
            }
            for (RedisServer n : nodes) {
                if (n != null) {
                    n.close();
                }
            }
            for (NodeProxy p : proxies) {
                if (p != null) {
                    try {
                        p.close();
                    } catch (IOException e) {
                        // closing anyway
                    }
                }
            }
        }
    }

    // ----------------------------------------------------------------------------------------
    // Running the script

    /** What happened, with wall-clock times, shown relative to the first tick. */
    static final class Events {
        volatile long origin;
        private final List<long[]> times = new ArrayList<>();
        private final List<String> texts = new ArrayList<>();

        synchronized void add(String text) {
            long now = System.currentTimeMillis();
            times.add(new long[] {now});
            texts.add(rel(now, origin / 1000) + " " + text);
        }

        synchronized List<String> all() {
            return new ArrayList<>(texts);
        }

        synchronized List<String> around(long fromMs, long toMs) {
            List<String> out = new ArrayList<>();
            for (int i = 0; i < texts.size(); i++) {
                if (times.get(i)[0] >= fromMs && times.get(i)[0] <= toMs) {
                    out.add(texts.get(i));
                }
            }
            return out;
        }
    }

    static final class FaultRunner implements Runnable {
        final Topology topo;
        final List<PlannedFault> plan;
        final Events events;
        final long originMs;
        final long endMs;
        final List<String> done = Collections.synchronizedList(new ArrayList<>());

        FaultRunner(Topology topo, List<PlannedFault> plan, Events events, long originMs, long runMs) {
            this.topo = topo;
            this.plan = plan;
            this.events = events;
            this.originMs = originMs;
            this.endMs = originMs + runMs - COOLDOWN_MS / 2;
        }

        String summary() {
            synchronized (done) {
                return String.join(", ", done);
            }
        }

        @Override
        public void run() {
            try {
                for (PlannedFault f : plan) {
                    long at = originMs + f.atMs;
                    long wait = at - System.currentTimeMillis();
                    if (wait > 0) {
                        Thread.sleep(wait);
                    }
                    if (System.currentTimeMillis() > endMs) {
                        done.add(f.kind + ":skipped(no time left)");
                        events.add("skipped " + f + ": no time left");
                        continue;
                    }
                    String why = topo.unhealthy();
                    if (why != null) {
                        events.add("before " + f + ": not healthy (" + why + "), going ahead");
                    }
                    switch (f.kind) {
                        case "kill":
                            kill(f);
                            break;
                        case "stop":
                            stop(f);
                            break;
                        default:
                            stall(f);
                            break;
                    }
                    String after = topo.awaitHealthy(30_000);
                    events.add(after == null ? "healthy again: master n" + topo.master()
                            : "not healthy 30 s after the fault: " + after);
                }
            } catch (InterruptedException e) {
                events.add("fault script interrupted (the run is over)");
            } catch (Exception e) {
                events.add("fault script failed: " + e);
                done.add("script-failed:" + e.getClass().getSimpleName());
            } finally {
                for (RedisServer n : topo.nodes) {
                    n.thaw();
                }
                for (NodeProxy p : topo.proxies) {
                    p.resetStalled();
                }
            }
        }

        /** The master a majority of the Sentinels names, waiting up to 10 s for one. */
        private int currentMaster() throws InterruptedException {
            long deadline = System.currentTimeMillis() + 10_000;
            int m;
            while ((m = topo.master()) < 0 && System.currentTimeMillis() < deadline) {
                Thread.sleep(100);
            }
            if (m < 0) {
                throw new IllegalStateException("the Sentinels name no master");
            }
            return m;
        }

        private String at() {
            return secs(System.currentTimeMillis() - originMs);
        }

        /** Waits up to {@code timeoutMs} for a majority of the Sentinels to name a master other than {@code old}. */
        private int awaitNewMaster(int old, long timeoutMs) throws InterruptedException {
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (System.currentTimeMillis() < deadline) {
                int m = topo.master();
                if (m >= 0 && m != old) {
                    return m;
                }
                Thread.sleep(100);
            }
            return -1;
        }

        private void kill(PlannedFault f) throws Exception {
            int m = currentMaster();
            String when = at();
            long t0 = System.currentTimeMillis();
            topo.nodes[m].kill();
            events.add("FAULT kill -9 master n" + m);
            int next = awaitNewMaster(m, 20_000);
            long failoverMs = System.currentTimeMillis() - t0;
            events.add(next < 0 ? "no failover within 20 s" : "failover: master n" + next + " after " + failoverMs + " ms");
            long wait = t0 + f.durationMs - System.currentTimeMillis();
            if (wait > 0) {
                Thread.sleep(wait);
            }
            topo.nodes[m].start();
            events.add("restarted n" + m + " as a plain process, " + (System.currentTimeMillis() - t0) + " ms after the kill");
            done.add("kill@" + when + ":n" + m + "->" + (next < 0 ? "none" : "n" + next + "/" + failoverMs + "ms"));
        }

        private void stop(PlannedFault f) throws Exception {
            int m = currentMaster();
            String when = at();
            long t0 = System.currentTimeMillis();
            topo.nodes[m].freeze();
            events.add("FAULT SIGSTOP master n" + m + " for " + f.durationMs + " ms");
            try {
                Thread.sleep(f.durationMs);
            } finally {
                topo.nodes[m].thaw();
            }
            events.add("SIGCONT n" + m);
            // A failover may be under way or done; give it the time it takes to show.
            int next = awaitNewMaster(m, 6_000);
            long failoverMs = System.currentTimeMillis() - t0;
            events.add(next < 0 ? "no failover: n" + m + " is still the master"
                    : "failover: master n" + next + " (" + failoverMs + " ms after the SIGSTOP)");
            done.add("stop@" + when + ":n" + m + "/" + f.durationMs + "ms->"
                    + (next < 0 ? "kept" : "n" + next + "/" + failoverMs + "ms"));
        }

        private void stall(PlannedFault f) throws Exception {
            int m = currentMaster();
            List<Integer> replicas = new ArrayList<>();
            for (int i = 0; i < NODES; i++) {
                if (i != m) {
                    replicas.add(i);
                }
            }
            int r = replicas.get(f.pick % replicas.size());
            String when = at();
            int stalled = topo.proxies[m].stallFrom(Topology.sourceAddress(r));
            events.add("FAULT stall n" + r + "'s stream from master n" + m + " for " + f.durationMs + " ms ("
                    + stalled + " flow)");
            String verified;
            try {
                // Check the method: a write on the master must not reach the stalled replica.
                String probe = "chaos-probe-" + System.nanoTime();
                topo.nodes[m].command("SET", probe, "1");
                Thread.sleep(300);
                boolean missed = topo.nodes[r].command("EXISTS", probe).equals("0");
                long masterOffset = Long.parseLong(Topology.replication(topo.nodes[m]).get("master_repl_offset"));
                long replicaOffset = Long.parseLong(Topology.replication(topo.nodes[r]).get("slave_repl_offset"));
                verified = missed && masterOffset > replicaOffset ? "verified"
                        : "NOT-verified(exists=" + !missed + ",offsets " + masterOffset + "/" + replicaOffset + ")";
                events.add("stall check: " + verified + " (master offset " + masterOffset + ", n" + r + " " + replicaOffset + ")");
                Thread.sleep(Math.max(0, f.durationMs - 300));
            } finally {
                int reset = topo.proxies[m].resetStalled();
                events.add("stall over: " + reset + " flow reset, n" + r + " resyncs");
            }
            done.add("stall@" + when + ":n" + r + "<-n" + m + "/" + f.durationMs + "ms/" + verified);
        }
    }

    /**
     * Watches every node on its own port (not through the proxies), one thread per node so a
     * frozen one holds back no other: its role as it changes (an event), and whose lock value
     * is under the key of the last 3 ticks (each value's first sighting, by tick).
     */
    static final class Watcher implements AutoCloseable {
        final Topology topo;
        final Events events;
        final Map<Long, String> instanceOfPid;
        final Map<Long, List<String>> sightings = new HashMap<>();
        final Set<String> seen = new HashSet<>();
        final Map<String, Set<Integer>> nodesByRun = new HashMap<>();
        final List<Thread> threads = new ArrayList<>();
        volatile boolean stop;

        Watcher(Topology topo, Events events, Map<Long, String> instanceOfPid) {
            this.topo = topo;
            this.events = events;
            this.instanceOfPid = instanceOfPid;
        }

        void start() {
            for (int i = 0; i < NODES; i++) {
                int node = i;
                Thread t = new Thread(() -> watch(node), "chaos-watch-n" + i);
                t.setDaemon(true);
                t.start();
                threads.add(t);
            }
        }

        private void watch(int node) {
            String last = "";
            while (!stop) {
                String state;
                RedisServer server = topo.nodes[node];
                try {
                    Map<String, String> r = Topology.replication(server);
                    state = "master".equals(r.get("role"))
                            ? "master with " + r.get("connected_slaves") + " replicas"
                            : "replica of n" + topo.nodeOfProxyPort(Integer.parseInt(r.get("master_port")))
                                    + " link " + r.get("master_link_status");
                    long now = System.currentTimeMillis() / 1000;
                    for (long tick = now - 2; tick <= now; tick++) {
                        String value = server.command("GET", RedisServer.lockKey("chaos-job@" + tick));
                        if (!value.equals("(nil)")) {
                            seen(node, tick, value);
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    state = "no answer (" + e.getClass().getSimpleName() + ")";
                }
                if (!state.equals(last)) {
                    events.add("node n" + node + ": " + state);
                    last = state;
                }
                try {
                    Thread.sleep(150);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        private synchronized void seen(int node, long tick, String value) {
            if (!seen.add(node + " " + value)) {
                return;
            }
            String[] f = value.split(";");
            String instance = f.length == 4 ? instanceOfPid.getOrDefault(Long.parseLong(f[2]), "pid " + f[2]) : "?";
            String who = f.length == 4 ? instance + " (value " + f[0].substring(0, 8) + ", set at "
                    + rel(Long.parseLong(f[3]), tick) + " of the tick)" : value;
            sightings.computeIfAbsent(tick, t -> new ArrayList<>())
                    .add("n" + node + " " + who + " first seen " + rel(System.currentTimeMillis(), tick));
            nodesByRun.computeIfAbsent(tick + " " + instance, k -> new java.util.TreeSet<>()).add(node);
        }

        synchronized List<String> sightings(long tick) {
            return new ArrayList<>(sightings.getOrDefault(tick, List.of()));
        }

        /** The nodes on which a lock value of {@code instance} for {@code tick} was seen. */
        synchronized Set<Integer> nodesOf(long tick, String instance) {
            return new java.util.TreeSet<>(nodesByRun.getOrDefault(tick + " " + instance, Set.of()));
        }

        @Override
        public void close() {
            stop = true;
            for (Thread t : threads) {
                t.interrupt();
            }
            for (Thread t : threads) {
                try {
                    t.join(6000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    // ----------------------------------------------------------------------------------------

    static String secs(long ms) {
        return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
    }

    /** A wall-clock time relative to the first tick, "t+12.345s". */
    static String rel(long ms, long firstTick) {
        return String.format(Locale.ROOT, "t%+.3fs", (ms - firstTick * 1000) / 1000.0);
    }

    static List<String> rels(List<Long> ticks, long first) {
        return ticks.stream().map(t -> "t+" + (t - first)).collect(Collectors.toList());
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Collections.reverseOrder()).collect(Collectors.toList())) {
                Files.deleteIfExists(p);
            }
        }
    }
}
