package dibs;

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
 * length in whole milliseconds: {@code atMost} cut as by {@link Duration#toMillis()} (so
 * {@code Duration.ofNanos(1_500_000)} is 1 ms), {@code atLeast} rounded up, so that the lock is
 * never held shorter than asked (but not past {@code atMost}). An {@code atMost} must be positive, an
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
 * <h2>Beyond the original API</h2>
 * <ul>
 *   <li>{@link #attempt} returns a {@link DibsResult} that tells "skipped" apart from "ran and
 *       returned null", and whether the lock was still ours at the end;
 *   <li>{@link #inspect} tells who holds a lock and for how much longer;
 *   <li>{@link DibsOptions} are typed options, accepted wherever a conn is, with keep-alive for
 *       tasks that may outlive {@code atMost} and a {@link DibsListener} for metrics;
 *   <li>{@link #client} gives a {@link DibsClient} with a pool of its own, to close when done.
 * </ul>
 *
 * <p>All methods are thread-safe. The task runs on the calling thread.
 *
 * <p>Each locked call here is the same call of {@link DibsClient}, on a client that conns equal
 * to this one share (kept for the life of the process); the methods' details are there.
 */
public final class Dibs {
    private Dibs() {}

    /**
     * {@link DibsClient#execute(String, long, long, Runnable)},
     * on the client that conns equal to {@code conn} share.
     *
     * @param conn where Redis is: a URI String, a Map conn spec or {@link DibsOptions}
     * @see DibsClient#execute(String, long, long, Runnable)
     */
    public static boolean execute(Object conn, String lockName, long atMostSec, long atLeastSec, Runnable task) {
        return shared(conn, lockName, task).execute(lockName, atMostSec, atLeastSec, task);
    }

    /**
     * {@link DibsClient#execute(String, Duration, Duration, Runnable)},
     * on the client that conns equal to {@code conn} share.
     *
     * @param conn where Redis is: a URI String, a Map conn spec or {@link DibsOptions}
     * @see DibsClient#execute(String, Duration, Duration, Runnable)
     */
    public static boolean execute(Object conn, String lockName, Duration atMost, Duration atLeast, Runnable task) {
        return shared(conn, lockName, task).execute(lockName, atMost, atLeast, task);
    }

    /**
     * {@link DibsClient#executeOnce(String, String, Duration, Runnable)}: the tick {@code tick}
     * of the job {@code lockName}, run at most once across instances, on the client that conns
     * equal to {@code conn} share.
     *
     * @param conn where Redis is: a URI String, a Map conn spec or {@link DibsOptions}
     * @see DibsClient#executeOnce(String, String, Duration, Runnable)
     */
    public static boolean executeOnce(Object conn, String lockName, String tick, Duration atMost, Runnable task) {
        return shared(conn, lockName, task).executeOnce(lockName, tick, atMost, task);
    }

    /**
     * {@link DibsClient#executeWithResult(String, long, long, Supplier)},
     * on the client that conns equal to {@code conn} share.
     *
     * @param conn where Redis is: a URI String, a Map conn spec or {@link DibsOptions}
     * @see DibsClient#executeWithResult(String, long, long, Supplier)
     */
    public static <T> Optional<T> executeWithResult(
            Object conn, String lockName, long atMostSec, long atLeastSec, Supplier<T> task) {
        return shared(conn, lockName, task).executeWithResult(lockName, atMostSec, atLeastSec, task);
    }

    /**
     * {@link DibsClient#executeWithResult(String, Duration, Duration, Supplier)},
     * on the client that conns equal to {@code conn} share.
     *
     * @param conn where Redis is: a URI String, a Map conn spec or {@link DibsOptions}
     * @see DibsClient#executeWithResult(String, Duration, Duration, Supplier)
     */
    public static <T> Optional<T> executeWithResult(
            Object conn, String lockName, Duration atMost, Duration atLeast, Supplier<T> task) {
        return shared(conn, lockName, task).executeWithResult(lockName, atMost, atLeast, task);
    }

    /**
     * {@link DibsClient#attempt(String, long, long, Supplier)},
     * on the client that conns equal to {@code conn} share.
     *
     * @param conn where Redis is: a URI String, a Map conn spec or {@link DibsOptions}
     * @see DibsClient#attempt(String, long, long, Supplier)
     */
    public static <T> DibsResult<T> attempt(
            Object conn, String lockName, long atMostSec, long atLeastSec, Supplier<T> task) {
        return shared(conn, lockName, task).attempt(lockName, atMostSec, atLeastSec, task);
    }

    /**
     * {@link DibsClient#attempt(String, Duration, Duration, Supplier)},
     * on the client that conns equal to {@code conn} share.
     *
     * @param conn where Redis is: a URI String, a Map conn spec or {@link DibsOptions}
     * @see DibsClient#attempt(String, Duration, Duration, Supplier)
     */
    public static <T> DibsResult<T> attempt(
            Object conn, String lockName, Duration atMost, Duration atLeast, Supplier<T> task) {
        return shared(conn, lockName, task).attempt(lockName, atMost, atLeast, task);
    }

    /**
     * From inside a task that dibs runs ({@code execute}, {@code executeWithResult},
     * {@code attempt}, on a {@link Dibs} or a {@link DibsClient}), on its thread: whether its lock
     * is known lost. With keep-alive, that is when an extension found the lock taken by another
     * holder, or none succeeded before it would lapse; a long task can check it between steps
     * and stop. Without keep-alive it stays false (the release tells, afterwards). No network I/O.
     *
     * <pre>{@code
     * Dibs.execute(options, "reindex", 60, 0, () -> {
     *     for (Batch b : batches) {
     *         if (Dibs.isLockLost()) return;   // another instance may have taken over
     *         index(b);
     *     }
     * });
     * }</pre>
     *
     * @return true if the lock of the running task is known lost
     * @throws IllegalStateException outside a task that dibs runs
     */
    public static boolean isLockLost() {
        return Lifecycle.currentLockLost();
    }

    /**
     * From inside a task that dibs runs, on its thread: the fencing token of its lock (see
     * {@link DibsLease#fencingToken()}), for the guarded resource to check. No network I/O.
     *
     * <pre>{@code
     * Dibs.execute(conn, "nightly-report", 600, 0, () ->
     *     jdbc.update("UPDATE report SET body = ?, fence = ? WHERE id = 1 AND fence < ?",
     *         body, Dibs.fencingToken(), Dibs.fencingToken()));   // 0 rows: a stale holder
     * }</pre>
     *
     * @return the token of the running task's lock
     * @throws IllegalStateException outside a task that dibs runs
     */
    public static long fencingToken() {
        return Lifecycle.currentFencingToken();
    }

    /**
     * {@link DibsClient#inspect(String)},
     * on the client that conns equal to {@code conn} share.
     *
     * @param conn where Redis is: a URI String, a Map conn spec or {@link DibsOptions}
     * @see DibsClient#inspect(String)
     */
    public static LockInfo inspect(Object conn, String lockName) {
        Lifecycle.checkNotNull(conn, "conn");
        Lifecycle.checkNotNull(lockName, "lockName");
        return ConnCache.shared(conn).inspect(lockName);
    }

    /**
     * The last {@code limit} recorded runs of a job, or of one lock of a job, fleet-wide, the
     * newest first.
     *
     * @param conn where Redis is: a URI String, a Map conn spec or {@link DibsOptions}
     * @param name a job's name, or a lock's
     * @param limit how many runs at most (1 to 10,000)
     * @return the runs, and since when the history holds every run of it
     * @see DibsClient#history(String, int)
     */
    public static DibsHistory history(Object conn, String name, int limit) {
        Lifecycle.checkNotNull(conn, "conn");
        Lifecycle.checkNotNull(name, "name");
        return ConnCache.shared(conn).history(name, limit);
    }

    /**
     * The job whose history records the runs of a lock taken by this name, and whose meters
     * count them: the name itself, unless it surely ends in a tick, a separator ({@code -},
     * {@code _}, {@code .}, {@code :}, {@code /} or {@code @}) followed by nothing but an
     * ISO-8601 date or date-time or a number of 8 or more digits. {@code report-2026-12-01} and
     * {@code tick-1764547200} are jobs {@code report} and {@code tick}; {@code backup-db1},
     * {@code shard-7} and {@code nightly-report} are their own. For
     * {@link DibsClient#executeOnce}, the job is the name it is given. One rule, Rust's, for
     * every signal of dibs. No I/O.
     *
     * @param lockName a lock name
     * @return its job
     * @throws IllegalArgumentException if the name is {@code null} or not text Rust can read
     *     (unpaired UTF-16 surrogates)
     */
    public static String jobOf(String lockName) {
        Lifecycle.checkNotNull(lockName, "lockName");
        return JobNames.of(lockName);
    }

    /**
     * A client with a pool of its own, for callers that want to hold a connection and close it
     * when done. The static methods here share one pool per distinct conn for the life of the
     * process instead.
     *
     * @param conn where Redis is: a URI String, a Map conn spec or {@link DibsOptions}
     * @return a new client; close it when done
     * @throws IllegalArgumentException if conn is {@code null} or invalid (no I/O happens yet)
     */
    public static DibsClient client(Object conn) {
        Lifecycle.checkNotNull(conn, "conn");
        return new DibsClient(ConnCache.open(conn), ConnCache.listener(conn), ConnCache.interruptOnLost(conn));
    }

    /**
     * The client shared by conns equal to {@code conn}, once the arguments Java owns are
     * checked, before any conn is parsed (so that a null wins over a malformed conn).
     */
    private static DibsClient shared(Object conn, String lockName, Object task) {
        Lifecycle.checkNotNull(conn, "conn");
        Lifecycle.checkNotNull(lockName, "lockName");
        Lifecycle.checkNotNull(task, "task");
        return ConnCache.shared(conn);
    }
}
