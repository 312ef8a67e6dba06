package dibs;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The one lifecycle of a locked call on the Java side, behind {@link Dibs} and
 * {@link DibsClient}: check the arguments Java owns, acquire in Rust, run the task here, release
 * in Rust, dispatch how it ended to the log and the listener, then hand back the task's outcome.
 */
final class Lifecycle {
    static final long SECONDS = 1000;
    static final long MILLIS = 1;
    private static final Logger LOG = System.getLogger("dibs");
    /** The lease of the task running on this thread, for {@link Dibs#isLockLost()}; 0 outside one. */
    private static final ThreadLocal<long[]> CURRENT = ThreadLocal.withInitial(() -> new long[1]);

    private Lifecycle() {}

    /** A call whose durations are whole seconds. */
    static <T> DibsResult<T> run(long handle, DibsListener listener, String lockName,
            long atMostSec, long atLeastSec, Supplier<T> task) {
        return run(handle, listener, lockName, atMostSec, atLeastSec, SECONDS, task);
    }

    /**
     * A call with {@link Duration}s: milliseconds when both fit in a long, else whole seconds, so
     * that Rust, the one owner of the overflow rule, reports it.
     */
    static <T> DibsResult<T> run(long handle, DibsListener listener, String lockName,
            Duration atMost, Duration atLeast, Supplier<T> task) {
        checkNotNull(atMost, "atMost");
        checkNotNull(atLeast, "atLeast");
        if (fitsMillis(atMost) && fitsMillis(atLeast)) {
            return run(handle, listener, lockName, atMost.toMillis(), atLeastMillis(atMost, atLeast), MILLIS, task);
        }
        return run(handle, listener, lockName, atMost.getSeconds(), atLeast.getSeconds(), SECONDS, task);
    }

    /**
     * Acquires a lease to release later, for callers whose task is not one call (ShedLock's
     * {@code SimpleLock}): {@code null} when another holder has the lock.
     */
    static DibsLease tryLock(long handle, String lockName, Duration atMost, Duration atLeast) {
        checkNotNull(atMost, "atMost");
        checkNotNull(atLeast, "atLeast");
        long lease = fitsMillis(atMost) && fitsMillis(atLeast)
                ? acquire(handle, lockName, atMost.toMillis(), atLeastMillis(atMost, atLeast), MILLIS)
                : acquire(handle, lockName, atMost.getSeconds(), atLeast.getSeconds(), SECONDS);
        return lease == 0 ? null : new DibsLease(lease, lockName);
    }

    /** The native acquire: a lease id, or 0. Logs the warning Rust found at acquire, if any. */
    private static long acquire(long handle, String lockName, long atMost, long atLeast, long unitMs) {
        long lease = NativeIo.acquire(handle, lockName, atMost, atLeast, unitMs);
        if (lease < 0) { // won, with a warning: keep-alive's schedule cannot hold
            lease = -lease;
            logWarning(NativeLib.takeWarning(lease));
        }
        return lease;
    }

    /**
     * atLeast in whole milliseconds for an atMost cut to whole milliseconds: rounded up (the lock
     * is never held shorter than asked), but not past atMost when it was within it.
     */
    static long atLeastMillis(Duration atMost, Duration atLeast) {
        boolean fraction = !atLeast.isNegative() && atLeast.getNano() % 1_000_000 != 0;
        long atLeastMs = atLeast.toMillis() + (fraction ? 1 : 0);
        if (atLeast.compareTo(atMost) <= 0) {
            atLeastMs = Math.min(atLeastMs, Math.max(atMost.toMillis(), 0));
        }
        return atLeastMs;
    }

    /** Whether the lock of the task running on this thread is known lost (keep-alive). */
    static boolean currentLockLost() {
        long lease = CURRENT.get()[0];
        if (lease == 0) {
            throw new IllegalStateException("Dibs.isLockLost() is for the task of a Dibs call, on its thread");
        }
        return NativeLib.isLost(lease);
    }

    /** Logs a warning Rust wrote (how a call ended, or what its acquire found), if any. */
    static void logWarning(String warning) {
        if (warning != null) {
            LOG.log(Level.WARNING, warning);
        }
    }

    /**
     * The lifecycle: acquire (native), run the task in plain Java, release (native) however the
     * task ended. The task never runs under a native frame, so a virtual thread is never pinned
     * by it; what the release found is decided and worded by Rust, and only dispatched here.
     */
    private static <T> DibsResult<T> run(long handle, DibsListener listener, String lockName,
            long atMost, long atLeast, long unitMs, Supplier<T> task) {
        Events events = listener == null ? Events.NONE : new Events(listener);
        events.attempt(lockName);
        long lease = acquire(handle, lockName, atMost, atLeast, unitMs);
        if (lease == 0) {
            events.skipped(lockName);
            return DibsResult.skipped();
        }
        long[] facts = new long[2]; // before the task: nothing to allocate after it, should it exhaust memory
        T value = null;
        Throwable thrown = null;
        long[] current = CURRENT.get();
        long outer = current[0]; // a task may run another locked call: restore its lease after
        current[0] = lease;
        try {
            events.acquired(lockName);
            long start = listener == null ? 0 : System.nanoTime();
            try {
                value = task.get();
            } finally {
                if (listener != null) {
                    events.finished(lockName, Duration.ofNanos(System.nanoTime() - start));
                }
            }
        } catch (Throwable t) { // anything, Errors too: the lease is released below regardless
            thrown = t;
        } finally {
            current[0] = outer;
        }
        String warning;
        try {
            warning = NativeIo.release(lease, facts);
        } catch (Throwable e) {
            // Only the JVM failing (out of memory) or a broken lease gets here: the task's own
            // outcome still wins, and the release failure rides along.
            events.releaseFailed(lockName, Duration.ZERO);
            if (thrown != null) {
                thrown.addSuppressed(e);
                throw Lifecycle.<RuntimeException>sneaky(thrown);
            }
            LOG.log(Level.WARNING, "lock '" + lockName + "': the task ran, but its release failed", e);
            return DibsResult.ran(value, false, Duration.ZERO);
        }
        int ending = (int) facts[0];
        Duration elapsed = Duration.ofMillis(facts[1]);
        logWarning(warning);
        boolean owned = Ending.ownedToTheEnd(ending);
        if (owned) {
            events.released(lockName, elapsed);
        } else if (ending == Ending.RELEASE_FAILED) {
            events.releaseFailed(lockName, elapsed);
        } else {
            events.expired(lockName, elapsed);
        }
        if (thrown != null) {
            throw Lifecycle.<RuntimeException>sneaky(thrown);
        }
        return DibsResult.ran(value, owned, elapsed);
    }

    static void checkNotNull(Object value, String name) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
    }

    static boolean fitsMillis(Duration d) {
        try {
            d.toMillis();
            return true;
        } catch (ArithmeticException e) {
            return false;
        }
    }

    /** Rethrows any Throwable, checked or not, as the very same object. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E sneaky(Throwable t) throws E {
        throw (E) t;
    }

    /** A listener whose failures are logged and ignored; no listener costs nothing. */
    private static final class Events {
        static final Events NONE = new Events(null);

        private final DibsListener listener;

        Events(DibsListener listener) {
            this.listener = listener;
        }

        void attempt(String name) {
            if (listener != null) {
                call(name, "attempt", () -> listener.attempt(name));
            }
        }

        void skipped(String name) {
            if (listener != null) {
                call(name, "skipped", () -> listener.skipped(name));
            }
        }

        void acquired(String name) {
            if (listener != null) {
                call(name, "acquired", () -> listener.acquired(name));
            }
        }

        void finished(String name, Duration d) {
            if (listener != null) {
                call(name, "finished", () -> listener.finished(name, d));
            }
        }

        void released(String name, Duration d) {
            if (listener != null) {
                call(name, "released", () -> listener.released(name, d));
            }
        }

        void expired(String name, Duration d) {
            if (listener != null) {
                call(name, "expired", () -> listener.expired(name, d));
            }
        }

        void releaseFailed(String name, Duration d) {
            if (listener != null) {
                call(name, "releaseFailed", () -> listener.releaseFailed(name, d));
            }
        }

        private static void call(String name, String event, Runnable r) {
            try {
                r.run();
            } catch (RuntimeException | Error e) {
                LOG.log(Level.WARNING, "DibsListener." + event + " threw for lock '" + name + "'; ignored", e);
            }
        }
    }
}
