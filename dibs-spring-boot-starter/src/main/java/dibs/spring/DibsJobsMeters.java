package dibs.spring;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Five gauges per job read (expected, or with a rule), tagged {@code lock} with the job's name, as the lock meters are
 * (Prometheus keeps a {@code job} label of its own): {@code dibs.job.last.run.age} (seconds since
 * its last successful run on any instance was recorded; NaN before one is, and while the view cannot be read) and
 * {@code dibs.job.overdue} (1 while proven overdue, else 0) and {@code dibs.job.unknown} (1 while
 * dibs cannot judge it: the view cannot be read (Redis down); late, or with a short success, where a run may be missing from the
 * history; or with a rule that a run missed by a scan cut short could change), {@code dibs.job.suspect} (1 while its
 * last success took less than {@code dibs.jobs.min-duration.<job>}) and
 * {@code dibs.job.running.too.long} (1 while a run has held its lock longer than
 * {@code dibs.jobs.max-duration.<job>}). Registered as each job becomes known.
 */
public final class DibsJobsMeters implements MeterBinder {
    private final DibsJobs jobs;
    private final Set<String> registered = ConcurrentHashMap.newKeySet();

    DibsJobsMeters(DibsJobs jobs) {
        this.jobs = jobs;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        jobs.onRefresh(view -> register(registry, view));
        register(registry, jobs.expected());
    }

    private void register(MeterRegistry registry, Map<String, DibsJobs.Job> view) {
        for (String name : view.keySet()) {
            if (!registered.add(name)) {
                continue;
            }
            Gauge.builder("dibs.job.last.run.age", jobs, j -> age(j, name))
                    .description("Seconds since the job's last successful run on any instance was recorded")
                    .baseUnit("seconds")
                    .tag(DibsMetrics.TAG, name)
                    .register(registry);
            flag(
                    registry,
                    name,
                    "dibs.job.overdue",
                    DibsJobs.Job::overdue,
                    "1 while the job is overdue on every instance, else 0");
            flag(
                    registry,
                    name,
                    "dibs.job.suspect",
                    DibsJobs.Job::suspect,
                    "1 while the job's last success took less than its minimum duration, else 0");
            flag(
                    registry,
                    name,
                    "dibs.job.running.too.long",
                    DibsJobs.Job::tooLong,
                    "1 while a run of the job has held its lock longer than its maximum duration, else 0");
            flag(
                    registry,
                    name,
                    "dibs.job.unknown",
                    job -> job.unknown().isPresent(),
                    "1 while the job is late but its history cannot prove it did not run, else 0");
        }
    }

    /** A gauge of the job {@code name}: 1 while {@code holds} of it as last read, else 0. */
    private void flag(
            MeterRegistry registry, String name, String meter, Predicate<DibsJobs.Job> holds, String description) {
        Gauge.builder(meter, jobs, j -> {
                    DibsJobs.Job job = j.expected().get(name);
                    return job != null && holds.test(job) ? 1 : 0;
                })
                .description(description)
                .tag(DibsMetrics.TAG, name)
                .register(registry);
    }

    private static double age(DibsJobs jobs, String name) {
        DibsJobs.Job job = jobs.expected().get(name);
        // While the job cannot be read, a later success may be there: the age is not known.
        return job == null || jobs.unread(name)
                ? Double.NaN
                : job.lastSuccessAge().map(d -> d.toMillis() / 1000.0).orElse(Double.NaN);
    }
}
