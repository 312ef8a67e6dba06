package dibs.spring;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The {@code dibsJobs} health, whatever Boot's health API: UP while no expected job is proven
 * overdue, and none is suspect or running too long (the rules {@code dibs.jobs.min-duration},
 * {@code max-duration}), {@code dibs.jobs.overdue-status} ({@code OUT_OF_SERVICE} by default)
 * while one is, with each
 * overdue job and how long it has gone without a successful run on any instance; else
 * {@code UNKNOWN} while a job cannot be judged (a run may be missing from the history: its runs
 * dropped by a flood of other jobs, trimmed; or from a scan cut short; or the view cannot be read,
 * {@code readFailure} says why), listed as
 * {@code unknown} with why. A {@link CatchUp} method expected from start-up whose job's name is
 * not known yet is listed as {@code unnamed}, and leaves it UP. Boot's
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
                    jobs.unread(j.name())
                            ? null
                            : j.lastSuccessAge().map(d -> d.toMillis()).orElse(null));
            job.put("running", j.held().isPresent());
            each.put(j.name(), job);
        }
        details.put("jobs", each);
        if (jobs.failure() != null) {
            details.put("readFailure", jobs.failure());
        }
        Map<String, Object> unnamed = new LinkedHashMap<>();
        jobs.unnamed().forEach((method, pending) -> {
            DibsExpectations.Expectation e = pending.get(0);
            String beans = pending.size() == 1 ? "" : " (" + pending.size() + " of its beans)";
            unnamed.put(
                    method,
                    "expected every " + e.every() + " since " + e.since() + " (" + e.source() + ")" + beans
                            + "; its job is known at its first attempt, none yet: name it with @DibsJob"
                            + " to have it read from start-up");
        });
        if (!unnamed.isEmpty()) {
            details.put("unnamed", unnamed); // nothing can be read of a job whose name is not known
        }
        List<String> unknown = names(j -> j.unknown().isPresent());
        if (!unknown.isEmpty()) {
            details.put("unknown", unknown); // a run may be missing: from the history, or a scan
        }
        Map<String, List<String>> flagged = new LinkedHashMap<>();
        flagged.put("overdue", overdue.stream().map(DibsJobs.Job::name).toList());
        flagged.put("suspect", names(DibsJobs.Job::suspect));
        flagged.put("runningTooLong", names(DibsJobs.Job::tooLong));
        flagged.values().removeIf(List::isEmpty);
        if (flagged.isEmpty()) {
            // Unknown is not healthy: a job whose runs the history lost (dropped by a flood of
            // other jobs' names, trimmed, a scan cut short) would otherwise read as fine.
            return new Result(unknown.isEmpty() ? "UP" : "UNKNOWN", details);
        }
        details.putAll(flagged);
        return new Result(overdueStatus, details);
    }

    /** The names of the jobs as last read of which {@code holds}. */
    private List<String> names(Predicate<DibsJobs.Job> holds) {
        return jobs.expected().values().stream()
                .filter(holds)
                .map(DibsJobs.Job::name)
                .toList();
    }

    /**
     * @param status a status code (UP, or the configured overdue status)
     * @param details each expected job
     */
    public record Result(String status, Map<String, Object> details) {}
}
