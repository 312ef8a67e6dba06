package bench;

import java.util.LinkedHashMap;
import java.util.Map;
import redis.clients.jedis.Jedis;

/**
 * One round of (a)-(c) for dibs alone, in a JVM of its own: what {@link BeforeAfter} runs once per
 * dibs build and round, so that two builds of the same classes never share a JVM. The same
 * workloads, warm-up and parameters as {@link Bench}'s; prints one line of key=value pairs.
 *
 * <p>Usage: {@code DibsRound HOST PORT SAMPLES WARMUP_MS WINDOW_MS}
 */
final class DibsRound {
    private static final String HELD = "held-elsewhere";

    private DibsRound() {}

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        int samples = Integer.parseInt(args[2]);
        long warmupMs = Long.parseLong(args[3]);
        long windowMs = Long.parseLong(args[4]);
        Map<String, Double> out = new LinkedHashMap<>();
        try (Contender dibs = new DibsContender(host, port)) {
            try (Jedis jedis = new Jedis(host, port)) {
                dibs.holdElsewhere(jedis, HELD, 3_600_000);
            }
            // As Bench.warmUp.
            Workloads.latency(dibs, "warm-up", 10_000, 1, true);
            Workloads.latency(dibs, HELD, 5_000, 1, false);
            Workloads.window(dibs, 16, i -> "warm-up-" + i, 500, 500, false);

            CallCpu.Counted counted = CallCpu.latency(host, port, dibs, "cycle", Bench.CYCLE_WARMUP, samples, true);
            Samples cycle = counted.samples;
            CallCpu cycleCpu = counted.cpu;
            counted = CallCpu.latency(host, port, dibs, HELD, Bench.CYCLE_WARMUP / 2, Bench.SKIP_SAMPLES, false);
            Samples skip = counted.samples;
            CallCpu skipCpu = counted.cpu;
            out.put("a_cycle_p50_us", cycle.p50());
            out.put("a_cycle_p99_us", cycle.p99());
            out.put("skip_p50_us", skip.p50());
            out.put("skip_p99_us", skip.p99());
            out.put("a_cycle_client_cpu_us", cycleCpu.clientUs);
            out.put("a_cycle_server_cpu_us", cycleCpu.serverUs);
            out.put("skip_client_cpu_us", skipCpu.clientUs);
            out.put("skip_server_cpu_us", skipCpu.serverUs);
            for (int threads : Results.THREADS) {
                String prefix = "tp" + threads + "-";
                Workloads.Window w = Workloads.window(dibs, threads, i -> prefix + i, warmupMs, windowMs, false);
                if (w.wins != w.calls) {
                    throw new IllegalStateException("dibs skipped calls on distinct, free lock names");
                }
                out.put("b_" + threads + "_cycles_per_s", w.callsPerSec);
            }
            Workloads.Window c =
                    Workloads.window(dibs, Results.CONTENDED_THREADS, i -> "contended", warmupMs, windowMs, true);
            out.put("c_calls_per_s", c.callsPerSec);
            out.put("c_skip_p50_us", c.skips.p50());
            out.put("c_skip_p99_us", c.skips.p99());
        }
        StringBuilder line = new StringBuilder();
        out.forEach((k, v) -> line.append(k).append('=').append(v).append(' '));
        System.out.println(line.toString().trim());
        System.exit(0);
    }
}
