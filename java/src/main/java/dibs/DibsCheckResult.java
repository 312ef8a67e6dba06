package dibs;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * How a job stands, as {@link DibsClient#check} read and judged it: the answer of
 * {@code dibs check}, from the same judge. Where the history or a scan cut short cannot prove an
 * answer, the job is {@link Standing#UNKNOWN}, with why ({@link #unknown}), never overdue or ok
 * on a guess. Immutable.
 */
public final class DibsCheckResult {
    /** How a job stands, one word, the worst first (as {@code dibs check} exits). */
    public enum Standing {
        /** A success within the window, long enough (or no window asked, or none due yet). */
        OK,
        /** No success within the window, and the history is complete over it: exit 1. */
        OVERDUE,
        /** The window's newest success took less than the minimum duration: exit 4. */
        SUSPECT,
        /** The history, or a scan cut short, cannot tell ({@link #unknown} says why): exit 3. */
        UNKNOWN,
        /** Late, but a run holding its lock now excuses it. */
        RUNNING,
        /** A run has held its lock longer than the maximum duration: exit 5. */
        TOO_LONG
    }

    private final Standing standing;
    private final boolean overdue;
    private final boolean suspect;
    private final boolean tooLong;
    private final String unknown;
    private final Duration window;
    private final Instant readAt;
    private final DibsHistory runs;
    private final DibsRun lastSuccess;
    private final HeldLock held;
    private final DibsListing<HeldLock> running;

    DibsCheckResult(String job, Border.Judged judged) {
        standing = Standing.valueOf(judged.standing().name());
        overdue = judged.overdue;
        suspect = judged.suspect;
        tooLong = judged.tooLong;
        unknown = judged.unknown;
        window = judged.windowMs < 0 ? null : Duration.ofMillis(judged.windowMs);
        readAt = Instant.ofEpochMilli(judged.readAtMs);
        runs = new DibsHistory(job, judged.history);
        lastSuccess = judged.lastSuccess == null ? null : DibsRun.of(judged.lastSuccess);
        held = judged.held == null ? null : new HeldLock(judged.held);
        running = judged.running == null ? null : new DibsListing<>(HeldLock.all(judged.running.locks), judged.running);
    }

    /** @return how the job stands, the worst of what holds */
    public Standing standing() {
        return standing;
    }

    /** @return whether the job is proven overdue (a run too long besides changes nothing of it) */
    public boolean overdue() {
        return overdue;
    }

    /** @return whether its last success is proven shorter than the minimum duration */
    public boolean suspect() {
        return suspect;
    }

    /** @return whether a run has held its lock longer than the maximum duration */
    public boolean tooLong() {
        return tooLong;
    }

    /** @return why its standing cannot be told, where it cannot */
    public Optional<String> unknown() {
        return Optional.ofNullable(unknown);
    }

    /** @return the window a success must fall in (a period's includes its grace), if one was asked */
    public Optional<Duration> window() {
        return Optional.ofNullable(window);
    }

    /** @return when it was read, by this process's clock */
    public Instant readAt() {
        return readAt;
    }

    /** @return its last few runs, newest first */
    public DibsHistory runs() {
        return runs;
    }

    /** @return its last success, however far back in the history */
    public Optional<DibsRun> lastSuccess() {
        return Optional.ofNullable(lastSuccess);
    }

    /** @return its own lock, where a run holds it now and the question lets that excuse it */
    public Optional<HeldLock> held() {
        return Optional.ofNullable(held);
    }

    /** @return the runs holding its locks now, where a rule needed them (a scan: see its completeness) */
    public Optional<DibsListing<HeldLock>> running() {
        return Optional.ofNullable(running);
    }

    @Override
    public String toString() {
        return standing + (unknown == null ? "" : " (" + unknown + ")") + ", last success "
                + (lastSuccess == null ? "none" : lastSuccess.recordedAt().toString());
    }
}
