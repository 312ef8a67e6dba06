package dibs;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Runs a task on at most one instance of a service at a time, by taking a Redis lock first.
 *
 * <p>{@code Dibs.execute(conn, "nightly-report", 60, 5, task)} tries
 * {@code SET dibs:nightly-report <token> NX PX 60000}. If this process wins, it runs the task on
 * the calling thread, then releases the lock with a token-checked script: the lock is kept for
 * whatever is left of {@code atLeast} (so a quick task on a fast clock cannot be re-run by an
 * instance whose scheduler fires a little later), or deleted when {@code atLeast} has passed. If
 * another instance holds the lock, the task is skipped and {@code execute} returns
 * {@code false}. Typical use is from a scheduler that fires on every instance:
 *
 * <pre>{@code
 * // Java
 * boolean ran = Dibs.execute("redis://cache:6379", "nightly-report", 600, 30, () -> sendReport());
 *
 * // Kotlin: the task is the last parameter, so it can follow the call
 * Dibs.execute(mapOf("host" to "cache", "port" to 6379), "nightly-report", 600, 30) { sendReport() }
 * }</pre>
 *
 * <h2>Durations</h2>
 * <ul>
 *   <li>{@code atMost}: how long the lock is held at most, counted from acquisition. It is the
 *       lock's expiry, so that a crashed instance cannot hold it forever. Make it longer than
 *       the task's longest run: if the task outlives it, another instance may start the task
 *       concurrently (dibs then logs a warning, see below).
 *   <li>{@code atLeast}: how long the lock is held at least, counted from acquisition, even when
 *       the task finishes sooner. Cover the clock and scheduling skew between instances.
 * </ul>
 * The {@code long} overloads take whole seconds; the {@link Duration} overloads take any
 * length, truncated to whole milliseconds as by {@link Duration#toMillis()} (so
 * {@code Duration.ofNanos(1_500_000)} is 1 ms). An {@code atMost} must be positive, an
 * {@code atLeast} must lie between 0 and {@code atMost}, and both must fit in a {@code long} of
 * milliseconds; otherwise an {@link IllegalArgumentException} is thrown. So is a lock name that
 * is empty, longer than 512 bytes of UTF-8, or holds a control character (the native library
 * owns these rules and its message says which one failed).
 *
 * <h2>conn</h2>
 * One of:
 * <ul>
 *   <li>a URI String: {@code redis://[user[:password]@]host[:port][/db]}, {@code rediss://} for
 *       TLS, {@code unix:///path/to.sock};
 *   <li>a {@link java.util.Map} in the shape of a Carmine conn spec, with String keys or Clojure
 *       keyword keys: {@code {"uri": "redis://..."}}, or {@code {"host": "h", "port": 6380}}
 *       (numbers as Integer, Long or their decimal String), plus optional {@code username},
 *       {@code password}, {@code db}, {@code timeout-ms}, {@code conn-timeout-ms},
 *       {@code read-timeout-ms}, {@code ssl}, {@code ca-cert}, {@code key-prefix};
 *   <li>Carmine's conn map {@code {"spec": {...}, "pool": {"max-total": n, ...}}}.
 * </ul>
 * Equal conns share one pool of connections, created on first use and kept for the life of the
 * process. A conn is parsed once: later calls with an equal conn reuse the result. A Map conn
 * may be changed by the caller afterwards without effect on dibs (dibs keeps its own copy).
 *
 * <h2>Errors</h2>
 * <ul>
 *   <li>{@link IllegalArgumentException}: a {@code null} conn, lock name, duration or task (we
 *       chose IAE over NullPointerException for these too, so that every bad argument is one
 *       type), an empty or otherwise invalid lock name, invalid durations, a malformed conn. It
 *       is thrown before any network I/O, so it wins over any connection problem.
 *   <li>{@link DibsException} and its subclasses: the lock could not be tried (server
 *       unreachable, timeout, bad credentials, missing permission, other server error). The task
 *       did not run.
 *   <li>Whatever the task throws reaches the caller as the very same object, checked exceptions
 *       included, after the lock has been released.
 * </ul>
 * A failure to release never hides the task's outcome: it is logged instead (below), and the
 * lock then expires by itself after {@code atMost}.
 *
 * <h2>Logging</h2>
 * Through {@link System#getLogger(String) System.getLogger("dibs")} (java.util.logging unless
 * another {@link System.LoggerFinder} is installed), at {@code WARNING} only: when the lock
 * had expired before the task finished (naming the lock, the elapsed milliseconds and
 * {@code atMost}), and when the release failed. Messages never contain a password.
 *
 * <p>All methods are thread-safe. The task runs on the calling thread.
 */
public final class Dibs {
    private static final Logger LOG = System.getLogger("dibs");
    private static final long SECONDS = 1000;
    private static final long MILLIS = 1;

    private Dibs() {}

    /**
     * Runs {@code task} if and only if this process wins the lock {@code lockName}.
     *
     * @param conn where Redis is: a URI String or a Map conn spec (see the class docs)
     * @param lockName the lock's name; instances that should exclude each other use the same one
     * @param atMostSec how long the lock is held at most, in seconds, counted from acquisition
     * @param atLeastSec how long the lock is held at least, in seconds ({@code 0..atMostSec})
     * @param task what to run while holding the lock
     * @return {@code true} if the lock was won and the task ran, {@code false} if another
     *     instance held it and the task was skipped
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public static boolean execute(Object conn, String lockName, long atMostSec, long atLeastSec, Runnable task) {
        checkArgs(conn, lockName, task);
        return run(conn, lockName, atMostSec, atLeastSec, SECONDS, Invocation.ofRunnable(task)) != null;
    }

    /**
     * Runs {@code task} if and only if this process wins the lock {@code lockName}, with
     * durations of any length (truncated to whole milliseconds).
     *
     * @param conn where Redis is: a URI String or a Map conn spec (see the class docs)
     * @param lockName the lock's name; instances that should exclude each other use the same one
     * @param atMost how long the lock is held at most, counted from acquisition
     * @param atLeast how long the lock is held at least ({@code Duration.ZERO..atMost})
     * @param task what to run while holding the lock
     * @return {@code true} if the lock was won and the task ran, {@code false} if skipped
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public static boolean execute(Object conn, String lockName, Duration atMost, Duration atLeast, Runnable task) {
        checkArgs(conn, lockName, task);
        checkDurations(atMost, atLeast);
        long unit = fitsMillis(atMost) && fitsMillis(atLeast) ? MILLIS : SECONDS;
        return run(conn, lockName, amount(atMost, unit), amount(atLeast, unit), unit, Invocation.ofRunnable(task)) != null;
    }

    /**
     * Runs {@code task} if and only if this process wins the lock, and returns its value.
     *
     * <p><b>Note:</b> {@code Optional.empty()} means either that the task was skipped or that it
     * ran and returned {@code null}; the two cannot be told apart here. Use
     * {@link #execute(Object, String, long, long, Runnable)} with your own holder if you need
     * to know.
     *
     * @param <T> the task's result type
     * @param conn where Redis is: a URI String or a Map conn spec (see the class docs)
     * @param lockName the lock's name; instances that should exclude each other use the same one
     * @param atMostSec how long the lock is held at most, in seconds, counted from acquisition
     * @param atLeastSec how long the lock is held at least, in seconds ({@code 0..atMostSec})
     * @param task what to run while holding the lock
     * @return the task's value, or empty if the task was skipped (or returned {@code null})
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public static <T> Optional<T> executeWithResult(
            Object conn, String lockName, long atMostSec, long atLeastSec, Supplier<T> task) {
        checkArgs(conn, lockName, task);
        return valueOf(run(conn, lockName, atMostSec, atLeastSec, SECONDS, Invocation.ofSupplier(task)));
    }

    /**
     * Runs {@code task} if and only if this process wins the lock, and returns its value, with
     * durations of any length (truncated to whole milliseconds).
     *
     * <p><b>Note:</b> {@code Optional.empty()} means either that the task was skipped or that it
     * ran and returned {@code null}; the two cannot be told apart here.
     *
     * @param <T> the task's result type
     * @param conn where Redis is: a URI String or a Map conn spec (see the class docs)
     * @param lockName the lock's name; instances that should exclude each other use the same one
     * @param atMost how long the lock is held at most, counted from acquisition
     * @param atLeast how long the lock is held at least ({@code Duration.ZERO..atMost})
     * @param task what to run while holding the lock
     * @return the task's value, or empty if the task was skipped (or returned {@code null})
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public static <T> Optional<T> executeWithResult(
            Object conn, String lockName, Duration atMost, Duration atLeast, Supplier<T> task) {
        checkArgs(conn, lockName, task);
        checkDurations(atMost, atLeast);
        long unit = fitsMillis(atMost) && fitsMillis(atLeast) ? MILLIS : SECONDS;
        return valueOf(run(conn, lockName, amount(atMost, unit), amount(atLeast, unit), unit, Invocation.ofSupplier(task)));
    }

    /**
     * The whole lifecycle: resolve the conn, let Rust lock / run / release, report the release,
     * then hand back the task's outcome. Returns null when the lock was not won.
     */
    private static Invocation run(Object conn, String lockName, long atMost, long atLeast, long unitMs, Invocation inv) {
        long handle = ConnCache.handle(conn);
        boolean won;
        try {
            won = NativeLib.execute(handle, lockName, atMost, atLeast, unitMs, inv);
        } catch (RuntimeException | Error e) {
            // Rust throws only before the task runs; should it ever throw after, the task's own
            // failure still wins.
            Throwable thrown = inv.thrown();
            if (thrown == null || thrown == e) {
                throw e;
            }
            thrown.addSuppressed(e);
            throw Dibs.<RuntimeException>sneaky(thrown);
        }
        if (!won) {
            return null;
        }
        logRelease(lockName, atMost, unitMs, inv);
        if (inv.thrown() != null) {
            throw Dibs.<RuntimeException>sneaky(inv.thrown());
        }
        return inv;
    }

    private static void logRelease(String lockName, long atMost, long unitMs, Invocation inv) {
        switch (inv.status()) {
            case Invocation.RELEASED:
                return;
            case Invocation.NOT_OURS:
                LOG.log(Level.WARNING, "lock '" + lockName + "' was no longer held by this instance when it was"
                        + " released, " + inv.elapsedMs() + " ms after it was acquired (atMost "
                        + atMost + (unitMs == SECONDS ? " s" : " ms") + "): it expired while the task ran,"
                        + " so another instance may have run concurrently. Raise atMost above the task's"
                        + " longest run.");
                return;
            case Invocation.RELEASE_FAILED:
                LOG.log(Level.WARNING, "release of lock '" + lockName + "' failed: " + inv.releaseError()
                        + " (the lock expires by itself at most " + atMost + (unitMs == SECONDS ? " s" : " ms")
                        + " after it was acquired)");
                return;
            default:
                LOG.log(Level.WARNING, "lock '" + lockName + "': the native library reported no release"
                        + " status (" + inv.status() + "); this is a bug in dibs");
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> Optional<T> valueOf(Invocation inv) {
        return inv == null ? Optional.empty() : Optional.ofNullable((T) inv.value());
    }

    private static void checkArgs(Object conn, String lockName, Object task) {
        checkNotNull(conn, "conn");
        checkNotNull(lockName, "lockName");
        checkNotNull(task, "task");
    }

    private static void checkDurations(Duration atMost, Duration atLeast) {
        checkNotNull(atMost, "atMost");
        checkNotNull(atLeast, "atLeast");
    }

    private static void checkNotNull(Object value, String name) {
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

    /**
     * A duration in the given unit. Milliseconds when both fit, else whole seconds with unit
     * 1000, so that Rust, the one owner of the overflow rule, reports it.
     */
    private static long amount(Duration d, long unitMs) {
        return unitMs == MILLIS ? d.toMillis() : d.getSeconds();
    }

    /** Rethrows any Throwable, checked or not, as the very same object. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E sneaky(Throwable t) throws E {
        throw (E) t;
    }
}
