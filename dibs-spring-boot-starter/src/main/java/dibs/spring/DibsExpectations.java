package dibs.spring;

import dibs.Dibs;
import dibs.DibsListener;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * How often each job must run, for the overdue check of {@link DibsJobs}: from
 * {@code dibs.jobs.expect-every.<job>}, from {@link #expectEvery}, from start-up for a
 * {@code @Scheduled} method that names its job ({@link DibsJob}), or found by itself: the first
 * time a job's lock is tried from a {@code @Scheduled} method, that method's {@code fixedRate},
 * {@code fixedDelay} or cron gives the period (a ShedLock {@code @SchedulerLock} method too). A
 * call's job is the one its runs are recorded under ({@link Dibs#jobOf}).
 *
 * <p>A {@link CatchUp} method that does not name its job ({@link DibsJob}) is expected from
 * start-up too: its job is learned at its first attempt, and counted overdue from start-up, not
 * from then; until then the {@code dibsJobs} health lists the method as unnamed ({@link
 * #unnamed}), as nothing can be read of a job whose name is not known.
 */
public final class DibsExpectations implements DibsListener {
    /** Jobs whose {@code @Scheduled} method is looked for, at most: one stack walk per job. */
    private static final int MAX_LOOKED = 4096;
    /** Stack walks for one job's method, at most, while none is found. */
    private static final int MAX_WALKS = 8;

    private final ConcurrentMap<String, Expectation> byJob = new ConcurrentHashMap<>();
    /** Stack walks for a job's method that found none, by job; {@link #MAX_WALKS} once settled. */
    private final ConcurrentMap<String, java.util.concurrent.atomic.AtomicInteger> looked = new ConcurrentHashMap<>();
    /**
     * The methods expected from start-up whose job is not known yet, by {@link #methodName}: an
     * expectation per bean of the method.
     */
    private final ConcurrentMap<String, java.util.Deque<Expectation>> unnamed = new ConcurrentHashMap<>();

    /** Made by the starter, with the properties' periods. */
    DibsExpectations(Map<String, Duration> configured) {
        configured.forEach((job, period) -> put(job, period, "dibs.jobs.expect-every." + job, true));
    }

    /**
     * Says that {@code job} must run at least every {@code period}, fleet-wide; it replaces any
     * period found from its {@code @Scheduled} method.
     *
     * @param job the job (a lock name without its per-tick part)
     * @param period how often it runs
     */
    public void expectEvery(String job, Duration period) {
        put(job, period, "expectEvery", true);
    }

    /**
     * Expects {@code job} from now on (start-up), named up front ({@link DibsJob}), unless a
     * period is already configured for it.
     */
    void expectFromStart(String job, Duration period, String source) {
        put(job, period, source, false);
    }

    /**
     * Expects the job of {@code method} from now on (start-up), though its name is known only at
     * its first attempt; once per bean of the method, as each bean may lock a job of its own.
     */
    void expectMethod(java.lang.reflect.Method method, Duration period, String source) {
        positive(methodName(method), period);
        unnamed.computeIfAbsent(methodName(method), m -> new java.util.concurrent.ConcurrentLinkedDeque<>())
                .add(new Expectation(period, Instant.now(), source));
    }

    /**
     * @return the methods expected from start-up whose job is not known yet, as
     *     {@code Class.method()}: an expectation for each of its beans that has not tried a lock yet
     */
    public Map<String, java.util.List<Expectation>> unnamed() {
        Map<String, java.util.List<Expectation>> all = new java.util.TreeMap<>();
        unnamed.forEach((method, each) -> {
            if (!each.isEmpty()) {
                all.put(method, java.util.List.copyOf(each));
            }
        });
        return all;
    }

    static String methodName(java.lang.reflect.Method method) {
        return method.getDeclaringClass().getName() + "." + method.getName() + "()";
    }

    /** @return each job's expectation */
    public Map<String, Expectation> all() {
        return Map.copyOf(byJob);
    }

    /**
     * Finds the {@code @Scheduled} method a job's lock is tried from, by a stack walk: for its
     * period, or to give a method expected from start-up its job's name. A job is walked for until
     * a method is found, at most {@value #MAX_WALKS} times (its first tries may come from
     * elsewhere: a "run now" at start-up), and never once its expectation is settled. Walked once
     * the call's acquire has answered (with the lock's job: no crossing to Rust for it), or failed,
     * on the calling thread, its stack the same.
     */
    private void tried(String lockName) {
        String job;
        try {
            job = Dibs.jobOf(lockName);
        } catch (RuntimeException refused) {
            return; // a name the core refuses: its call was refused too, no job to expect
        }
        boolean known = byJob.containsKey(job);
        if (known && unnamed.isEmpty()) {
            return;
        }
        java.util.concurrent.atomic.AtomicInteger walks = looked.get(job);
        if (walks == null) {
            if (looked.size() >= MAX_LOOKED) {
                return;
            }
            walks = looked.computeIfAbsent(job, j -> new java.util.concurrent.atomic.AtomicInteger());
        }
        if (walks.get() >= MAX_WALKS) {
            return;
        }
        java.util.Optional<java.lang.reflect.Method> found = DibsScheduledTick.currentScheduledMethod();
        if (found.isEmpty()) {
            walks.incrementAndGet();
            return;
        }
        walks.set(MAX_WALKS); // settled: this job's method is known
        java.lang.reflect.Method m = found.get();
        java.util.Deque<Expectation> pending = unnamed.get(methodName(m));
        Expectation fromStart = pending == null ? null : pending.poll();
        if (fromStart != null) {
            byJob.putIfAbsent(job, fromStart); // overdue counted from start-up, not from now
        } else if (!known) {
            DibsScheduledTick.periodOf(DibsScheduledTick.scheduledOf(m))
                    .ifPresent(period -> put(job, period, "@Scheduled", false));
        }
    }

    @Override
    public void acquired(String lockName) {
        tried(lockName);
    }

    @Override
    public void skipped(String lockName) {
        tried(lockName);
    }

    @Override
    public void unconfirmed(String lockName) {
        tried(lockName);
    }

    @Override
    public void acquireFailed(String lockName, Throwable error) {
        tried(lockName);
    }

    private void put(String job, Duration period, String source, boolean replace) {
        Objects.requireNonNull(job, "job");
        positive("job '" + job + "'", period);
        Expectation e = new Expectation(period, Instant.now(), source);
        if (replace) {
            byJob.put(job, e);
        } else {
            byJob.putIfAbsent(job, e);
        }
    }

    private static void positive(String what, Duration period) {
        if (period == null || period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("the period of " + what + " must be positive, got " + period);
        }
    }

    /**
     * How often a job must run.
     *
     * @param every its period
     * @param since when this instance began expecting it: a job never recorded is overdue counted
     *     from then
     * @param source where the period came from
     */
    public record Expectation(Duration every, Instant since, String source) {}
}
