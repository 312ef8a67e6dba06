package dibs;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * One recorded run of a job, from its history in Redis ({@link DibsClient#history}): which
 * instance ran it, when, for how long, and how it ended. Every release records one, inside its
 * own script (no extra round trip); an operator's forced release is recorded too.
 */
public final class DibsRun {
    private final Instant recordedAt;
    private final String lockName;
    private final String host;
    private final long pid;
    private final String instanceId;
    private final Instant startedAt;
    private final Duration duration;
    private final long fencingToken;
    private final String ended;
    private final Boolean taskSucceeded;
    private final String forcedBy;
    private final Duration atLeast;
    private final boolean catchUp;

    private DibsRun(Border.Run run) {
        recordedAt = Instant.ofEpochMilli(run.recordedAtMs);
        lockName = run.lockName;
        host = run.host;
        pid = run.pid;
        instanceId = run.instanceId;
        startedAt = Instant.ofEpochMilli(run.startedAtMs);
        duration = Duration.ofMillis(run.durationMs);
        fencingToken = run.fencingToken;
        ended = run.ended;
        Border.Task task = run.task();
        taskSucceeded = task == Border.Task.UNKNOWN ? null : task == Border.Task.SUCCEEDED;
        forcedBy = run.forcedBy;
        atLeast = Duration.ofMillis(run.atLeastMs);
        catchUp = run.catchUp;
    }

    /** The native side's run. */
    static DibsRun of(Border.Run run) {
        return new DibsRun(run);
    }

    /** The native side's runs, in their order. */
    static List<DibsRun> all(Border.Run[] found) {
        List<DibsRun> runs = new ArrayList<>(found.length);
        for (Border.Run run : found) {
            runs.add(new DibsRun(run));
        }
        return Collections.unmodifiableList(runs);
    }

    /** @return when the release recorded the run, by the Redis server's clock */
    public Instant recordedAt() {
        return recordedAt;
    }

    /** @return the lock's whole name, its tick included ({@code report-2026-12-01}) */
    public String lockName() {
        return lockName;
    }

    /** @return the host name of the instance that ran it */
    public String host() {
        return host;
    }

    /** @return the process id of the instance that ran it */
    public long pid() {
        return pid;
    }

    /** @return the {@code instance-id} of the conn that ran it, if it had one */
    public Optional<String> instanceId() {
        return Optional.ofNullable(instanceId);
    }

    /** @return when the lock was acquired, by the holder's clock */
    public Instant startedAt() {
        return startedAt;
    }

    /** @return from acquisition to release; zero for a forced release */
    public Duration duration() {
        return duration;
    }

    /**
     * @return the run's atLeast: its lock stayed taken at least that long from acquisition, so
     *     another run of the same lock name could not start before; zero for a forced release
     */
    public Duration atLeast() {
        return atLeast;
    }

    /** @return the run's fencing token; 0 for a forced release */
    public long fencingToken() {
        return fencingToken;
    }

    /**
     * @return what became of the lock: {@code released}, {@code kept} (for the rest of atLeast),
     *     {@code no-longer-ours}, {@code lost} (keep-alive saw it taken), {@code unproven},
     *     {@code forced} (an operator's forced release); for a tick's run of which only the
     *     start is recorded, {@code running} (its holder holds its lock now) or {@code unended}
     *     (its holder died, or its release failed: how it ended is unknown)
     */
    public String ended() {
        return ended;
    }

    /** @return whether the lock was ours from acquisition to release */
    public boolean ownedToTheEnd() {
        return "released".equals(ended) || "kept".equals(ended);
    }

    /**
     * @return whether the task ran to success: false when it threw, when dibs did not see how it
     *     ended (see {@link #failed()}), and for a forced release
     */
    public boolean succeeded() {
        return Boolean.TRUE.equals(taskSucceeded);
    }

    /**
     * @return whether the task threw (or exited non-zero); false when it succeeded, when dibs did
     *     not see how it ended (a lease released without saying, ShedLock's bare provider, a run
     *     whose end was never recorded: neither this nor {@link #succeeded()}), and for a forced
     *     release
     */
    public boolean failed() {
        return Boolean.FALSE.equals(taskSucceeded);
    }

    /**
     * @return whether this was a catch-up's run: a tick that no instance ran in its time, run
     *     later by {@link DibsClient#executeOnce(String, DibsCatchUp, Duration,
     *     java.util.function.Consumer)}
     */
    public boolean catchUp() {
        return catchUp;
    }

    /** @return who forced the release ({@code user@host}), for a forced one */
    public Optional<String> forcedBy() {
        return Optional.ofNullable(forcedBy);
    }

    @Override
    public String toString() {
        return "DibsRun[" + lockName + " at " + recordedAt + " on " + host + " pid " + pid
                + (instanceId == null ? "" : " (" + instanceId + ")") + ", took " + duration.toMillis()
                + " ms, task "
                + (taskSucceeded == null ? "forced".equals(ended) ? "-" : "unknown" : taskSucceeded ? "ok" : "failed")
                + ", lock "
                + ended + (forcedBy == null ? "" : " by " + forcedBy) + (catchUp ? ", catch-up" : "") + "]";
    }
}
