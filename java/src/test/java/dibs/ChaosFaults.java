package dibs;

import static dibs.ChaosEvents.secs;
import static dibs.ChaosTopology.NODES;

import dibs.testsupport.NodeProxy;
import dibs.testsupport.RedisServer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * The fault script of the chaos run ({@link ChaosRunTest}): planned from the seed ({@link #plan}),
 * and run against the topology by a {@link FaultRunner}.
 */
final class ChaosFaults {
    static final long WARMUP_MS = 8_000;
    static final long COOLDOWN_MS = 10_000;
    static final long SLOT_MS = 14_000;

    private ChaosFaults() {}

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
            long duration = kind.equals("kill")
                    ? 4000 + r.nextInt(3001)
                    : kind.equals("stop") ? 2000 + r.nextInt(2001) : 3000 + r.nextInt(3001);
            int pick = r.nextInt(2);
            if (i < n) {
                plan.add(new PlannedFault(kind, WARMUP_MS + i * slot + jitter, duration, pick));
            }
        }
        return plan;
    }

    /** Runs the planned faults on their schedule, each against the master of the moment. */
    static final class FaultRunner implements Runnable {
        final ChaosTopology topo;
        final List<PlannedFault> plan;
        final ChaosEvents events;
        final long originMs;
        final long endMs;
        final List<String> done = Collections.synchronizedList(new ArrayList<>());

        FaultRunner(ChaosTopology topo, List<PlannedFault> plan, ChaosEvents events, long originMs, long runMs) {
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
                    events.add(
                            after == null
                                    ? "healthy again: master n" + topo.master()
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
            events.add(
                    next < 0
                            ? "no failover within 20 s"
                            : "failover: master n" + next + " after " + failoverMs + " ms");
            long wait = t0 + f.durationMs - System.currentTimeMillis();
            if (wait > 0) {
                Thread.sleep(wait);
            }
            topo.nodes[m].start();
            events.add("restarted n" + m + " as a plain process, " + (System.currentTimeMillis() - t0)
                    + " ms after the kill");
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
            events.add(
                    next < 0
                            ? "no failover: n" + m + " is still the master"
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
            int stalled = topo.proxies[m].stallFrom(ChaosTopology.sourceAddress(r));
            events.add("FAULT stall n" + r + "'s stream from master n" + m + " for " + f.durationMs + " ms (" + stalled
                    + " flow)");
            String verified;
            try {
                // Check the method: a write on the master must not reach the stalled replica.
                String probe = "chaos-probe-" + System.nanoTime();
                topo.nodes[m].command("SET", probe, "1");
                Thread.sleep(300);
                boolean missed = topo.nodes[r].command("EXISTS", probe).equals("0");
                long masterOffset =
                        Long.parseLong(ChaosTopology.replication(topo.nodes[m]).get("master_repl_offset"));
                long replicaOffset =
                        Long.parseLong(ChaosTopology.replication(topo.nodes[r]).get("slave_repl_offset"));
                verified = missed && masterOffset > replicaOffset
                        ? "verified"
                        : "NOT-verified(exists=" + !missed + ",offsets " + masterOffset + "/" + replicaOffset + ")";
                events.add("stall check: " + verified + " (master offset " + masterOffset + ", n" + r + " "
                        + replicaOffset + ")");
                Thread.sleep(Math.max(0, f.durationMs - 300));
            } finally {
                int reset = topo.proxies[m].resetStalled();
                events.add("stall over: " + reset + " flow reset, n" + r + " resyncs");
            }
            done.add("stall@" + when + ":n" + r + "<-n" + m + "/" + f.durationMs + "ms/" + verified);
        }
    }
}
