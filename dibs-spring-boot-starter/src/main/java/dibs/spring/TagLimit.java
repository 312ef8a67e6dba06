package dibs.spring;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The bound on the values of the {@code lock} tag of dibs's meters and observations
 * ({@code dibs.metrics.max-tags}): the first {@code max} values seen are kept, and every later
 * one is counted under {@value #OTHER}, by the meters and the observations alike (one instance,
 * so the two keep the same values). A service that locks {@code order-<uuid>} would otherwise
 * make a time series per order, in the JVM and in Prometheus. Said once, in a warning.
 */
final class TagLimit {
    /** Where the values past the limit are counted. */
    static final String OTHER = "_other";

    private static final System.Logger LOG = System.getLogger("dibs.spring");

    private final int max;
    private final Set<String> kept = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean warned = new AtomicBoolean();

    /** @param max at least 1 ({@code StartupChecks} checks the property) */
    TagLimit(int max) {
        this.max = max;
    }

    /**
     * The tag of {@code lockName} by {@code tagOf}, within the bound; {@value #OTHER} where
     * {@code tagOf} throws (a name the core refuses, as its call was refused too): every call is
     * counted, whatever its name.
     */
    String of(DibsLockTag tagOf, String lockName) {
        String tag;
        try {
            tag = tagOf.apply(lockName);
        } catch (RuntimeException refused) {
            return OTHER;
        }
        return of(tag);
    }

    /** {@code tag}, or {@value #OTHER} once {@code max} other values are kept. */
    String of(String tag) {
        if (kept.contains(tag)) {
            return tag;
        }
        synchronized (this) {
            if (kept.size() < max) {
                kept.add(tag);
                return tag;
            }
        }
        if (warned.compareAndSet(false, true)) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "dibs: more than " + max + " values of the meters' 'lock' tag (dibs.metrics.max-tags); the rest"
                            + " are counted under '" + OTHER + "'. Lock names that change per call (an id, a"
                            + " date) make one job each: declare a DibsLockTag bean that maps them to a few.");
        }
        return OTHER;
    }
}
