package dibs;

import java.time.Duration;

/**
 * Hears the lifecycle of locks, to count or time them (Micrometer, logs, ...) without dibs
 * depending on any of that. Every method has an empty default; implement what you need. Set it
 * with {@link DibsOptions.Builder#listener}; it hears every lock taken with those options: the
 * locked calls of {@link Dibs} and {@link DibsClient}, and the {@link DibsLease}s of
 * {@link DibsClient#tryLock} (so the ShedLock provider's and Kotlin's locks too).
 *
 * <p>In this order: {@code attempt} (and {@code tick} for a tick's lock), then either
 * {@code skipped}, {@code unconfirmed}, or {@code acquired}, the locked work ({@code failed} if
 * the task threw), {@code finished}, and one of {@code released} or {@code expired}, or
 * {@code releaseFailed} when the release itself failed (that is logged too). Every
 * {@code acquired} is followed by one {@code finished}, however the release went. A call that
 * throws before the lock is won (an invalid argument, Redis unreachable) hears {@code attempt}
 * and {@code acquireFailed}, nothing more. Each call hears exactly one of {@code skipped},
 * {@code unconfirmed}, {@code acquired} and {@code acquireFailed}, on its own thread: after the
 * acquire has answered, where {@link Dibs#jobOf} gives the lock's job without asking Rust again.
 * For a locked call, the work is its task, and the methods run on the calling thread;
 * for a lease, the work lasts from {@code tryLock} to {@code release()}, and the release's
 * events run on the thread that releases it (the garbage collector's cleaner for a lease that
 * was dropped unreleased). A listener that throws is logged at WARNING and ignored: it never
 * breaks the lock's lifecycle or changes the call's outcome.
 */
public interface DibsListener {
    /** Before the lock is tried. */
    default void attempt(String lockName) {}

    /**
     * The call is for this tick of the job {@code lockName} ({@code executeOnce}): told right
     * after {@link #attempt}.
     *
     * @param lockName the job
     * @param tick the tick
     * @param catchUp whether it is a catch-up's run of a tick no instance ran in its time
     */
    default void tick(String lockName, String tick, boolean catchUp) {}

    /** The task threw {@code error} (the very object the caller gets); {@link #finished} follows. */
    default void failed(String lockName, Throwable error) {}

    /**
     * The call threw {@code error} (the very object the caller gets) before its lock was won or
     * refused: Redis unreachable or too slow, an argument it refused, a permission missing.
     * Nothing follows {@link #attempt} for it but this, and the task did not run.
     *
     * @param lockName the lock's name (the job, for a tick)
     * @param error what the call throws
     */
    default void acquireFailed(String lockName, Throwable error) {}

    /** Another instance holds the lock; the task will not run. */
    default void skipped(String lockName) {}

    /**
     * Durable acquire won the lock but could not confirm it on the replicas in time (a replica
     * lagging or cut off), so a failover could have lost it: it was given back, and the task
     * does not run. Neither skipped (no other instance holds the lock) nor an error; a warning
     * is logged too.
     */
    default void unconfirmed(String lockName) {}

    /** The lock is ours; the task runs next (or the lease is handed out). */
    default void acquired(String lockName) {}

    /**
     * {@link #acquired(String)}, with the lock's fencing token (see
     * {@link DibsLease#fencingToken()}). By default tells {@link #acquired(String)}.
     */
    default void acquired(String lockName, long fencingToken) {
        acquired(lockName);
    }

    /**
     * The task ended (returned or threw), after running for {@code duration}; for a lease, its
     * release began, {@code duration} after it was acquired.
     */
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

    /**
     * The lock is gone, but whether it was ours to the end cannot be proven: the release's reply
     * was lost (a dropped connection, a Redis restart) and its retry found no key, which the
     * first try may have deleted, or which expired while the task ran. Another instance may
     * have run concurrently. By default told as {@link #expired}: an unknown counts as no longer
     * ours, never as released.
     */
    default void unproven(String lockName, Duration heldFor) {
        expired(lockName, heldFor);
    }
}
