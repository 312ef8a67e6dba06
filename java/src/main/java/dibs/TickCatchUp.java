package dibs;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A tick with catch-up ({@link DibsCatchUp}): which earlier ticks no instance ran, by their
 * locks and the job's history (one look each, newest first: with {@code latest} until one that
 * ran, with {@code all} through the window), then the runs:
 * the missed ones the policy picks, oldest first, and the tick due now (if one is). Each run is a locked
 * call of its own, taken only when the history proves that its tick did not run, in the same
 * script as its {@code SET}: two instances never run one tick.
 */
final class TickCatchUp {
    private TickCatchUp() {}

    /**
     * Runs the ticks; returns those that ran here, oldest first. A task's exception, a tick that
     * could not be tried, or an earlier tick that could not be looked at (the ticks found missed
     * before it still run), does not stop the ticks after it, the tick due now included: the first
     * one is rethrown, as the same object, once every tick was tried, with the later ones added to
     * it as suppressed.
     */
    static List<String> run(
            ClientHandle client, String job, DibsCatchUp catchUp, LockDurations durations, Consumer<String> task) {
        List<Map.Entry<Instant, String>> missed = new ArrayList<>();
        Throwable first = null;
        try {
            missed(client, job, catchUp, missed);
        } catch (RuntimeException e) { // an earlier tick that could not be looked at: the tick due now still runs
            first = e;
        }
        List<Map.Entry<Instant, String>> runs = missed;
        if (catchUp.policy() == DibsCatchUp.Policy.LATEST && runs.size() > 1) {
            runs = runs.subList(0, 1);
        }
        Collections.reverse(runs); // oldest first
        List<String> ran = new ArrayList<>();
        for (Map.Entry<Instant, String> tick : runs) {
            first = runOne(client, job, tick, true, durations, task, ran, first);
        }
        if (catchUp.lastIsDueNow()) {
            Map.Entry<Instant, String> now = catchUp.ticks().lastEntry();
            if (catchUp.policy() == DibsCatchUp.Policy.SKIP) {
                now = new java.util.AbstractMap.SimpleEntry<>(null, now.getValue()); // the ordinary acquire
            }
            first = runOne(client, job, now, false, durations, task, ran, first);
        }
        if (first != null) {
            throw Lifecycle.<RuntimeException>sneaky(first);
        }
        return Collections.unmodifiableList(ran);
    }

    /**
     * Adds to {@code missed} the earlier ticks no instance ran, newest first, due after the job's
     * first recorded run (a new job missed none) and after any tick the history cannot prove: with
     * {@code latest}, those after the newest that ran; with {@code all}, every one. A tick older
     * than one that ran may still be missed (an acquire given back after a failover while a later
     * tick ran, its lock seen by another instance's look meanwhile), and {@code all} owes it.
     * Those found before a look that throws stay in it.
     */
    private static void missed(
            ClientHandle client, String job, DibsCatchUp catchUp, List<Map.Entry<Instant, String>> missed) {
        if (catchUp.policy() == DibsCatchUp.Policy.SKIP) {
            return;
        }
        NavigableMap<Instant, String> earlier =
                catchUp.lastIsDueNow() ? catchUp.ticks().headMap(catchUp.ticks().lastKey(), false) : catchUp.ticks();
        boolean sawRan = false;
        for (Map.Entry<Instant, String> tick : earlier.descendingMap().entrySet()) {
            Border.TickState state = NativeIo.tickState(
                    client.id, job, tick.getValue(), tick.getKey().toEpochMilli());
            if (state == Border.TickState.MISSED) {
                missed.add(tick);
            } else if (state == Border.TickState.RAN && catchUp.policy() == DibsCatchUp.Policy.ALL) {
                sawRan = true;
            } else {
                // Past a tick that ran, the history's reach ends where a busy job's always does:
                // the warning is for a gap since its newest run.
                if (state == Border.TickState.UNKNOWN && !sawRan) {
                    Log.warning("job '" + job + "': whether tick " + tick.getValue() + " ran is unknown (its history "
                            + "was trimmed past it, or dropped), so catch-up runs no tick before it");
                }
                break;
            }
        }
    }

    /** One tick's locked call; a {@code null} due time: the ordinary acquire. */
    private static Throwable runOne(
            ClientHandle client,
            String job,
            Map.Entry<Instant, String> tick,
            boolean catchUp,
            LockDurations durations,
            Consumer<String> task,
            List<String> ran,
            Throwable first) {
        boolean[] started = new boolean[1];
        Supplier<Void> body = () -> {
            started[0] = true;
            task.accept(tick.getValue());
            return null;
        };
        try {
            Lifecycle.run(client, job, tick.getValue(), durations, tick.getKey(), catchUp, body);
        } catch (Throwable t) { // a task's, or a tick that could not be tried: the ticks after it still are
            if (first == null) {
                first = t;
            } else if (first != t) {
                first.addSuppressed(t);
            }
        }
        if (started[0]) {
            ran.add(tick.getValue());
        }
        return first;
    }
}
