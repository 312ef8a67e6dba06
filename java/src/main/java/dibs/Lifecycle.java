package dibs;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * A locked call ({@code execute}, {@code attempt}, ... of {@link DibsClient}, and so of
 * {@link Dibs}): a {@link DibsLease} taken as {@link DibsClient#tryLock} takes one, the task run
 * here in plain Java, the lease released however the task ended, then the task's outcome handed
 * back. The lease does the native calls and tells the listener; this class only adds the task.
 */
final class Lifecycle {
    /** The lease of the task running on this thread, for {@link Dibs#isLockLost()}; 0 outside one. */
    private static final ThreadLocal<long[]> CURRENT = ThreadLocal.withInitial(() -> new long[1]);

    private Lifecycle() {}

    /**
     * Takes the lease, runs the task, releases the lease. The task never runs under a native
     * frame, so a virtual thread is never pinned by it; what the release found is decided and
     * worded by Rust, and only dispatched by the lease. With a {@code tick} (null for none),
     * under the lock of that tick of the job {@code lockName}.
     */
    static <T> DibsResult<T> run(
            ClientHandle client, String lockName, String tick, LockDurations durations, Supplier<T> task) {
        return run(client, lockName, tick, durations, null, false, task);
    }

    /**
     * {@link #run}, and with a {@code due} time (not null), for a tick that may not have run:
     * taken only when the job's history proves that it did not (see {@link DibsLease#acquire(
     * ClientHandle, String, String, LockDurations, java.time.Instant, boolean)}).
     */
    static <T> DibsResult<T> run(
            ClientHandle client,
            String lockName,
            String tick,
            LockDurations durations,
            java.time.Instant due,
            boolean catchUp,
            Supplier<T> task) {
        long[] current = CURRENT.get(); // before the lock is ours: nothing between acquire and try can throw
        Border.Acquired acquired = new Border.Acquired();
        DibsLease lease = DibsLease.acquire(client, lockName, tick, durations, due, catchUp, acquired);
        if (lease == null) {
            return acquired.outcome() == Border.AcquireOutcome.UNCONFIRMED
                    ? DibsResult.givenBack()
                    : DibsResult.skipped();
        }
        T value = null;
        Throwable thrown = null;
        long outer = current[0]; // a task may run another locked call: restore its lease after
        current[0] = lease.id();
        try {
            long start = client.listener == null ? 0 : System.nanoTime();
            try {
                value = task.get();
            } catch (Throwable t) {
                lease.taskFailed(t);
                throw t;
            } finally {
                lease.taskFinished(start);
            }
        } catch (Throwable t) { // anything, Errors too: the lease is released below regardless
            thrown = t;
        } finally {
            current[0] = outer;
        }
        boolean owned;
        try {
            owned = lease.releaseRecording(thrown == null ? Border.Task.SUCCEEDED : Border.Task.FAILED);
        } catch (Throwable e) {
            // Only the JVM failing (out of memory) or a broken lease gets here (the lease told
            // the listener releaseFailed): the task's own outcome still wins, and the release
            // failure rides along.
            if (thrown != null) {
                thrown.addSuppressed(e);
                throw Lifecycle.<RuntimeException>sneaky(thrown);
            }
            Log.warning("lock '" + lockName + "': the task ran, but its release failed", e);
            return DibsResult.ran(value, false, Duration.ZERO, lease.fencingToken());
        }
        if (thrown != null) {
            throw Lifecycle.<RuntimeException>sneaky(thrown);
        }
        return DibsResult.ran(value, owned, lease.heldFor(), lease.fencingToken());
    }

    /** Whether the lock of the task running on this thread is known lost (keep-alive). */
    static boolean currentLockLost() {
        long lease = CURRENT.get()[0];
        if (lease == 0) {
            throw new IllegalStateException("Dibs.isLockLost() is for the task of a Dibs call, on its thread");
        }
        return NativeLib.isLost(lease);
    }

    /** The fencing token of the lock of the task running on this thread. */
    static long currentFencingToken() {
        long lease = CURRENT.get()[0];
        if (lease == 0) {
            throw new IllegalStateException("Dibs.fencingToken() is for the task of a Dibs call, on its thread");
        }
        return NativeLib.fencingToken(lease);
    }

    static void checkNotNull(Object value, String name) {
        if (value == null) {
            throw new DibsArgumentException(name, name + " must not be null");
        }
    }

    /** Rethrows any Throwable, checked or not, as the very same object. */
    @SuppressWarnings("unchecked")
    static <E extends Throwable> E sneaky(Throwable t) throws E {
        throw (E) t;
    }
}
