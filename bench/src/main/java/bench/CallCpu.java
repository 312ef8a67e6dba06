package bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import redis.clients.jedis.Jedis;

/**
 * The CPU one thread's calls cost, per call: the calling thread's own (user and system, from the
 * JVM) and the redis-server's (its {@code INFO cpu}, every thread, in microseconds): what a call
 * costs, where a latency also holds the waits between the two. On this VM it swings from round
 * to round as much as the latencies do. The server must serve nothing else meanwhile; the one
 * {@code INFO} at each end is included.
 */
final class CallCpu {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final String host;
    private final int port;
    private final long clientStartNs;
    private final double serverStartS;
    double clientUs = Double.NaN;
    double serverUs = Double.NaN;

    /** Starts counting, on the thread that will make the calls. */
    CallCpu(String host, int port) {
        this.host = host;
        this.port = port;
        this.serverStartS = serverSeconds(host, port);
        this.clientStartNs = THREADS.getCurrentThreadCpuTime();
    }

    /** Stops counting after {@code calls} calls, on the same thread. */
    void stop(int calls) {
        long clientNs = THREADS.getCurrentThreadCpuTime() - clientStartNs;
        double serverS = serverSeconds(host, port) - serverStartS;
        clientUs = clientNs / 1e3 / calls;
        serverUs = serverS * 1e6 / calls;
    }

    /**
     * {@link Workloads#latency}, with the CPU its calls cost counted around exactly those calls
     * (warm-up included).
     */
    static Counted latency(
            String host, int port, Contender contender, String lockName, int warmup, int count, boolean expectWin)
            throws Exception {
        CallCpu cpu = new CallCpu(host, port);
        Samples samples = Workloads.latency(contender, lockName, warmup, count, expectWin);
        cpu.stop(warmup + count);
        return new Counted(samples, cpu);
    }

    /** A latency workload's samples and the CPU per call it cost. */
    static final class Counted {
        final Samples samples;
        final CallCpu cpu;

        Counted(Samples samples, CallCpu cpu) {
            this.samples = samples;
            this.cpu = cpu;
        }
    }

    /** The server's {@code used_cpu_sys} plus {@code used_cpu_user}, in seconds. */
    private static double serverSeconds(String host, int port) {
        String info;
        try (Jedis jedis = new Jedis(host, port)) {
            info = jedis.info("cpu");
        }
        return Double.parseDouble(Bench.infoField(info, "used_cpu_sys:"))
                + Double.parseDouble(Bench.infoField(info, "used_cpu_user:"));
    }
}
