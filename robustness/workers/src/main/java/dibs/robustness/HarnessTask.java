package dibs.robustness;

/**
 * The task body every front end runs under its lock, the same for all of them so that the
 * harness judges them alike: {@code start}, a fenced {@code write}, some work, a second
 * {@code write}, and {@code end} in a finally. Two writes, apart in time, give a holder paused
 * mid-task (SIGSTOP) a write after another holder's, which the fenced store must refuse.
 * A write's answer does not change what the task does: the harness audits the answers.
 */
final class HarnessTask {
    private HarnessTask() {}

    /**
     * Runs the task for one run of {@code call}.
     *
     * @param lock the resource: the lock's name, or {@code job@tick} for a tick
     * @param tick the tick's name, "" when none
     * @param due the tick's due time in epoch ms as this instance's schedule computed it, 0 when none
     * @param token the run's fencing token
     * @param workMs how long the work between the writes takes
     */
    static void run(Call call, String lock, String tick, long due, long token, long workMs) {
        String run = call.runId(tick);
        call.event("start", lock, tick, due, token, run, null);
        boolean ok = false;
        try {
            call.event("write", lock, tick, due, token, run, null);
            sleep(workMs);
            call.event("write", lock, tick, due, token, run, null);
            ok = true;
        } finally {
            call.event("end", lock, tick, due, token, run, ok ? "ok" : "threw");
        }
    }

    /**
     * Sleeps; an interrupt (dibs's interrupt-on-lost, a shutdown) ends the task by a throw, with
     * the thread's flag set again for whoever looks next. A time already past sleeps not at all.
     */
    static void sleep(long ms) {
        try {
            Thread.sleep(Math.max(0, ms));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted in the task's work", e);
        }
    }
}
