package dibs;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The methods of {@link Dibs} on a connection pool of this client's own, made by
 * {@link Dibs#client(Object)}. Close it when done: its connections are dropped, and any call
 * after that throws {@link IllegalStateException}. A call running while another thread closes
 * the client finishes normally. Thread-safe.
 *
 * <pre>{@code
 * try (DibsClient dibs = Dibs.client("redis://redis:6379")) {
 *     dibs.execute("nightly-report", 600, 30, () -> buildReport());
 * }
 * }</pre>
 */
public final class DibsClient implements AutoCloseable {
    private final long handle;
    private final DibsListener listener;
    private volatile boolean closed;

    DibsClient(long handle, DibsListener listener) {
        this.handle = handle;
        this.listener = listener;
    }

    /**
     * As {@link Dibs#execute(Object, String, long, long, Runnable)}, on this client's pool.
     *
     * @param lockName the lock's name
     * @param atMostSec how long the lock is held at most, in seconds
     * @param atLeastSec how long the lock is held at least, in seconds
     * @param task what to run while holding the lock
     * @return true if the lock was won and the task ran
     */
    public boolean execute(String lockName, long atMostSec, long atLeastSec, Runnable task) {
        return attempt(lockName, atMostSec, atLeastSec, Dibs.supplier(task)).acquired();
    }

    /**
     * As {@link Dibs#execute(Object, String, Duration, Duration, Runnable)}, on this client's pool.
     *
     * @param lockName the lock's name
     * @param atMost how long the lock is held at most
     * @param atLeast how long the lock is held at least
     * @param task what to run while holding the lock
     * @return true if the lock was won and the task ran
     */
    public boolean execute(String lockName, Duration atMost, Duration atLeast, Runnable task) {
        return attempt(lockName, atMost, atLeast, Dibs.supplier(task)).acquired();
    }

    /**
     * As {@link Dibs#executeWithResult(Object, String, long, long, Supplier)}, on this client's pool.
     *
     * @param <T> the task's result type
     * @param lockName the lock's name
     * @param atMostSec how long the lock is held at most, in seconds
     * @param atLeastSec how long the lock is held at least, in seconds
     * @param task what to run while holding the lock
     * @return the task's value, or empty if skipped (or the task returned null)
     */
    public <T> Optional<T> executeWithResult(String lockName, long atMostSec, long atLeastSec, Supplier<T> task) {
        return attempt(lockName, atMostSec, atLeastSec, task).toOptional();
    }

    /**
     * As {@link Dibs#executeWithResult(Object, String, Duration, Duration, Supplier)}, on this
     * client's pool.
     *
     * @param <T> the task's result type
     * @param lockName the lock's name
     * @param atMost how long the lock is held at most
     * @param atLeast how long the lock is held at least
     * @param task what to run while holding the lock
     * @return the task's value, or empty if skipped (or the task returned null)
     */
    public <T> Optional<T> executeWithResult(String lockName, Duration atMost, Duration atLeast, Supplier<T> task) {
        return attempt(lockName, atMost, atLeast, task).toOptional();
    }

    /**
     * As {@link Dibs#attempt(Object, String, long, long, Supplier)}, on this client's pool.
     *
     * @param <T> the task's result type
     * @param lockName the lock's name
     * @param atMostSec how long the lock is held at most, in seconds
     * @param atLeastSec how long the lock is held at least, in seconds
     * @param task what to run while holding the lock
     * @return the outcome
     */
    public <T> DibsResult<T> attempt(String lockName, long atMostSec, long atLeastSec, Supplier<T> task) {
        checkOpen(lockName, task);
        return Lifecycle.run(handle, listener, lockName, atMostSec, atLeastSec, task);
    }

    /**
     * As {@link Dibs#attempt(Object, String, Duration, Duration, Supplier)}, on this client's pool.
     *
     * @param <T> the task's result type
     * @param lockName the lock's name
     * @param atMost how long the lock is held at most
     * @param atLeast how long the lock is held at least
     * @param task what to run while holding the lock
     * @return the outcome
     */
    public <T> DibsResult<T> attempt(String lockName, Duration atMost, Duration atLeast, Supplier<T> task) {
        checkOpen(lockName, task);
        return Lifecycle.run(handle, listener, lockName, atMost, atLeast, task);
    }

    /**
     * Takes the lock {@code lockName} if it is free, and holds it until the lease is released:
     * for locked work that is not one call (ShedLock's {@code SimpleLock}). With keep-alive, the
     * lock is extended until then.
     *
     * @param lockName the lock's name
     * @param atMost how long the lock is held at most, counted from now
     * @param atLeast how long the lock is held at least ({@code Duration.ZERO..atMost})
     * @return the lease; empty when another holder has the lock
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if the lock could not be tried
     */
    public Optional<DibsLease> tryLock(String lockName, Duration atMost, Duration atLeast) {
        checkOpen(lockName, this);
        return Optional.ofNullable(Lifecycle.tryLock(handle, lockName, atMost, atLeast));
    }

    /**
     * As {@link Dibs#inspect(Object, String)}, on this client's pool.
     *
     * @param lockName the lock's name
     * @return what Redis holds for that lock now
     */
    public LockInfo inspect(String lockName) {
        checkOpen(lockName, this);
        return NativeIo.inspect(handle, lockName);
    }

    /** Drops this client's connections. Closing twice is harmless. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        NativeLib.close(handle);
    }

    private void checkOpen(String lockName, Object task) {
        if (closed) {
            throw new IllegalStateException("this DibsClient is closed");
        }
        Lifecycle.checkNotNull(lockName, "lockName");
        Lifecycle.checkNotNull(task, "task");
    }
}
