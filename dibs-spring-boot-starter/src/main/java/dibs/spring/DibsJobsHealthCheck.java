package dibs.spring;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code dibsJobs} health, whatever Boot's health API: UP while no expected job is proven
 * overdue, and none is suspect or running too long (the rules {@code dibs.jobs.min-duration},
 * {@code max-duration}), {@code dibs.jobs.overdue-status} ({@code OUT_OF_SERVICE} by default)
 * while one is (a
 * late job whose history cannot prove it did not run is listed as {@code unknown}, and stays UP), with each
 * overdue job and how long it has gone without a successful run on any instance. Boot's
 * liveness and readiness groups do not include it: a pod is not restarted or taken out of a
 * load balancer because a job is late, but {@code /actuator/health} says so.
 */
public final class DibsJobsHealthCheck {
    private final DibsJobs jobs;
    private final String overdueStatus;

    DibsJobsHealthCheck(DibsJobs jobs, String overdueStatus) {
        this.jobs = jobs;
        this.overdueStatus = overdueStatus;
    }

    /** @return the status code and the details; never a token or a password */
    public Result check() {
        Map<String, Object> details = new LinkedHashMap<>();
        List<DibsJobs.Job> overdue = jobs.overdue();
        Map<String, Object> each = new LinkedHashMap<>();
        for (DibsJobs.Job j : jobs.expected().values()) {
            Map<String, Object> job = new LinkedHashMap<>();
            job.put("overdue", j.overdue());
            j.unknown().ifPresent(why -> job.put("unknown", why));
            job.put(
                    "expectEvery",
                    j.expected() == null ? null : j.expected().every().toString());
            if (j.suspectOrNull() != null) {
                job.put("suspect", j.suspect()); // its last success was shorter than its minimum
            }
            if (j.tooLongOrNull() != null) {
                job.put("runningTooLong", j.tooLong());
            }
            job.put(
                    "lastSuccess",
                    j.lastSuccess().map(r -> r.recordedAt().toString()).orElse(null));
            job.put(
                    "lastSuccessAgeMs",
                    j.lastSuccessAge().map(d -> d.toMillis()).orElse(null));
            job.put("running", j.held().isPresent());
            each.put(j.name(), job);
        }
        details.put("jobs", each);
        if (jobs.failure() != null) {
            details.put("readFailure", jobs.failure());
        }
        List<String> unknown = jobs.expected().values().stream()
                .filter(j -> j.unknown().isPresent())
                .map(DibsJobs.Job::name)
                .toList();
        if (!unknown.isEmpty()) {
            details.put("unknown", unknown); // late, but the history cannot prove it did not run
        }
        List<DibsJobs.Job> flagged = jobs.flagged();
        if (overdue.isEmpty() && flagged.isEmpty()) {
            return new Result("UP", details);
        }
        if (!overdue.isEmpty()) {
            details.put("overdue", overdue.stream().map(DibsJobs.Job::name).toList());
        }
        List<String> suspect = flagged.stream()
                .filter(DibsJobs.Job::suspect)
                .map(DibsJobs.Job::name)
                .toList();
        if (!suspect.isEmpty()) {
            details.put("suspect", suspect);
        }
        List<String> tooLong = flagged.stream()
                .filter(DibsJobs.Job::tooLong)
                .map(DibsJobs.Job::name)
                .toList();
        if (!tooLong.isEmpty()) {
            details.put("runningTooLong", tooLong);
        }
        return new Result(overdueStatus, details);
    }

    /**
     * @param status a status code (UP, or the configured overdue status)
     * @param details each expected job
     */
    public record Result(String status, Map<String, Object> details) {}
}
