package dibs;

import java.time.Duration;
import java.time.Instant;

/**
 * What {@link DibsClient#check} asks of a job: the question of {@code dibs check}, answered by the
 * same judge (the Rust core's), so that both always agree. Immutable; each method returns a new
 * question. Every duration is checked by the judge, before any I/O, with an error that names it.
 *
 * <pre>{@code
 * DibsCheckResult nightly = dibs.check("nightly-report",
 *         DibsCheck.within(Duration.ofHours(26)).minDuration(Duration.ofMinutes(1)));
 * }</pre>
 */
public final class DibsCheck {
    private final Duration within;
    private final Duration period;
    private final Duration grace;
    private final Instant expectedSince;
    private final Duration minDuration;
    private final Duration maxDuration;
    private final Duration graceAfterStart;
    private final Duration scanBudget;

    private DibsCheck(
            Duration within,
            Duration period,
            Duration grace,
            Instant expectedSince,
            Duration minDuration,
            Duration maxDuration,
            Duration graceAfterStart,
            Duration scanBudget) {
        this.within = within;
        this.period = period;
        this.grace = grace;
        this.expectedSince = expectedSince;
        this.minDuration = minDuration;
        this.maxDuration = maxDuration;
        this.graceAfterStart = graceAfterStart;
        this.scanBudget = scanBudget;
    }

    /**
     * The dead-man's switch: the job ran to success within {@code window} ({@code dibs check
     * --within}). A success counts from when its lock was free for the next run: a lock kept for
     * the rest of its atLeast after its run was not.
     *
     * @param window how far back a success proves the job ran
     * @return the question
     */
    public static DibsCheck within(Duration window) {
        Lifecycle.checkNotNull(window, "within");
        return new DibsCheck(window, null, null, null, null, null, null, null);
    }

    /**
     * A job expected every {@code period} (its cron's or {@code fixedRate}'s): late after the
     * period and a grace ({@link #grace}; by default half the period, at most an hour), and not
     * late while a run holds the job's own lock.
     *
     * @param period how often the job runs
     * @return the question
     */
    public static DibsCheck every(Duration period) {
        Lifecycle.checkNotNull(period, "period");
        return new DibsCheck(null, period, null, null, null, null, null, null);
    }

    /**
     * No dead-man's switch: the further rules alone ({@link #minDuration}, {@link #maxDuration}).
     *
     * @return the question
     */
    public static DibsCheck rulesOnly() {
        return new DibsCheck(null, null, null, null, null, null, null, null);
    }

    /**
     * @param grace how late a job expected {@link #every} period may be
     * @return this question with that grace
     */
    public DibsCheck grace(Duration grace) {
        return new DibsCheck(
                within, period, grace, expectedSince, minDuration, maxDuration, graceAfterStart, scanBudget);
    }

    /**
     * @param since when the asker began to expect the job: with no success recorded, it is not
     *     late before a whole window has passed since then
     * @return this question with that start
     */
    public DibsCheck expectedSince(Instant since) {
        return new DibsCheck(within, period, grace, since, minDuration, maxDuration, graceAfterStart, scanBudget);
    }

    /**
     * @param min a success that took less is suspect: too brief to have done its work
     * @return this question with that rule
     */
    public DibsCheck minDuration(Duration min) {
        return new DibsCheck(within, period, grace, expectedSince, min, maxDuration, graceAfterStart, scanBudget);
    }

    /**
     * @param max a run that has held its lock longer runs too long (stuck, or slowed)
     * @return this question with that rule
     */
    public DibsCheck maxDuration(Duration max) {
        return new DibsCheck(within, period, grace, expectedSince, minDuration, max, graceAfterStart, scanBudget);
    }

    /**
     * @param grace a late job whose run started less than this ago and runs now is running, not
     *     late (in place of a run holding the job's own lock, for a job expected {@link #every})
     * @return this question with that rule
     */
    public DibsCheck graceAfterStart(Duration grace) {
        return new DibsCheck(within, period, this.grace, expectedSince, minDuration, maxDuration, grace, scanBudget);
    }

    /**
     * @param budget how long the scan for the job's running locks may take (for
     *     {@link #maxDuration} and {@link #graceAfterStart}): more than 0, at most 1 hour; 5
     *     seconds by default
     * @return this question with that budget
     */
    public DibsCheck scanBudget(Duration budget) {
        return new DibsCheck(within, period, grace, expectedSince, minDuration, maxDuration, graceAfterStart, budget);
    }

    /** Asks the judge, through the border (durations in ms, -1 for none). */
    Border.Judged ask(long handle, String job) {
        return NativeIo.check(
                handle,
                job,
                ms(within),
                ms(period),
                ms(grace),
                epochMs(expectedSince),
                ms(minDuration),
                ms(maxDuration),
                ms(graceAfterStart),
                ms(scanBudget));
    }

    /**
     * An instant as the border carries it: -1 for none, saturated to 0 and {@link Long#MAX_VALUE}
     * (the judge refuses one in the future, naming it).
     */
    private static long epochMs(Instant at) {
        if (at == null) {
            return -1;
        }
        try {
            return Math.max(0, at.toEpochMilli());
        } catch (ArithmeticException beyond) {
            return at.isBefore(Instant.EPOCH) ? 0 : Long.MAX_VALUE;
        }
    }

    /**
     * A duration as the border carries it: -1 for none, {@link Long#MIN_VALUE} for a negative one
     * (the judge refuses it, naming it), a positive one at least 1 ms.
     */
    static long ms(Duration d) {
        if (d == null) {
            return -1;
        }
        if (d.isNegative()) {
            return Long.MIN_VALUE;
        }
        if (d.isZero()) {
            return 0;
        }
        try {
            return Math.max(1, d.toMillis());
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    @Override
    public String toString() {
        return "DibsCheck[within=" + within + ", every=" + period + ", grace=" + grace + ", expectedSince="
                + expectedSince + ", minDuration=" + minDuration + ", maxDuration=" + maxDuration
                + ", graceAfterStart=" + graceAfterStart + ", scanBudget=" + scanBudget + "]";
    }
}
