package dibs;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The one lifecycle of a locked call on the Java side, behind {@link Dibs} and
 * {@link DibsClient}: check the arguments Java owns, let Rust lock / run / release, report the
 * release and the events, then hand back the task's outcome.
 */
final class Lifecycle {
    static final long SECONDS = 1000;
    static final long MILLIS = 1;
    private static final Logger LOG = System.getLogger("dibs");

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
            // atMost is cut to whole milliseconds; atLeast is rounded up (the lock is never held
            // shorter than asked), but not past atMost when it was within it.
            long atMostMs = atMost.toMillis();
            boolean fraction = !atLeast.isNegative() && atLeast.getNano() % 1_000_000 != 0;
            long atLeastMs = atLeast.toMillis() + (fraction ? 1 : 0);
            if (atLeast.compareTo(atMost) <= 0) {
                atLeastMs = Math.min(atLeastMs, Math.max(atMostMs, 0));
            }
            return run(handle, listener, lockName, atMostMs, atLeastMs, MILLIS, task);
        }
        return run(handle, listener, lockName, atMost.getSeconds(), atLeast.getSeconds(), SECONDS, task);
    }

    private static <T> DibsResult<T> run(long handle, DibsListener listener, String lockName,
            long atMost, long atLeast, long unitMs, Supplier<T> task) {
        Events events = listener == null ? Events.NONE : new Events(listener);
        events.attempt(lockName);
        // Without a listener the task runs as given: nothing extra on the common path.
        Invocation inv = Invocation.ofSupplier(listener == null ? task : () -> {
            events.acquired(lockName);
            long start = System.nanoTime();
            try {
                return task.get();
            } finally {
                events.finished(lockName, Duration.ofNanos(System.nanoTime() - start));
            }
        });
        boolean won;
        try {
            won = NativeLib.execute(handle, lockName, atMost, atLeast, unitMs, inv);
        } catch (RuntimeException | Error e) {
            // Rust throws before the task runs. Should anything throw after it ran (the JVM out
            // of memory while reporting the release), the task's own outcome still wins.
            Throwable thrown = inv.thrown();
            if (!inv.ran() || thrown == e) {
                throw e;
            }
            if (thrown != null) {
                thrown.addSuppressed(e);
                throw Lifecycle.<RuntimeException>sneaky(thrown);
            }
            LOG.log(Level.WARNING, "lock '" + lockName + "': the task ran, but reporting its release failed", e);
            @SuppressWarnings("unchecked")
            T value = (T) inv.value();
            return DibsResult.ran(value, false, Duration.ZERO);
        }
        if (!won) {
            events.skipped(lockName);
            return DibsResult.skipped();
        }
        Duration elapsed = Duration.ofMillis(inv.elapsedMs());
        boolean owned = report(lockName, atMost, unitMs, inv, events, elapsed);
        if (inv.thrown() != null) {
            throw Lifecycle.<RuntimeException>sneaky(inv.thrown());
        }
        @SuppressWarnings("unchecked")
        T value = (T) inv.value();
        return DibsResult.ran(value, owned, elapsed);
    }

    /** Logs and announces what the release found. Returns whether the lock was ours throughout. */
    private static boolean report(String lockName, long atMost, long unitMs, Invocation inv,
            Events events, Duration elapsed) {
        String atMostText = atMost + (unitMs == SECONDS ? " s" : " ms");
        if (inv.lostWhileRunning()) {
            LOG.log(Level.WARNING, "lock '" + lockName + "' was taken by another holder while the task ran"
                    + " (keep-alive noticed; the lock was held " + inv.elapsedMs() + " ms in all):"
                    + " another instance may have run concurrently.");
        }
        switch (inv.status()) {
            case Invocation.RELEASED:
                if (inv.lostWhileRunning()) {
                    break;
                }
                events.released(lockName, elapsed);
                return true;
            case Invocation.NOT_OURS:
                if (!inv.lostWhileRunning()) {
                    LOG.log(Level.WARNING, "lock '" + lockName + "' was no longer held by this instance when it"
                            + " was released, " + inv.elapsedMs() + " ms after it was acquired (atMost "
                            + atMostText + "): it expired while the task ran, so another instance may have"
                            + " run concurrently. Raise atMost above the task's longest run, or use keep-alive.");
                }
                break;
            case Invocation.RELEASE_FAILED:
                LOG.log(Level.WARNING, "release of lock '" + lockName + "' failed: " + inv.releaseError()
                        + " (the lock expires by itself at most " + atMostText + " after it was acquired)");
                return false;
            default:
                LOG.log(Level.WARNING, "lock '" + lockName + "': the native library reported no release"
                        + " status (" + inv.status() + "); this is a bug in dibs");
                return false;
        }
        events.expired(lockName, elapsed);
        return false;
    }

    static void checkNotNull(Object value, String name) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
    }

    private static boolean fitsMillis(Duration d) {
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

        private static void call(String name, String event, Runnable r) {
            try {
                r.run();
            } catch (RuntimeException | Error e) {
                LOG.log(Level.WARNING, "DibsListener." + event + " threw for lock '" + name + "'; ignored", e);
            }
        }
    }
}
