package dibs;

import java.time.Duration;

/**
 * Hears the lifecycle of locked calls, to count or time them (Micrometer, logs, ...) without
 * dibs depending on any of that. Every method has an empty default; implement what you need.
 * Set it with {@link DibsOptions.Builder#listener}.
 *
 * <p>Methods run on the calling thread, in this order: {@code attempt}, then either
 * {@code skipped}, or {@code acquired}, the task, {@code finished}, and one of {@code released}
 * or {@code expired}, or {@code releaseFailed} when the release itself failed (that is logged
 * too). A call that
 * throws before the task runs (an invalid argument, Redis unreachable) hears {@code attempt}
 * only. A listener that throws is logged at WARNING and ignored: it never breaks
 * the lock's lifecycle or changes the call's outcome.
 */
public interface DibsListener {
    /** Before the lock is tried. */
    default void attempt(String lockName) {}

    /** Another instance holds the lock; the task will not run. */
    default void skipped(String lockName) {}

    /** The lock is ours; the task runs next. */
    default void acquired(String lockName) {}

    /** The task ended (returned or threw), after running for {@code duration}. */
    default void finished(String lockName, Duration duration) {}

    /** The lock was still ours and was released (deleted, or kept for the rest of atLeast). */
    default void released(String lockName, Duration heldFor) {}

    /**
     * The lock was no longer ours at release, or keep-alive found it taken: it expired while
     * the task ran, and another instance may have run concurrently.
     */
    default void expired(String lockName, Duration heldFor) {}

    /**
     * The release could not be done (Redis unreachable, say): the lock stays until it expires
     * by itself, within atMost. The task's outcome is unchanged.
     */
    default void releaseFailed(String lockName, Duration heldFor) {}
}
