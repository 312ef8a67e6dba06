// Generated from crates/dibs-jni/src/border/natives.rs: do not edit. A unit test of dibs-jni (in the quick
// lane) fails when this file is not what those declarations generate;
// DIBS_BORDER_WRITE=1 cargo test -p dibs-jni --lib border writes it.
package dibs;

import dibs.loader.NativeLoader;

/**
 * The JNI boundary: the only methods of dibs implemented in Rust ({@code Java_dibs_NativeLib_*}),
 * declared once with the Rust functions that implement them, whose signatures the compiler checks
 * against these ({@code crates/dibs-jni/src/border/natives.rs}); what crosses besides the arguments
 * ({@link Border}'s records and codes) is declared beside them. Loading the class loads the native
 * library (see {@link NativeLoader}).
 */
final class NativeLib {
    static {
        NativeLoader.load();
        String built;
        try {
            built = fingerprint();
        } catch (UnsatisfiedLinkError older) {
            built = "none";
        }
        if (!Border.FINGERPRINT.equals(built)) {
            throw new UnsatisfiedLinkError("the dibs native library loaded is of another build than this jar"
                    + " (the JNI border's fingerprint " + built + ", this jar's " + Border.FINGERPRINT
                    + "): use the library of this jar, or build both from one source");
        }
    }

    private NativeLib() {}

    /**
     * The fingerprint of the JNI border this library was built with: a hash of the generated
     * {@code Border.java} and {@code NativeLib.java}. This class's initializer refuses a library
     * whose fingerprint differs (another build of dibs: its methods may take other arguments).
     */
    static native String fingerprint();

    /**
     * Parses a URI conn spec; returns an opaque handle (&gt; 0). Shared: the process-wide pooled
     * client of that spec, which equal specs share. Owned: a client with a pool of its own, for a
     * {@link DibsClient}, dropped by {@link #close}. No network I/O.
     *
     * @throws DibsArgumentException on a bad spec, naming the key at fault (the message never
     *     shows a password)
     */
    static native long connectUri(String uri, boolean owned);

    /**
     * Same as {@link #connectUri}, for a {@link java.util.Map} conn flattened by
     * {@link ConnCache#flatten} into {@code key, tag, value} triples.
     *
     * @throws DibsArgumentException on a bad spec (unknown key, wrong type, bad value)
     */
    static native long connectMap(String[] tokens, boolean owned);

    /** {@link ConnCache#describe} of a URI conn. */
    static native String describeUri(String uri);

    /** {@link ConnCache#describe} of a Map conn, flattened. */
    static native String describeMap(String[] tokens);

    /** Drops the pool of an owned handle. Closing twice is harmless. */
    static native void close(long handle);

    /**
     * Validates the arguments, then {@code SET key token NX PX atMost}, and says how it went as
     * {@link #release} does. With keep-alive in the conn, a Rust thread (which never calls the
     * JVM) extends the lock until {@link #release}.
     *
     * @param tick null, or a tick of the job {@code lockName}: the lock {@code <lockName>@<tick>},
     *     kept for all of atMost from its acquisition as the tick's done marker ({@code atLeast}
     *     is then atMost)
     * @param unitMs 1000 when {@code atMost}/{@code atLeast} are seconds, 1 when milliseconds
     * @param tellJob whether {@code into} should say the lock's job too (a listener hears the
     *     call: the job the core computed, so that Java never asks for it)
     * @param into receives how it ended ({@link Border.AcquireOutcome}: won, taken, or
     *     unconfirmed: durable acquire won the lock, could not confirm it on the replicas in time,
     *     and gave it back, so the task must not run), the lease's id and fencing token when won,
     *     and the acquire's warning for the log (unconfirmed, or keep-alive's schedule cannot hold
     *     for this atMost), or null
     * @throws DibsArgumentException on an invalid name, tick or duration, before any I/O
     * @throws DibsException (a subclass where one fits) when the lock could not be tried
     */
    static native void acquire(
            long handle,
            String lockName,
            String tick,
            long atMost,
            long atLeast,
            long unitMs,
            boolean tellJob,
            Border.Acquired into);

    /**
     * {@link #acquire} of the lock of a tick of the job {@code job} that may not have run: won
     * only when its lock is free and the job's history proves that no run of it was recorded,
     * both in one script, so that no two instances run one tick (atLeast is atMost).
     *
     * @param atMost how long the lock is held, and the tick marked done
     * @param unitMs 1000 when {@code atMost} is seconds, 1 when milliseconds
     * @param dueMs when the tick was due, Unix ms: the history proves a miss only if it reaches
     *     back to it
     * @param catchUp whether the run is a catch-up's (a tick run after its time), for the history
     * @param into as {@link #acquire}'s, where the history's answers are outcomes too: the tick
     *     ran, whether it ran is unknown (the warning says so), or it is beyond catch-up's reach
     * @throws DibsArgumentException on an invalid name, tick or due time, or a conn without the
     *     history, or a Cluster's, before any I/O
     * @throws DibsException (a subclass where one fits) when the lock could not be tried
     */
    static native void acquireUnrun(
            long handle,
            String job,
            String tick,
            long atMost,
            long unitMs,
            long dueMs,
            boolean catchUp,
            boolean tellJob,
            Border.Acquired into);

    /**
     * Whether the tick {@code tick} of the job {@code job}, due at {@code dueMs} (Unix ms), ran,
     * by its lock and its job's history: a {@link Border.TickState} code. Changes nothing.
     */
    static native int tickState(long handle, String job, String tick, long dueMs);

    /**
     * Stops keep-alive and releases a lease with the token-checked script, then says how the
     * call ended. A lease is released once: its id is then unknown.
     *
     * @param task how the task ended, for the run history: a {@link Border.Task} code
     * @param into receives how the call ended ({@link Border.Released})
     * @throws IllegalStateException when the lease was released already
     */
    static native void release(long lease, int task, Border.Released into);

    /**
     * If the lease's lock is still ours, sets its expiry to {@code atMostMs} from now and counts
     * {@code atLeastMs} from now. The lease stays held either way.
     *
     * @return true if extended; false if the lock was no longer ours
     * @throws DibsArgumentException on invalid durations, before any I/O
     * @throws IllegalStateException when the lease was released
     * @throws DibsException when Redis could not be reached
     */
    static native boolean extend(long lease, long atMostMs, long atLeastMs);

    /**
     * The lease's fencing token: greater than that of every earlier holder of the lock (the
     * server's clock in microseconds, read in the acquire's script); 0 when the server's ACL
     * refuses {@code TIME}. No I/O.
     *
     * @throws IllegalStateException when the lease was released
     */
    static native long fencingToken(long lease);

    /**
     * Whether keep-alive found the lease's lock taken, or could not extend it in time. No I/O.
     *
     * @throws IllegalStateException when the lease was released
     */
    static native boolean isLost(long lease);

    /**
     * Has the lease's id returned by {@link #awaitLost} once keep-alive finds its lock lost (at
     * once if it is lost already). No I/O.
     *
     * @return false when the lease has no keep-alive: nothing watches its lock
     * @throws IllegalStateException when the lease was released
     */
    static native boolean watchLost(long lease);

    /**
     * The watched leases found lost since the last call, waiting up to {@code timeoutMs} for one;
     * empty when none came. Blocks: for {@link LostWatch}'s thread alone.
     */
    static native long[] awaitLost(long timeoutMs);

    /**
     * How many milliseconds longer the holder may rely on the lease's lock: atMost from when the
     * last command that set its expiry was sent, less 1% of atMost + 2 ms; 0 once lost. No I/O.
     *
     * @throws IllegalStateException when the lease was released
     */
    static native long safeForMs(long lease);

    /**
     * How many leases Rust holds for Java: acquired and not yet released. No I/O. A diagnostic:
     * the tests check it is back to 0 after every kind of failure.
     */
    static native long heldLeases();

    /**
     * Reads who holds a lock, in one round trip; never changes the lock.
     *
     * @throws DibsArgumentException on an invalid name, before any I/O
     * @throws DibsException when Redis could not be read
     */
    static native Border.Inspected inspect(long handle, String lockName);

    /** The last {@code limit} recorded runs of the job or lock {@code name}, and what they prove. */
    static native Border.History history(long handle, String name, int limit);

    /**
     * The jobs with a recorded run, the most recent first, scanned for at most {@code budgetMs}
     * (in {@link Border.Listing#jobs}).
     */
    static native Border.Listing jobs(long handle, int limit, long budgetMs);

    /**
     * The held locks whose names match the glob {@code pattern}, scanned for at most
     * {@code budgetMs} (in {@link Border.Listing#locks}).
     */
    static native Border.Listing locks(long handle, String pattern, int limit, long budgetMs);

    /**
     * The locks of the job {@code job} that a run holds now (its own name, its ticks', the names
     * whose job it is, each with a fresh token), scanned for at most {@code budgetMs}, as
     * {@link #locks} lists them.
     */
    static native Border.Listing running(long handle, String job, long budgetMs);

    /**
     * The core's judge of the job {@code job} (see {@link DibsCheck}): a window, or a period with
     * its grace, or neither; durations in ms, -1 for none, {@link Long#MIN_VALUE} for a negative.
     *
     * @throws DibsArgumentException on a bad name or duration, before any I/O
     * @throws DibsException when Redis could not be read
     */
    static native Border.Judged check(
            long handle,
            String job,
            long withinMs,
            long periodMs,
            long graceMs,
            long expectedSinceMs,
            long minDurationMs,
            long maxDurationMs,
            long graceAfterStartMs,
            long budgetMs);

    /**
     * Checks a listing's scan budget, without I/O.
     *
     * @throws DibsArgumentException unless more than 0 and at most the core's maximum
     */
    static native void validateBudget(long budgetMs);

    /** The lock {@code lockName} with its token; null when free. */
    static native Border.Held heldLock(long handle, String lockName);

    /** Deletes {@code lockName} if it holds {@code token}: a {@link Border.ForcedRelease} code. */
    static native int forceRelease(long handle, String lockName, String token, String by);

    /**
     * The job a lock name belongs to (the one rule of the history, the meters, the expectations):
     * for a name whose acquire did not say it ({@link JobNames}).
     */
    static native String jobOf(String lockName);

    /** Whether the handle's releases record their runs in the history (the conn's {@code history}). */
    static native boolean keepsHistory(long handle);
}
