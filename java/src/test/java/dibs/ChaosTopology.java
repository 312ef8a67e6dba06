package dibs;

import static dibs.ChaosEvents.rel;

import dibs.testsupport.NodeProxy;
import dibs.testsupport.RedisServer;
import dibs.testsupport.SentinelServer;
import java.io.IOException;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** The topology of the chaos run ({@link ChaosRunTest}): 3 nodes behind their proxies, 3 Sentinels. */
final class ChaosTopology implements AutoCloseable {
    static final String MASTER = "mymaster";
    static final int NODES = 3;

    final NodeProxy[] proxies = new NodeProxy[NODES];
    final RedisServer[] nodes = new RedisServer[NODES];
    final List<SentinelServer> sentinels = new ArrayList<>();

    static ChaosTopology start() throws IOException {
        ChaosTopology t = new ChaosTopology();
        try {
            for (int i = 0; i < NODES; i++) {
                t.proxies[i] = NodeProxy.start();
            }
            String base = "dibs-chaos-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
            for (int i = 0; i < NODES; i++) {
                String rdb = base + "-n" + i + ".rdb";
                List<String> args = new ArrayList<>(List.of(
                        "--replica-announce-ip",
                        "127.0.0.1",
                        "--replica-announce-port",
                        Integer.toString(t.proxies[i].port()),
                        "--bind-source-addr",
                        sourceAddress(i),
                        "--dbfilename",
                        rdb,
                        "--repl-diskless-sync-delay",
                        "0"));
                if (i > 0) {
                    args.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(t.proxies[0].port())));
                }
                t.nodes[i] = RedisServer.launch(args.toArray(new String[0]));
                t.proxies[i].target(t.nodes[i].port());
            }
            for (int i = 0; i < 3; i++) {
                t.sentinels.add(SentinelServer.launch(
                        MASTER,
                        t.proxies[0].port(),
                        2,
                        "down-after-milliseconds 1000",
                        "failover-timeout 4000",
                        "parallel-syncs 2"));
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
            sb.append(i == 0 ? "" : ", ")
                    .append('n')
                    .append(i)
                    .append('=')
                    .append(nodes[i].port())
                    .append(" via ")
                    .append(proxies[i].port());
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
                if (!view.get("num-other-sentinels").equals("2")
                        || !view.get("num-slaves").equals("2")) {
                    return "Sentinel " + s.port() + " sees " + view.get("num-other-sentinels") + " others and "
                            + view.get("num-slaves") + " replicas";
                }
            }
            if (m < 0) {
                return "no master";
            }
            Map<String, String> master = replication(nodes[m]);
            if (!"master".equals(master.get("role")) || !"2".equals(master.get("connected_slaves"))) {
                return "n" + m + " role " + master.get("role") + " with " + master.get("connected_slaves")
                        + " replicas";
            }
            for (int i = 0; i < NODES; i++) {
                if (i != m) {
                    Map<String, String> r = replication(nodes[i]);
                    if (!"slave".equals(r.get("role"))
                            || !"up".equals(r.get("master_link_status"))
                            || !Integer.toString(proxies[m].port()).equals(r.get("master_port"))) {
                        return "n" + i + " role " + r.get("role") + " link " + r.get("master_link_status") + " to "
                                + r.get("master_port");
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
            throw new AssertionError("the topology never came up: " + why + "\n"
                    + sentinels.get(0).log());
        }
    }

    private static final DateTimeFormatter SENTINEL_TIME =
            DateTimeFormatter.ofPattern("dd MMM yyyy HH:mm:ss.SSS", Locale.ENGLISH);
    private static final List<String> WORTH_SHOWING = List.of(
            "+sdown master",
            "-sdown master",
            "+odown",
            "+try-failover",
            "+elected-leader",
            "+selected-slave",
            "+promoted-slave",
            "+switch-master",
            "+failover-end",
            "-failover-abort",
            "+convert-to-slave",
            "+fix-slave-config",
            "+tilt",
            "-tilt",
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
                long ms = LocalDateTime.parse(stamp, SENTINEL_TIME)
                        .atZone(ZoneId.systemDefault())
                        .toInstant()
                        .toEpochMilli();
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
