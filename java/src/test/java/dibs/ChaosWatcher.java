package dibs;

import static dibs.ChaosEvents.rel;
import static dibs.ChaosTopology.NODES;

import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Watches every node on its own port (not through the proxies), one thread per node so a
 * frozen one holds back no other: its role as it changes (an event), and whose lock value
 * is under the key of the last 3 ticks (each value's first sighting, by tick).
 */
final class ChaosWatcher implements AutoCloseable {
    final ChaosTopology topo;
    final ChaosEvents events;
    final Map<Long, String> instanceOfPid;
    final Map<Long, List<String>> sightings = new HashMap<>();
    final Set<String> seen = new HashSet<>();
    final Map<String, Set<Integer>> nodesByRun = new HashMap<>();
    final List<Thread> threads = new ArrayList<>();
    volatile boolean stop;

    ChaosWatcher(ChaosTopology topo, ChaosEvents events, Map<Long, String> instanceOfPid) {
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
                Map<String, String> r = ChaosTopology.replication(server);
                state = "master".equals(r.get("role"))
                        ? "master with " + r.get("connected_slaves") + " replicas"
                        : "replica of n" + topo.nodeOfProxyPort(Integer.parseInt(r.get("master_port"))) + " link "
                                + r.get("master_link_status");
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
        String who = f.length == 4
                ? instance + " (value " + f[0].substring(0, 8) + ", set at " + rel(Long.parseLong(f[3]), tick)
                        + " of the tick)"
                : value;
        sightings
                .computeIfAbsent(tick, t -> new ArrayList<>())
                .add("n" + node + " " + who + " first seen " + rel(System.currentTimeMillis(), tick));
        nodesByRun
                .computeIfAbsent(tick + " " + instance, k -> new java.util.TreeSet<>())
                .add(node);
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
