package dibs;

import java.util.function.Supplier;

/**
 * One run of a task, as seen by the native side: Rust calls {@link #run()} once it holds the
 * lock and {@link #released(int, long, String)} once it has released it. Neither method throws,
 * so that no Java exception is ever pending inside the native code; {@link Dibs} reads the
 * outcome afterwards.
 */
final class Invocation {
    /** The lock was released normally: deleted, or kept for the rest of atLeast. */
    static final int RELEASED = 1;
    /** At release the lock was no longer ours: it expired mid-task, maybe someone else holds it. */
    static final int NOT_OURS = 2;
    /** The release failed (connection lost, ...); {@link #releaseError()} says why. */
    static final int RELEASE_FAILED = 3;

    private final Supplier<?> task;
    private boolean ran;
    private Object value;
    private Throwable thrown;
    private int status;
    private long elapsedMs;
    private String releaseError;
    private boolean lostWhileRunning;

    private Invocation(Supplier<?> task) {
        this.task = task;
    }

    static Invocation ofSupplier(Supplier<?> task) {
        return new Invocation(task);
    }

    /** Called by Rust (signature {@code ()V}) while it holds the lock. Never throws. */
    void run() {
        ran = true;
        try {
            value = task.get();
        } catch (Throwable t) {
            thrown = t;
        }
    }

    /**
     * Called by Rust (signature {@code (IJLjava/lang/String;Z)V}) after the release. Never throws.
     * {@code lostWhileRunning}: keep-alive found the lock gone while the task ran.
     */
    void released(int status, long elapsedMs, String releaseError, boolean lostWhileRunning) {
        this.status = status;
        this.elapsedMs = elapsedMs;
        this.releaseError = releaseError;
        this.lostWhileRunning = lostWhileRunning;
    }

    boolean ran() {
        return ran;
    }

    Object value() {
        return value;
    }

    Throwable thrown() {
        return thrown;
    }

    int status() {
        return status;
    }

    long elapsedMs() {
        return elapsedMs;
    }

    String releaseError() {
        return releaseError;
    }

    boolean lostWhileRunning() {
        return lostWhileRunning;
    }
}
