package dibs.shedlock;

import dibs.DibsLease;

/**
 * How a ShedLock task ended, for the run history of the dibs lock ShedLock took for it. ShedLock
 * releases its lock in a {@code finally}, which never sees the task's exception, so a provider
 * alone would record every run as a success. A task run through {@link #record} defers the
 * release of the first lock {@link DibsLockProvider} gives out on its thread meanwhile until the
 * task has ended, and then releases it telling the history whether it threw: a few stack frames
 * later, with no I/O between. {@link DibsLockingTaskExecutor} runs every task so, and the Spring
 * Boot starter runs every {@code @SchedulerLock} method so.
 */
public final class TaskOutcome {
    private static final ThreadLocal<Frame> CURRENT = new ThreadLocal<>();

    private TaskOutcome() {}

    /**
     * A task whose outcome is recorded.
     *
     * @param <T> what it returns
     */
    @FunctionalInterface
    public interface Task<T> {
        /**
         * @return the task's value
         * @throws Throwable what the task throws, which {@link #record} rethrows as is
         */
        T call() throws Throwable;
    }

    /**
     * Runs {@code task}, which takes its lock through ShedLock (a {@code LockingTaskExecutor} on
     * a {@link DibsLockProvider}), so that the run is recorded as failed when it throws.
     *
     * @param <T> what the task returns
     * @param task the task, ShedLock's locking included
     * @return what it returned
     * @throws Throwable what it threw, the same object
     */
    public static <T> T record(Task<T> task) throws Throwable {
        Frame outer = CURRENT.get();
        Frame frame = new Frame(Thread.currentThread());
        CURRENT.set(frame);
        T value;
        try {
            value = task.call();
        } catch (Throwable thrown) {
            end(frame, outer, thrown);
            throw thrown;
        }
        end(frame, outer, null);
        return value;
    }

    /** Closes {@code frame} and releases the lease it deferred; a failure rides along with the task's. */
    private static void end(Frame frame, Frame outer, Throwable thrown) {
        if (outer == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(outer);
        }
        try {
            frame.close(thrown);
        } catch (RuntimeException | Error e) { // the JVM failing, or a lease released twice
            if (thrown == null) {
                throw e;
            }
            thrown.addSuppressed(e);
        }
    }

    /** The frame whose lock the caller's {@code lock} is, once: null outside one, or after its first. */
    static Frame claim() {
        Frame frame = CURRENT.get();
        if (frame == null || frame.claimed) {
            return null;
        }
        frame.claimed = true;
        return frame;
    }

    /** One task's: its lock's release waits here until the task has ended. Thread-confined. */
    static final class Frame {
        private final Thread owner;
        private boolean claimed;
        private boolean open = true;
        private DibsLease deferred;

        private Frame(Thread owner) {
            this.owner = owner;
        }

        /** Keeps {@code lease} for the task's end; false when the task has ended (or on another thread). */
        boolean defer(DibsLease lease) {
            if (!open || Thread.currentThread() != owner) {
                return false;
            }
            deferred = lease;
            return true;
        }

        private void close(Throwable thrown) {
            open = false;
            if (deferred != null) {
                DibsLease lease = deferred;
                deferred = null;
                lease.release(thrown);
            }
        }
    }
}
