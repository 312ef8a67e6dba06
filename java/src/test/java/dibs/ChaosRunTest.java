package dibs;

import static dibs.ChaosEvents.rel;
import static dibs.ChaosTopology.MASTER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.ChaosFaults.FaultRunner;
import dibs.ChaosFaults.PlannedFault;
import dibs.demo.ChaosInstance;
import dibs.demo.TickRace;
import dibs.testsupport.NodeProxy;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The chaos run of issue 18: 3 instance JVMs ({@link ChaosInstance}) race for every one-second
 * tick of a job through {@code executeOnce} on a Sentinel-managed master with 2 replicas (3
 * Sentinels, quorum 2, down-after 1 s), while a seeded fault script kills the master with
 * SIGKILL (restarted later as a plain process, which Sentinel turns into a replica), freezes it
 * with SIGSTOP for 2 to 4 s, and drops one replica's replication stream for a few seconds. The
 * same script runs twice, at once, each on a topology of its own: with durable acquire as it
 * comes ("default") and with {@code durable("off")}. Each run is recorded by the task outside Redis (a file per instance,
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
 *
 * <p>Its parts, beside it: {@link ChaosTopology} (the nodes, their proxies and the Sentinels),
 * {@link ChaosFaults} (the seeded fault script and what runs it), {@link ChaosWatcher} (each
 * node's role and lock values as the run goes) and {@link ChaosEvents} (the timeline the report
 * shows).
 */
@Tag("slow")
@Timeout(value = 360, unit = TimeUnit.SECONDS)
class ChaosRunTest {
    private static final int INSTANCES = 3;
    private static final int MAX_SKEW_MS = 200;
    private static final long HEAD_START_SEC = 5;

    @Test
    void executeOnceRunsNoTickTwiceThroughFailoversWithDurableAcquire() throws Exception {
        long seconds = chaosSeconds();
        long seed = Long.getLong("dibs.chaos.seed", 18L);
        List<PlannedFault> plan = ChaosFaults.plan(seed, seconds);
        System.out.printf("chaos seed=%d seconds=%d plan=%s%n", seed, seconds, plan);

        // The two modes at once, each on a topology of its own: the same faults at the same
        // offsets from each one's first tick, in half the wall time.
        CompletableFuture<ModeResult> offRun = new CompletableFuture<>();
        Thread offThread = new Thread(
                () -> {
                    try {
                        offRun.complete(runMode("off", seed, seconds, plan));
                    } catch (Throwable e) {
                        offRun.completeExceptionally(e);
                    }
                },
                "chaos-off");
        offThread.start();
        ModeResult def = runMode("default", seed, seconds, plan);
        ModeResult off = offRun.get();
        System.out.println(def.summary);
        System.out.println(off.summary);
        System.out.println(def.detail);
        System.out.println(off.detail);

        for (ModeResult m : List.of(def, off)) {
            assertEquals(
                    Collections.nCopies(INSTANCES, 0), m.exitCodes, m.mode + ": every instance exits 0\n" + m.report);
            assertEquals(INSTANCES, m.done, m.mode + ": every instance finished its ticks\n" + m.report);
        }
        assertEquals(0, def.twice, "default: a tick ran twice\n" + def.twiceReport + "\n" + def.report);
        assertEquals(
                0,
                def.unrecorded,
                "default: every run the instances reported is recorded, and only those\n" + def.report);
        assertEquals(0, def.duplicateFences, "default: each fencing token is unique\n" + def.report);
        assertEquals(
                0,
                def.fenceInversions,
                "default: tokens follow the order of acquisition\n" + def.inversionReport + "\n" + def.report);
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
        ChaosEvents events = new ChaosEvents();
        List<Process> processes = new ArrayList<>();
        List<Thread> readers = new ArrayList<>();
        long first;
        String faults;
        List<String> sentinelEvents;
        ChaosWatcher watcher = null;
        try (ChaosTopology topo = ChaosTopology.start()) {
            topo.awaitReady(20_000);
            first = System.currentTimeMillis() / 1000 + HEAD_START_SEC;
            events.origin = first * 1000;
            events.add("topology up: master n" + topo.master() + ", sentinels " + topo.sentinelList() + ", nodes "
                    + topo.describe());
            for (int i = 1; i <= INSTANCES; i++) {
                String id = "i" + i;
                List<String> cmd = new ArrayList<>();
                cmd.add(TickRace.javaExecutable());
                cmd.addAll(TickRace.inheritedJvmFlags());
                cmd.addAll(List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
                cmd.add("-cp");
                cmd.add(System.getProperty("java.class.path"));
                cmd.add(ChaosInstance.class.getName());
                cmd.addAll(List.of(
                        topo.sentinelList(),
                        MASTER,
                        id,
                        mode,
                        Long.toString(first),
                        Long.toString(seconds),
                        Integer.toString(MAX_SKEW_MS),
                        Long.toString(seed),
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
            watcher = new ChaosWatcher(topo, events, instanceOfPid);
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
                        runsByTick
                                .computeIfAbsent(run.tick, t -> new ArrayList<>())
                                .add(run);
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
        result.duplicateFences =
                fenceCounts.values().stream().filter(c -> c > 1).count();
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
                    inversions.append(String.format(
                            "  %s tick %d fence %d (task %s) before %s tick %d fence %d (call %s)%n",
                            a.instance,
                            a.tick,
                            a.fence,
                            rel(a.taskStart, first),
                            b.instance,
                            b.tick,
                            b.fence,
                            rel(b.callStart, first)));
                }
            }
        }
        result.inversionReport = inversions.toString();

        List<Long> noneTicks = runsByTick.entrySet().stream()
                .filter(e -> e.getValue().isEmpty())
                .map(Map.Entry::getKey)
                .collect(Collectors.toList());
        List<Long> twiceTicks = runsByTick.entrySet().stream()
                .filter(e -> e.getValue().size() > 1)
                .map(Map.Entry::getKey)
                .collect(Collectors.toList());

        StringBuilder twice = new StringBuilder();
        for (long t : twiceTicks) {
            twice.append(String.format(
                    "tick %d (t+%ds) ran %d times:%n",
                    t, t - first, runsByTick.get(t).size()));
            long from = Long.MAX_VALUE;
            long to = Long.MIN_VALUE;
            for (Run r : runsByTick.get(t)) {
                twice.append(String.format(
                        "  run: %s fence=%d call %s task %s, its lock seen on %s%n",
                        r.instance,
                        r.fence,
                        rel(r.callStart, first),
                        rel(r.taskStart, first),
                        watcher.nodesOf(r.tick, r.instance).stream()
                                .map(n -> "n" + n)
                                .collect(Collectors.toList())));
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
        report.append("---- chaos mode=")
                .append(mode)
                .append(" first tick ")
                .append(first)
                .append('\n');
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
                report.append(String.format(
                        "  tick t+%d: runs recorded %d; %s; lock values seen: %s%n",
                        t - first, runsByTick.get(t).size(), o, watcher.sightings(t)));
            }
        }
        // Where each run's lock was: a value seen on one node only was never replicated (or the
        // watcher missed it: it reads each node about every 150 ms).
        StringBuilder landed = new StringBuilder();
        long unreplicated = 0;
        for (Run run : runs) {
            Set<Integer> on = watcher.nodesOf(run.tick, run.instance);
            landed.append(" t+")
                    .append(run.tick - first)
                    .append(':')
                    .append(run.instance)
                    .append('@')
                    .append(on.stream().map(n -> "n" + n).collect(Collectors.joining("+")));
            if (on.size() < 2) {
                unreplicated++;
            }
        }
        result.unreplicated = unreplicated;
        report.append("where each run's lock value was seen (tick:instance@nodes):")
                .append(landed)
                .append('\n');
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
            report.append("reported RAN but not recorded: ")
                    .append(onlyReported)
                    .append("; recorded but not reported: ")
                    .append(onlyRecorded)
                    .append('\n');
        }
        if (!twice.toString().isEmpty()) {
            report.append("TICKS RUN TWICE:\n").append(twice);
        }
        if (result.fenceInversions > 0) {
            report.append("fence inversions:\n").append(inversions);
        }
        result.report = report.toString();
        long wallMs = (System.nanoTime() - wallStart) / 1_000_000;
        result.summary = String.format(
                "chaos mode=%s seed=%d ticks=%d twice=%d none=%d unconfirmed=%d faults=[%s]",
                mode, seed, seconds, result.twice, result.none, result.unconfirmed, faults);
        result.detail = String.format(
                "chaos mode=%s detail: runs=%d outcomes=%s twiceTicks=%s noneTicks=%s "
                        + "unrecorded=%d duplicateFences=%d fenceInversions=%d fenceOutsideCallWindow=%d runsSeenOnOneNodeOnly=%d "
                        + "wall=%.1fs",
                mode,
                result.runs,
                outcomeCounts,
                rels(twiceTicks, first),
                rels(noneTicks, first),
                result.unrecorded,
                result.duplicateFences,
                result.fenceInversions,
                clockOutside,
                result.unreplicated,
                wallMs / 1000.0);
        System.out.print(result.report);
        System.out.println(result.summary);
        System.out.println(result.detail);
        deleteRecursively(dir);
        return result;
    }

    private static void collect(Process p, String id, List<String> lines) {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                lines.add(id + ": " + line);
            }
        } catch (IOException e) {
            lines.add(id + ": (read failed: " + e + ")");
        }
    }

    // ----------------------------------------------------------------------------------------

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
