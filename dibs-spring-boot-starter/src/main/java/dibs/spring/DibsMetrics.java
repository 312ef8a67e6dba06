package dibs.spring;

import dibs.DibsListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * dibs's Micrometer meters, fed by {@link DibsListener} events, each tagged {@code lock} by a
 * {@link DibsLockTag}:
 * <ul>
 *   <li>{@code dibs.lock.attempts}: counter, every try of a lock;
 *   <li>{@code dibs.lock.acquired}: counter, tries that won the lock (the task ran);
 *   <li>{@code dibs.lock.skipped}: counter, tries that found the lock held elsewhere;
 *   <li>{@code dibs.lock.unconfirmed}: counter, locks won but not acknowledged by the replicas in
 *       time (durable acquire): given back, the task not run;
 *   <li>{@code dibs.lock.execution}: timer, how long the tasks ran;
 *   <li>{@code dibs.lock.expired}: counter, locks found no longer ours at release (another
 *       instance may have run concurrently);
 *   <li>{@code dibs.lock.release.failures}: counter, releases that could not be done;
 *   <li>{@code dibs.lock.unproven}: counter, locks gone at a retried release, without proof that
 *       they were ours to the end (another instance may have run concurrently);
 *   <li>{@code dibs.lock.active}: gauge, tasks of this instance running under their lock now.
 * </ul>
 * Meters are made on first use of a tag value and kept in a map, so an event costs a map
 * look-up, not a registry look-up. At most {@code dibs.metrics.max-tags} values of the tag are
 * kept (1,000 by default); the calls of the rest are counted under {@code lock=_other}.
 */
public final class DibsMetrics implements DibsListener {
    static final String TAG = "lock";

    /** The default of {@code dibs.metrics.max-tags}. */
    static final int MAX_TAGS = 1000;

    private final MeterRegistry registry;
    private final DibsLockTag tagOf;
    private final TagLimit limit;
    private final ConcurrentMap<String, Meters> meters = new ConcurrentHashMap<>();

    /**
     * @param registry where the meters go
     * @param tagOf lock name to tag value
     */
    public DibsMetrics(MeterRegistry registry, DibsLockTag tagOf) {
        this(registry, tagOf, new TagLimit(MAX_TAGS));
    }

    DibsMetrics(MeterRegistry registry, DibsLockTag tagOf, TagLimit limit) {
        this.registry = registry;
        this.tagOf = tagOf;
        this.limit = limit;
    }

    // An attempt is counted once its acquire has answered (with the lock's job: no crossing to
    // Rust for it), or failed.

    @Override
    public void acquireFailed(String lockName, Throwable error) {
        of(lockName).attempts.increment();
    }

    @Override
    public void skipped(String lockName) {
        Meters m = of(lockName);
        m.attempts.increment();
        m.skipped.increment();
    }

    @Override
    public void unconfirmed(String lockName) {
        Meters m = of(lockName);
        m.attempts.increment();
        m.unconfirmed.increment();
    }

    @Override
    public void acquired(String lockName) {
        Meters m = of(lockName);
        m.attempts.increment();
        m.acquired.increment();
        m.active.incrementAndGet();
    }

    @Override
    public void finished(String lockName, Duration duration) {
        Meters m = of(lockName);
        m.execution.record(duration);
        m.active.decrementAndGet();
    }

    @Override
    public void expired(String lockName, Duration heldFor) {
        of(lockName).expired.increment();
    }

    @Override
    public void releaseFailed(String lockName, Duration heldFor) {
        of(lockName).releaseFailures.increment();
    }

    @Override
    public void unproven(String lockName, Duration heldFor) {
        of(lockName).unproven.increment();
    }

    private Meters of(String lockName) {
        String tag = limit.of(tagOf, lockName);
        Meters m = meters.get(tag);
        return m != null ? m : meters.computeIfAbsent(tag, t -> new Meters(registry, Tags.of(TAG, t)));
    }

    private static final class Meters {
        final Counter attempts;
        final Counter acquired;
        final Counter skipped;
        final Counter unconfirmed;
        final Timer execution;
        final Counter expired;
        final Counter releaseFailures;
        final Counter unproven;
        final AtomicInteger active = new AtomicInteger();

        Meters(MeterRegistry r, Tags tags) {
            attempts = Counter.builder("dibs.lock.attempts")
                    .description("tries of a lock")
                    .tags(tags)
                    .register(r);
            acquired = Counter.builder("dibs.lock.acquired")
                    .description("tries that won the lock")
                    .tags(tags)
                    .register(r);
            skipped = Counter.builder("dibs.lock.skipped")
                    .description("tries that found the lock held elsewhere")
                    .tags(tags)
                    .register(r);
            unconfirmed = Counter.builder("dibs.lock.unconfirmed")
                    .description("locks won but not acknowledged by the replicas in time: given back, not run")
                    .tags(tags)
                    .register(r);
            execution = Timer.builder("dibs.lock.execution")
                    .description("run time of locked tasks")
                    .tags(tags)
                    .register(r);
            expired = Counter.builder("dibs.lock.expired")
                    .description("locks no longer ours at release: another instance may have run too")
                    .tags(tags)
                    .register(r);
            releaseFailures = Counter.builder("dibs.lock.release.failures")
                    .description("releases that could not be done; the lock expires by itself")
                    .tags(tags)
                    .register(r);
            unproven = Counter.builder("dibs.lock.unproven")
                    .description("locks gone at a retried release, not proven ours to the end: another instance "
                            + "may have run too")
                    .tags(tags)
                    .register(r);
            // The gauge holds this AtomicInteger strongly (the map keeps it alive too).
            Gauge.builder("dibs.lock.active", active, AtomicInteger::get)
                    .description("locked tasks of this instance running now")
                    .tags(tags)
                    .strongReference(true)
                    .register(r);
        }
    }
}
