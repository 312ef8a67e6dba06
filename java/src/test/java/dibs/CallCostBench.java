package dibs;

import dibs.testsupport.RedisServer;
import dibs.testsupport.VirtualThreads;
import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * What the Java + JNI layer costs per call, printed as Markdown tables: a program, not a test.
 * Run it with {@code scripts/call-cost.sh}, which also runs {@code examples/core_cycle.rs}, the
 * Rust core's own cycle, for comparison. Against a throwaway redis-server, on 1 thread:
 * <ol>
 *   <li>conn resolution: {@link ConnCache#handle} on a cache hit, per conn form; and what a hit
 *       saves, a miss: flatten, JNI, Rust parse, registry lookup ({@link NativeLib#connectUri}
 *       or {@link NativeLib#connectMap}), which returns the same handle;
 *   <li>a full {@link Dibs#execute} cycle with a no-op task;
 *   <li>the skip path: {@link Dibs#execute} on a lock someone else holds;
 *   <li>on Java 21+, both again from a virtual thread, whose native calls go through a platform
 *       thread ({@link NativeIo}).
 * </ol>
 * The JVM and redis-server share CPU 0, as in {@code examples/core_cycle.rs}, whose doc says
 * why. Package {@code dibs} for access to {@link ConnCache} and {@link NativeLib}.
 */
public final class CallCostBench {
    private static final int HIT_CALLS = 2_000_000;
    private static final int MISS_CALLS = 100_000;
    private static final int WARMUP = 2_000;
    private static final int CYCLES = 20_000;
    private static final Runnable NO_OP = () -> {};

    private CallCostBench() {}

    public static void main(String[] args) throws Exception {
        int cpus = Runtime.getRuntime().availableProcessors();
        String pinning = pin();
        try (RedisServer server = RedisServer.launch()) {
            String uri = server.uri();
            String info = server.command("INFO", "server");
            System.out.println("redis-server " + field(info, "redis_version:") + " on 127.0.0.1:" + server.port() + ", "
                    + cpus + " CPUs, " + pinning + "; JDK " + System.getProperty("java.vm.version"));

            Map<String, Object> forms = new LinkedHashMap<>();
            forms.put("`\"" + uri + "\"`", uri);
            forms.put("`{\"uri\": ...}`", Map.of("uri", uri));
            forms.put(
                    "`{\"host\": \"127.0.0.1\", \"port\": " + server.port() + "}`",
                    Map.of("host", "127.0.0.1", "port", server.port()));
            forms.put(
                    "Carmine `{\"pool\": {\"max-total\": 8}, \"spec\": {\"host\": ..., \"port\": ...}}`",
                    Map.of("pool", Map.of("max-total", 8), "spec", Map.of("host", "127.0.0.1", "port", server.port())));

            System.out.println();
            System.out.println("| conn form | hit ns/call (`ConnCache.handle`, mean of " + HIT_CALLS
                    + ") | miss ns/call (flatten + JNI + parse + lookup, mean of " + MISS_CALLS + ") |");
            System.out.println("|---|---:|---:|");
            for (Map.Entry<String, Object> form : forms.entrySet()) {
                Object conn = form.getValue();
                if (ConnCache.handle(conn) != miss(conn)) {
                    throw new IllegalStateException("a miss resolved " + form.getKey() + " to another handle");
                }
                double hit = nsPerCall(ConnCache::handle, conn, HIT_CALLS);
                double miss = nsPerCall(CallCostBench::miss, conn, MISS_CALLS);
                System.out.printf("| %s | %.0f | %,.0f |%n", form.getKey(), hit, miss);
            }

            double[] cycle = micros(uri, "call-cost", true);
            String held = "call-cost-held";
            server.command("SET", RedisServer.lockKey(held), "someone-else", "PX", "600000");
            double[] skip = micros(uri, held, false);
            System.out.println();
            System.out.println("| Java `Dibs.execute(uri, name, 10, 0, () -> {})`, 1 thread, " + CYCLES
                    + " calls after " + WARMUP + " | p50 µs | p99 µs | mean µs |");
            System.out.println("|---|---:|---:|---:|");
            System.out.printf(
                    "| cycle: SET NX PX, no-op task, release script | %.1f | %.1f | %.1f |%n",
                    cycle[0], cycle[1], cycle[2]);
            System.out.printf(
                    "| skip: lock held by another, SET NX PX only | %.1f | %.1f | %.1f |%n", skip[0], skip[1], skip[2]);
            if (Runtime.version().feature() >= 21) {
                // The same calls from a virtual thread: each native call is handed to a platform
                // thread (NativeIo) while the virtual one parks.
                double[][] virtual = new double[2][];
                VirtualThreads.start(() -> {
                            virtual[0] = micros(uri, "call-cost", true);
                            virtual[1] = micros(uri, held, false);
                        })
                        .join();
                System.out.printf(
                        "| cycle, from a virtual thread | %.1f | %.1f | %.1f |%n",
                        virtual[0][0], virtual[0][1], virtual[0][2]);
                System.out.printf(
                        "| skip, from a virtual thread | %.1f | %.1f | %.1f |%n",
                        virtual[1][0], virtual[1][1], virtual[1][2]);
            }
        }
    }

    /**
     * Pins this JVM (every thread it has, so every thread and the redis-server they start later)
     * to CPU 0 with util-linux's {@code taskset}. Returns how, for the header.
     */
    private static String pin() throws InterruptedException {
        ProcessBuilder taskset = new ProcessBuilder(
                        "taskset",
                        "-a",
                        "-p",
                        "-c",
                        "0",
                        Long.toString(ProcessHandle.current().pid()))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        boolean pinned;
        try {
            pinned = taskset.start().waitFor() == 0;
        } catch (IOException e) {
            pinned = false;
        }
        return pinned ? "client and redis-server pinned to CPU 0" : "not pinned (taskset failed)";
    }

    /** A conn resolved without the cache, as {@link ConnCache#handle} does on a miss. */
    private static long miss(Object conn) {
        return conn instanceof String
                ? NativeLib.connectUri((String) conn, false)
                : NativeLib.connectMap(ConnCache.flatten((Map<?, ?>) conn), false);
    }

    /** Mean ns of {@code resolve.applyAsLong(conn)} over {@code calls} calls, after as many unmeasured. */
    private static double nsPerCall(ToLongFunction<Object> resolve, Object conn, int calls) {
        long sum = 0;
        for (int i = 0; i < calls; i++) {
            sum += resolve.applyAsLong(conn);
        }
        long start = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            sum += resolve.applyAsLong(conn);
        }
        long elapsed = System.nanoTime() - start;
        // Every call returns the same handle: checking the sum keeps the JIT from dropping them.
        if (sum != 2L * calls * ConnCache.handle(conn)) {
            throw new IllegalStateException("handles differ between calls");
        }
        return elapsed / (double) calls;
    }

    /** p50, p99 and mean µs of {@link Dibs#execute}, which must return {@code won} every time. */
    private static double[] micros(String uri, String name, boolean won) {
        long[] nanos = new long[CYCLES];
        for (int i = -WARMUP; i < CYCLES; i++) {
            long start = System.nanoTime();
            boolean ran = Dibs.execute(uri, name, 10, 0, NO_OP);
            long elapsed = System.nanoTime() - start;
            if (ran != won) {
                throw new IllegalStateException("Dibs.execute returned " + ran + " on lock '" + name + "'");
            }
            if (i >= 0) {
                nanos[i] = elapsed;
            }
        }
        double mean = Arrays.stream(nanos).average().orElse(0) / 1e3;
        Arrays.sort(nanos);
        return new double[] {percentile(nanos, 0.50) / 1e3, percentile(nanos, 0.99) / 1e3, mean};
    }

    /** Nearest rank, as in examples/core_cycle.rs. */
    private static double percentile(long[] sorted, double q) {
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1];
    }

    /** The value after {@code prefix} on its own line of an INFO reply. */
    private static String field(String info, String prefix) {
        return info.lines()
                .filter(l -> l.startsWith(prefix))
                .map(l -> l.substring(prefix.length()).trim())
                .findFirst()
                .orElse("?");
    }
}
