package dibs.robustness;

import java.util.concurrent.atomic.AtomicLong;

/**
 * One call of a front end into dibs, as the ledger knows it: the instance {@code i}, front end
 * {@code f}, job {@code j} and call id {@code c} that every event of the call carries. The call id
 * is the instance and a counter of this process, so that the harness can pair a {@code call} with
 * its {@code outcome} and its runs even when a fault leaves one of them out.
 */
final class Call {
    private static final AtomicLong COUNTER = new AtomicLong();

    private final Ledger ledger;
    private final String instance;
    private final String frontEnd;
    private final String job;
    private final String id;

    private Call(Ledger ledger, String instance, String frontEnd, String job) {
        this.ledger = ledger;
        this.instance = instance;
        this.frontEnd = frontEnd;
        this.job = job;
        this.id = instance + "-" + COUNTER.incrementAndGet();
    }

    /** A new call, with the next call id of this process. */
    static Call next(Ledger ledger, String instance, String frontEnd, String job) {
        return new Call(ledger, instance, frontEnd, job);
    }

    /** @return the run id of this call's run of {@code tick}: the call id, and {@code :tick} when there is one */
    String runId(String tick) {
        return tick.isEmpty() ? id : id + ":" + tick;
    }

    /** {@code k=call}: the scheduler fired, dibs is about to be called. */
    void called(String lock, String tick, long due) {
        event("call", lock, tick, due, null, null, null);
    }

    /** {@code k=outcome}: dibs's call returned or threw, as {@code detail} says. */
    void outcome(String lock, String tick, long due, String detail) {
        event("outcome", lock, tick, due, null, null, detail);
    }

    /** {@code k=outcome} for a call that threw: {@code error:<ExceptionSimpleName>}. */
    void failed(String lock, String tick, long due, Throwable error) {
        outcome(lock, tick, due, "error:" + error.getClass().getSimpleName());
    }

    /**
     * One event of this call.
     *
     * @param token the fencing token, or null for an event without one
     * @param run the run id, or null for an event of the call rather than of a run
     * @param detail {@code d}, or null for none
     * @return the ledger's answer ({@code accepted} or {@code refused} for a write), "" if it failed
     */
    String event(String kind, String lock, String tick, long due, Long token, String run, String detail) {
        return ledger.send(
                "k", kind,
                "i", instance,
                "f", frontEnd,
                "j", job,
                "l", lock,
                "t", tick,
                "due", Long.toString(due),
                "tok", token == null ? null : token.toString(),
                "c", id,
                "r", run,
                "d", detail);
    }
}
