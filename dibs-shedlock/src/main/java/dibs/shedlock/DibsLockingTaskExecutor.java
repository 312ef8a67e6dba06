package dibs.shedlock;

import dibs.DibsClient;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockingTaskExecutorListener;

/**
 * ShedLock's {@link DefaultLockingTaskExecutor} on a {@link DibsLockProvider}, which also records
 * in the run history whether each task threw ({@link TaskOutcome}): ShedLock's own executor
 * releases the lock without the task's outcome, so through it every run is recorded as a
 * success. Use it where code calls a {@code LockingTaskExecutor} directly:
 *
 * <pre>{@code
 * LockingTaskExecutor executor = new DibsLockingTaskExecutor(dibs);
 * executor.executeWithLock(() -> importPartners(), new LockConfiguration(Instant.now(), "partner-import",
 *         Duration.ofMinutes(10), Duration.ZERO));
 * }</pre>
 *
 * <p>Everything else is ShedLock's: {@code LockAssert}, {@code LockExtender}, re-entry on one
 * thread, the listener. Thread-safe; it never closes the client.
 */
public final class DibsLockingTaskExecutor implements LockingTaskExecutor {
    private final LockingTaskExecutor executor;

    /**
     * @param client the dibs client whose pool every lock goes through
     * @throws IllegalArgumentException if {@code client} is null
     */
    public DibsLockingTaskExecutor(DibsClient client) {
        this(client, LockingTaskExecutorListener.NO_OP);
    }

    /**
     * @param client the dibs client whose pool every lock goes through
     * @param listener hears ShedLock's lifecycle events, as with {@link DefaultLockingTaskExecutor}
     * @throws IllegalArgumentException if {@code client} is null
     */
    public DibsLockingTaskExecutor(DibsClient client, LockingTaskExecutorListener listener) {
        this.executor = new DefaultLockingTaskExecutor(new DibsLockProvider(client), listener);
    }

    @Override
    public void executeWithLock(Runnable task, LockConfiguration lockConfig) {
        try {
            TaskOutcome.record(() -> {
                executor.executeWithLock(task, lockConfig);
                return null;
            });
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) { // a Runnable throws no checked exception
            throw new IllegalStateException(impossible);
        }
    }

    @Override
    public void executeWithLock(Task task, LockConfiguration lockConfig) throws Throwable {
        TaskOutcome.record(() -> {
            executor.executeWithLock(task, lockConfig);
            return null;
        });
    }

    @Override
    public <T> TaskResult<T> executeWithLock(TaskWithResult<T> task, LockConfiguration lockConfig) throws Throwable {
        return TaskOutcome.record(() -> executor.executeWithLock(task, lockConfig));
    }
}
