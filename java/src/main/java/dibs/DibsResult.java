package dibs;

import java.time.Duration;
import java.util.NoSuchElementException;
import java.util.Optional;

/**
 * How one locked call ended: whether this instance won the lock and ran the task, the task's
 * value (which may be {@code null}), and whether the lock was still ours when it was released.
 * Unlike {@link Dibs#executeWithResult}, it tells "skipped" apart from "ran and returned null".
 *
 * <pre>{@code
 * DibsResult<Report> r = Dibs.attempt(conn, "nightly-report", 600, 30, () -> buildReport());
 * if (r.acquired()) publish(r.value());   // value() may be null if buildReport() returned null
 * }</pre>
 *
 * @param <T> the task's value type
 */
public final class DibsResult<T> {
    private static final DibsResult<?> SKIPPED = new DibsResult<>(false, null, false, Duration.ZERO, 0);
    private static final DibsResult<?> UNCONFIRMED = new DibsResult<>(false, null, false, Duration.ZERO, 0);

    private final boolean acquired;
    private final T value;
    private final boolean ownedToTheEnd;
    private final Duration elapsed;
    private final long fencingToken;

    private DibsResult(boolean acquired, T value, boolean ownedToTheEnd, Duration elapsed, long fencingToken) {
        this.acquired = acquired;
        this.value = value;
        this.ownedToTheEnd = ownedToTheEnd;
        this.elapsed = elapsed;
        this.fencingToken = fencingToken;
    }

    @SuppressWarnings("unchecked")
    static <T> DibsResult<T> skipped() {
        return (DibsResult<T>) SKIPPED;
    }

    /** Won, but not confirmed on the replicas in time (durable acquire), and given back. */
    @SuppressWarnings("unchecked")
    static <T> DibsResult<T> givenBack() {
        return (DibsResult<T>) UNCONFIRMED;
    }

    static <T> DibsResult<T> ran(T value, boolean ownedToTheEnd, Duration elapsed, long fencingToken) {
        return new DibsResult<>(true, value, ownedToTheEnd, elapsed, fencingToken);
    }

    /**
     * @return true if the task did not run because the lock, though won, was not confirmed on the
     *     replicas in time (durable acquire) and was given back, rather than held by another
     *     instance ({@link #acquired()} is then false too)
     */
    public boolean unconfirmed() {
        return this == UNCONFIRMED;
    }

    /** @return true if this instance won the lock and ran the task; false if it was skipped */
    public boolean acquired() {
        return acquired;
    }

    /**
     * @return the task's value, possibly {@code null}
     * @throws NoSuchElementException if the task was skipped ({@link #acquired()} is false)
     */
    public T value() {
        if (!acquired) {
            throw new NoSuchElementException(
                    unconfirmed()
                            ? "the task did not run: the lock was won, not confirmed on the replicas in time"
                                    + " (durable acquire), and given back"
                            : "the task was skipped: another instance held the lock");
        }
        return value;
    }

    /** @return the task's value; empty if the task was skipped or returned {@code null} */
    public Optional<T> toOptional() {
        return Optional.ofNullable(value);
    }

    /**
     * @return true if the lock was still this instance's when it was released, so no other
     *     instance can have run the task meanwhile; false if it was lost (it expired, or
     *     keep-alive found it taken), if the release failed, or if the task was skipped
     */
    public boolean ownedToTheEnd() {
        return ownedToTheEnd;
    }

    /**
     * @return the fencing token the task ran under (see {@link DibsLease#fencingToken()}); 0 when
     *     skipped
     */
    public long fencingToken() {
        return fencingToken;
    }

    /** @return how long the lock was held, from acquisition to release; zero when skipped */
    public Duration elapsed() {
        return elapsed;
    }

    @Override
    public String toString() {
        return acquired
                ? "DibsResult[ran, value=" + value + ", ownedToTheEnd=" + ownedToTheEnd + ", elapsed=" + elapsed
                        + ", fencingToken=" + fencingToken + "]"
                : unconfirmed() ? "DibsResult[unconfirmed]" : "DibsResult[skipped]";
    }
}
