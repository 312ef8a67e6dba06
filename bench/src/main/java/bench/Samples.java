package bench;

import java.util.Arrays;

/** Latencies in nanoseconds, sorted once; percentiles by nearest rank. */
final class Samples {
    private final long[] sorted;

    Samples(long[] nanos, int count) {
        sorted = Arrays.copyOf(nanos, count);
        Arrays.sort(sorted);
    }

    int count() {
        return sorted.length;
    }

    /** The {@code q} quantile (0 < q <= 1) in microseconds, NaN when there are no samples. */
    double micros(double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1] / 1e3;
    }

    double p50() {
        return micros(0.50);
    }

    double p99() {
        return micros(0.99);
    }

    /** Every sample, merged with {@code other}'s, for a CDF over all rounds. */
    Samples merge(Samples other) {
        long[] all = Arrays.copyOf(sorted, sorted.length + other.sorted.length);
        System.arraycopy(other.sorted, 0, all, sorted.length, other.sorted.length);
        return new Samples(all, all.length);
    }

    /** The median of some figures (the mean of the middle two for an even count). */
    static double median(double... values) {
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        if (n == 0) {
            return Double.NaN;
        }
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
}
