package dibs;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** What happened, with wall-clock times, shown relative to the first tick. */
final class ChaosEvents {
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

    static String secs(long ms) {
        return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
    }

    /** A wall-clock time relative to the first tick, "t+12.345s". */
    static String rel(long ms, long firstTick) {
        return String.format(Locale.ROOT, "t%+.3fs", (ms - firstTick * 1000) / 1000.0);
    }
}
