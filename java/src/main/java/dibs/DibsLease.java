package dibs;

import java.lang.ref.Cleaner;
import java.time.Duration;

/**
 * A lock this process holds, from {@link DibsClient#tryLock} until {@link #release()}: for code
 * whose locked work is not one call, such as ShedLock's {@code SimpleLock}. Where the work is one
 * call, {@link DibsClient#execute} is simpler and cannot forget the release.
 *
 * <p>A lease is released once. One that becomes unreachable unreleased is released when the
 * garbage collector finds it, with a warning; until then its lock stays held (and, with
 * keep-alive, extended). Thread-safe.
 *
 * <pre>{@code
 * try (DibsLease lease = client.tryLock("report", Duration.ofMinutes(10), Duration.ZERO).orElse(null)) {
 *     if (lease != null) {
 *         buildReport();
 *     }
 * }
 * }</pre>
 */
public final class DibsLease implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    private final String lockName;
    private final Native lease;
    private final Cleaner.Cleanable cleanable;

    DibsLease(long id, String lockName) {
        this.lockName = lockName;
        this.lease = new Native(id, lockName);
        this.cleanable = CLEANER.register(this, lease);
    }

    /** @return the lock's name */
    public String lockName() {
        return lockName;
    }

    /**
     * With keep-alive: whether the lock was found taken by another holder, or could not be
     * extended before it would lapse, while this lease was held. Work that must not run without
     * the lock can check it between steps. Always false without keep-alive. No network I/O.
     *
     * @return true if the lock is known lost
     * @throws IllegalStateException if the lease was released
     */
    public boolean isLost() {
        synchronized (lease) {
            lease.checkHeld();
            return NativeLib.isLost(lease.id);
        }
    }

    /**
     * If the lock is still ours, sets its expiry to {@code atMost} from now, and counts
     * {@code atLeast} from now. The lease stays held either way.
     *
     * @param atMost the new expiry, from now
     * @param atLeast how long the lock is held at least, from now ({@code Duration.ZERO..atMost})
     * @return true if extended; false if the lock was no longer ours
     * @throws IllegalArgumentException if a duration is null or invalid (before any I/O)
     * @throws IllegalStateException if the lease was released
     * @throws DibsException if Redis could not be reached
     */
    public boolean extend(Duration atMost, Duration atLeast) {
        Lifecycle.checkNotNull(atMost, "atMost");
        Lifecycle.checkNotNull(atLeast, "atLeast");
        if (!Lifecycle.fitsMillis(atMost) || !Lifecycle.fitsMillis(atLeast)) {
            throw new IllegalArgumentException("atMost and atLeast must fit in 64-bit milliseconds");
        }
        synchronized (lease) {
            lease.checkHeld();
            return NativeIo.extend(lease.id, atMost.toMillis(), Lifecycle.atLeastMillis(atMost, atLeast));
        }
    }

    /**
     * Releases the lock: if still ours, {@code PEXPIRE} for the rest of atLeast, else
     * {@code DEL}; if no longer ours, nothing is touched and a warning is logged.
     *
     * @return true if the lock was ours until this release
     * @throws IllegalStateException if the lease was released already
     */
    public boolean release() {
        synchronized (lease) {
            lease.checkHeld();
            boolean owned = lease.release();
            cleanable.clean(); // now a no-op; unregisters the lease
            return owned;
        }
    }

    /** Releases the lease unless it was released already. */
    @Override
    public void close() {
        synchronized (lease) {
            if (!lease.released) {
                release();
            }
        }
    }

    @Override
    public String toString() {
        return "DibsLease[" + lockName + (lease.released ? ", released]" : "]");
    }

    /** The native lease, apart from the DibsLease so that the cleaner can release it. */
    private static final class Native implements Runnable {
        final long id;
        final String lockName;
        boolean released;

        Native(long id, String lockName) {
            this.id = id;
            this.lockName = lockName;
        }

        void checkHeld() {
            if (released) {
                throw new IllegalStateException("the lease of lock '" + lockName + "' was released already");
            }
        }

        boolean release() {
            released = true;
            long[] facts = new long[2];
            Lifecycle.logWarning(NativeIo.release(id, facts));
            return Ending.ownedToTheEnd((int) facts[0]);
        }

        /** The cleaner's action: a lease dropped unreleased. */
        @Override
        public void run() {
            synchronized (this) {
                if (!released) {
                    System.getLogger("dibs").log(System.Logger.Level.WARNING, "a DibsLease of lock '" + lockName
                            + "' was garbage collected without release(); released now");
                    release();
                }
            }
        }
    }
}
