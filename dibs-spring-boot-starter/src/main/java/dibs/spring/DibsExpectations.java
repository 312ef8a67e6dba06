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

    private final ConcurrentMap<String, Expectation> byJob = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Boolean> looked = new ConcurrentHashMap<>();
    /** The methods expected from start-up whose job is not known yet, by {@link #methodName}. */
    private final ConcurrentMap<String, Expectation> unnamed = new ConcurrentHashMap<>();

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
     * its first attempt.
     */
    void expectMethod(java.lang.reflect.Method method, Duration period, String source) {
        positive(methodName(method), period);
        unnamed.putIfAbsent(methodName(method), new Expectation(period, Instant.now(), source));
    }

    /**
     * @return the methods expected from start-up that have not tried a lock yet, as
     *     {@code Class.method()}, with their expectation
     */
    public Map<String, Expectation> unnamed() {
        return Map.copyOf(unnamed);
    }

    static String methodName(java.lang.reflect.Method method) {
        return method.getDeclaringClass().getName() + "." + method.getName() + "()";
    }

    /** @return each job's expectation */
    public Map<String, Expectation> all() {
        return Map.copyOf(byJob);
    }

    @Override
    public void attempt(String lockName) {
        String job = Dibs.jobOf(lockName);
        if (byJob.containsKey(job) || looked.size() >= MAX_LOOKED || looked.putIfAbsent(job, Boolean.TRUE) != null) {
            return;
        }
        DibsScheduledTick.currentScheduledMethod().ifPresent(m -> {
            Expectation fromStart = unnamed.remove(methodName(m));
            if (fromStart != null) {
                byJob.putIfAbsent(job, fromStart); // overdue counted from start-up, not from now
            } else {
                DibsScheduledTick.periodOf(DibsScheduledTick.scheduledOf(m))
                        .ifPresent(period -> put(job, period, "@Scheduled", false));
            }
        });
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
