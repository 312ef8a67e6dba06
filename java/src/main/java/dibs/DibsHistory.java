package dibs;

import java.time.Instant;
import java.util.AbstractList;
import java.util.List;
import java.util.Optional;

/**
 * The recorded runs of a job, or of one lock of a job, the newest first
 * ({@link DibsClient#history}), and what they prove: since when the history holds every run of
 * it ({@link #completeSince()}), so that a reader never takes a gap in the history for a job that
 * did not run. A list of {@link DibsRun}s; immutable.
 */
public final class DibsHistory extends AbstractList<DibsRun> {
    private final String name;
    private final String job;
    private final Instant completeSince;
    private final Instant evictedAt;
    private final Instant ownRunsEvictedAt;
    private final List<DibsRun> runs;

    DibsHistory(String name, Border.History history) {
        this.name = name;
        this.job = history.job;
        this.completeSince = Instant.ofEpochMilli(history.completeSinceMs);
        this.evictedAt = history.evictedAtMs < 0 ? null : Instant.ofEpochMilli(history.evictedAtMs);
        this.ownRunsEvictedAt = history.jobEvictedAtMs < 0 ? null : Instant.ofEpochMilli(history.jobEvictedAtMs);
        this.runs = DibsRun.all(history.runs);
    }

    @Override
    public DibsRun get(int index) {
        return runs.get(index);
    }

    @Override
    public int size() {
        return runs.size();
    }

    /** @return the job or lock name these runs were asked for */
    public String name() {
        return name;
    }

    /**
     * @return the job whose history holds the runs: {@link #name()} itself when it names a job, or
     *     the job of the lock it names (its runs alone are here); empty when nothing is recorded
     *     under that name as either
     */
    public Optional<String> job() {
        return Optional.ofNullable(job);
    }

    /**
     * @return since when every run of it that the history recorded is here: an earlier run may
     *     be missing (trimmed to the last 100 of its job, expired 40 days after its job's last
     *     run, or dropped with its job's history when more than about 1,000 jobs keep one)
     */
    public Instant completeSince() {
        return completeSince;
    }

    /**
     * @return when the history last dropped a job's runs to stay within its jobs, if it did in
     *     the last 40 days
     */
    public Optional<Instant> evictedAt() {
        return Optional.ofNullable(evictedAt);
    }

    /**
     * @return when this job's own runs were dropped to stay within the history's jobs (more than
     *     about 1,000 jobs record under the key prefix, and none of them had run only once), if
     *     they were in the last 40 days and it has recorded no run since: then whether it ran
     *     before cannot be told
     */
    public Optional<Instant> ownRunsEvictedAt() {
        return Optional.ofNullable(ownRunsEvictedAt);
    }

    @Override
    public String toString() {
        return "DibsHistory[" + name + (job == null ? ", nothing recorded" : job.equals(name) ? "" : ", of job " + job)
                + ", complete since " + completeSince + ", " + runs + "]";
    }
}
