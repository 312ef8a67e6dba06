package dibs;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The ticks of a job's schedule within a catch-up window, and what to do with those that no
 * instance ran in their time, for {@link DibsClient#executeOnce(String, DibsCatchUp,
 * java.time.Duration, java.util.function.Consumer)}: the tick due now, last, and the ones due
 * before it. A deploy that restarted every instance at 02:00, or a Redis failover at that
 * minute, then costs no day's report: the next instance to fire runs the missed tick once.
 *
 * <pre>{@code
 * DibsCatchUp ticks = DibsCatchUp.latest(Map.of(
 *         yesterdayAt2, "2026-12-05",
 *         todayAt2, "2026-12-06"));   // the last is the tick due now
 * dibs.executeOnce("nightly-report", ticks, Duration.ofHours(1), tick -> buildReport(tick));
 * }</pre>
 *
 * <p>A tick ran when its lock is there (running, or its done-mark) or when the job's run
 * history holds a run of it, whatever its ending. The missed ticks are those that did not run,
 * due after the job's first recorded run (a new job has none): with {@link Policy#LATEST}, after
 * the newest tick that ran; with {@link Policy#ALL}, anywhere in the window (a look each). When
 * the history cannot prove whether a tick ran (it was trimmed past
 * the tick, or dropped), the tick is not run and a warning says so. So catch-up needs the run
 * history (a conn's default), a server that is not a Cluster, and ticks due within the last 30
 * days. In Spring Boot, {@code DibsScheduledTick.catchUp()} makes these ticks from the
 * {@code @Scheduled} cron.
 */
public final class DibsCatchUp {
    /** What to do with the ticks no instance ran, named as Temporal's schedules name them. */
    public enum Policy {
        /** Run none of them: only the tick due now (as {@code executeOnce} without catch-up). */
        SKIP,
        /** Run the newest missed tick once, then the tick due now. */
        LATEST,
        /** Run every missed tick, oldest first, then the tick due now. */
        ALL
    }

    /** The most ticks one catch-up looks at: a window of more is cut to its newest ones. */
    public static final int MAX_TICKS = 1000;

    /**
     * How far back a catch-up looks at most (30 days): the core's limit, inside the history's
     * 40 days; a tick due longer ago is beyond its reach, not looked at and not run.
     */
    public static final Duration MAX_WINDOW = Duration.ofMillis(Border.MAX_CATCH_UP_AGE_MS);

    private final Policy policy;
    private final NavigableMap<Instant, String> ticks;
    private final boolean dueNow;

    private DibsCatchUp(Policy policy, NavigableMap<Instant, String> ticks, boolean dueNow) {
        this.policy = policy;
        this.ticks = ticks;
        this.dueNow = dueNow;
    }

    /**
     * @param policy what to do with the ticks no instance ran
     * @param ticks each tick's name by the time it was due: the last is the tick due now, the
     *     others are the window's earlier ticks; at most the {@value #MAX_TICKS} newest are kept
     * @return the catch-up
     * @throws IllegalArgumentException if either is null, {@code ticks} is empty or holds a null
     */
    public static DibsCatchUp of(Policy policy, Map<Instant, String> ticks) {
        return new DibsCatchUp(policy, sorted(policy, ticks), true);
    }

    /**
     * The ticks of a window that has passed, none of them due now: what an instance that starts
     * finds, when its scheduler's first fire is still to come. The policy picks among the
     * missed ones, the last included; nothing else runs.
     *
     * @param policy what to do with the ticks no instance ran
     * @param ticks each tick's name by the time it was due, all past
     * @return the catch-up
     * @throws IllegalArgumentException if either is null, {@code ticks} is empty or holds a null
     */
    public static DibsCatchUp ofPast(Policy policy, Map<Instant, String> ticks) {
        return new DibsCatchUp(policy, sorted(policy, ticks), false);
    }

    private static NavigableMap<Instant, String> sorted(Policy policy, Map<Instant, String> ticks) {
        Lifecycle.checkNotNull(policy, "policy");
        Lifecycle.checkNotNull(ticks, "ticks");
        if (ticks.isEmpty()) {
            throw new DibsArgumentException("ticks", "ticks must hold at least the tick due now");
        }
        TreeMap<Instant, String> sorted = new TreeMap<>();
        for (Map.Entry<Instant, String> tick : ticks.entrySet()) {
            if (tick.getKey() == null || tick.getValue() == null) {
                throw new DibsArgumentException("ticks", "ticks must hold no null due time or name");
            }
            sorted.put(tick.getKey(), tick.getValue());
            if (sorted.size() > MAX_TICKS) {
                sorted.pollFirstEntry();
            }
        }
        return Collections.unmodifiableNavigableMap(sorted);
    }

    /** @return {@link #of} with {@link Policy#LATEST} */
    public static DibsCatchUp latest(Map<Instant, String> ticks) {
        return of(Policy.LATEST, ticks);
    }

    /** @return {@link #of} with {@link Policy#ALL} */
    public static DibsCatchUp all(Map<Instant, String> ticks) {
        return of(Policy.ALL, ticks);
    }

    /** @return {@link #of} with {@link Policy#SKIP}: the tick due now alone */
    public static DibsCatchUp skip(Instant due, String tick) {
        return of(Policy.SKIP, Collections.singletonMap(due, tick));
    }

    /** @return what is done with the ticks no instance ran */
    public Policy policy() {
        return policy;
    }

    /** @return each tick's name by its due time, oldest first; the last is the tick due now */
    public NavigableMap<Instant, String> ticks() {
        return ticks;
    }

    /**
     * @return whether the last of {@link #ticks()} is due now ({@link #of}), or every tick has
     *     passed ({@link #ofPast})
     */
    public boolean lastIsDueNow() {
        return dueNow;
    }

    @Override
    public String toString() {
        return "DibsCatchUp[" + policy + ", " + ticks.size() + " ticks, last "
                + ticks.lastEntry().getValue() + (dueNow ? " due now" : " past") + "]";
    }
}
