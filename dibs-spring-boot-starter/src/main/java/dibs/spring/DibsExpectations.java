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
 */
public final class DibsExpectations implements DibsListener {
    /** Jobs whose {@code @Scheduled} method is looked for, at most: one stack walk per job. */
    private static final int MAX_LOOKED = 4096;

    private final ConcurrentMap<String, Expectation> byJob = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Boolean> looked = new ConcurrentHashMap<>();

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
        DibsScheduledTick.currentScheduled()
                .ifPresent(
                        s -> DibsScheduledTick.periodOf(s).ifPresent(period -> put(job, period, "@Scheduled", false)));
    }

    private void put(String job, Duration period, String source, boolean replace) {
        Objects.requireNonNull(job, "job");
        if (period == null || period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("the period of job '" + job + "' must be positive, got " + period);
        }
        Expectation e = new Expectation(period, Instant.now(), source);
        if (replace) {
            byJob.put(job, e);
        } else {
            byJob.putIfAbsent(job, e);
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
