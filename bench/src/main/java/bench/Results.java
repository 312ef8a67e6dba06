package bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

/** Every figure of a run, per contender and round; {@link Report} turns them into tables. */
final class Results {
    static final int[] THREADS = {1, 4, 16, 64};
    static final int CONTENDED_THREADS = 16;

    final Map<String, String> setup = new LinkedHashMap<>();
    /** (a) one thread, free lock: the full cycle. */
    final Map<String, List<Samples>> cycle = new LinkedHashMap<>();
    /** One thread, lock held by another holder: the skip path alone. */
    final Map<String, List<Samples>> heldSkip = new LinkedHashMap<>();
    /** The redis-server's CPU per call, µs, over (a)'s cycles and over the skips. */
    final Map<String, List<Double>> cycleServerUs = new LinkedHashMap<>();

    final Map<String, List<Double>> skipServerUs = new LinkedHashMap<>();
    /** (b) cycles per second by thread count, distinct lock names. */
    final Map<Integer, Map<String, List<Double>>> throughput = new TreeMap<>();
    /** (c) 16 threads on one lock name. */
    final Map<String, List<Workloads.Window>> contended = new LinkedHashMap<>();
    /** (d) RSS in kB after {@link Fresh#RSS_MARK} calls and at the end, and the calls made. */
    final Map<String, long[]> leak = new LinkedHashMap<>();

    long leakCalls;
    /** (e) fresh JVM: in-process ns to the end of the first call, the second call, whole process ms. */
    final Map<String, List<double[]>> firstCall = new LinkedHashMap<>();
    /** (f) dibs only: wall ms of the virtual callers with dibs and of the sleeps alone, per round. */
    final List<double[]> virtual = new ArrayList<>();
    /** redis-benchmark by client count. */
    final Map<Integer, List<RedisBenchmark.Result>> redisBenchmark = new TreeMap<>();

    static <T> void add(Map<String, List<T>> map, String contender, T value) {
        map.computeIfAbsent(contender, k -> new ArrayList<>()).add(value);
    }

    /** The median over rounds of one figure, NaN when the contender did not run. */
    static <T> double median(Map<String, List<T>> map, String contender, ToDoubleFunction<T> figure) {
        List<T> rounds = map.get(contender);
        if (rounds == null || rounds.isEmpty()) {
            return Double.NaN;
        }
        return Samples.median(rounds.stream().mapToDouble(figure).toArray());
    }

    double throughput(int threads, String contender) {
        return median(throughput.getOrDefault(threads, Map.of()), contender, Double::doubleValue);
    }

    double redisBenchmark(int clients, ToDoubleFunction<RedisBenchmark.Result> figure) {
        List<RedisBenchmark.Result> runs = redisBenchmark.get(clients);
        if (runs == null || runs.isEmpty()) {
            return Double.NaN;
        }
        return Samples.median(runs.stream().mapToDouble(figure).toArray());
    }

    /** RSS growth in MB from the mark to the end, NaN when not measured. */
    double rssGrowthMb(String contender) {
        long[] kb = leak.get(contender);
        return kb == null ? Double.NaN : (kb[1] - kb[0]) / 1024.0;
    }
}
