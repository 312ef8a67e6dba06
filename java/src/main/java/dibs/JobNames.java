package dibs;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The job of each lock name, as Rust's one rule says ({@code dibs::job_of}), remembered for the
 * names seen lately: the meters and expectations ask on every locked call, and a native call for
 * each would cost more than the map. Bounded: when full it starts afresh, so per-tick names
 * (new every tick) never grow it.
 */
final class JobNames {
    private static final int MAX = 1024;
    private static final ConcurrentHashMap<String, String> KNOWN = new ConcurrentHashMap<>();

    private JobNames() {}

    static String of(String lockName) {
        String job = KNOWN.get(lockName);
        if (job == null) {
            job = NativeLib.jobOf(lockName);
            if (KNOWN.size() >= MAX) {
                KNOWN.clear();
            }
            KNOWN.put(lockName, job);
        }
        return job;
    }
}
