package dibs.shedlock;

import dibs.DibsClient;
import dibs.DibsLease;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link net.javacrumbs.shedlock.core.LockProvider} on dibs: every
 * {@code @SchedulerLock} job, and every {@code LockingTaskExecutor} call, runs under a dibs lock
 * on Redis. It is the one bean a ShedLock user changes:
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(DibsClient dibs) {
 *     return new DibsLockProvider(dibs);
 * }
 * }</pre>
 *
 * <p>{@link #lock} takes the lock with {@link DibsClient#tryLock}: ShedLock's lock name is the
 * dibs lock name (so the Redis key is the client's key prefix, {@code dibs:} by default, and the
 * name), its {@code lockAtMostFor} is dibs's {@code atMost} and its {@code lockAtLeastFor} is
 * dibs's {@code atLeast}. Both durations count from the moment Redis grants the lock, on Redis's
 * side: the lock's {@code lockAtMostUntil} instant, ShedLock's {@code ClockProvider} and the
 * time options of ShedLock's database providers ({@code usingDbTime()} and the like) do not
 * apply, and no clock of the JVM is compared with another host's.
 *
 * <p>ShedLock releases a lock without the task's outcome, so the run history records a task
 * run through a bare provider as a success even when it threw. Where dibs can see the outcome it
 * records it: through {@link DibsLockingTaskExecutor}, and for every {@code @SchedulerLock}
 * method in a Spring Boot application with dibs's starter ({@link TaskOutcome}).
 *
 * <p>The returned {@link SimpleLock} releases the lock on {@link SimpleLock#unlock()} (kept for
 * the rest of {@code lockAtLeastFor}, else deleted; a lock that was no longer ours is left alone,
 * with a warning in dibs's log) and supports {@link SimpleLock#extend}, as ShedLock's
 * {@code AbstractSimpleLock} does: it returns a new lock and invalidates the old one. This
 * provider is therefore an {@link ExtensibleLockProvider}, so ShedLock's
 * {@code KeepAliveLockProvider} and {@code LockExtender} work with it; a {@link DibsClient} made
 * with {@code keepAlive(true)} extends the lock by itself instead, from Rust, while it is held.
 *
 * <p>Every lock is a {@link DibsLease}, so the client's {@link dibs.DibsListener} (and with it a
 * Spring application's dibs meters and {@code /actuator/dibs}) hears ShedLock's jobs as it hears
 * dibs's own: {@link #lock} is {@code attempt}, then {@code acquired} or {@code skipped};
 * {@link SimpleLock#unlock()} is {@code finished}, then {@code released}, {@code expired} or
 * {@code releaseFailed}. An extend is the same lease, not a new lock.
 *
 * <p>The provider does not own the client: it never closes it. Close the client when the
 * application stops (a Spring {@code @Bean} of type {@link DibsClient} is closed by Spring, as
 * it is {@link AutoCloseable}). Thread-safe.
 */
public final class DibsLockProvider implements ExtensibleLockProvider {
    private final DibsClient client;

    /**
     * A provider over {@code client}, which stays the caller's to close.
     *
     * @param client the dibs client whose pool every lock goes through
     * @throws IllegalArgumentException if {@code client} is null
     */
    public DibsLockProvider(DibsClient client) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null: pass a DibsClient made by Dibs.client(...)");
        }
        this.client = client;
    }

    /**
     * Takes the lock {@code lockConfiguration.getName()} if it is free, for
     * {@code getLockAtMostFor()} at most and {@code getLockAtLeastFor()} at least, both counted
     * from the acquisition on Redis.
     *
     * @param lockConfiguration ShedLock's lock name and durations
     * @return the lock, to unlock when the task is done; empty if another holder has it
     * @throws IllegalArgumentException if {@code lockConfiguration} is null, or if dibs refuses
     *     the name or durations (see dibs's validation: a name of 1 to 512 bytes of UTF-8 without
     *     control characters, {@code lockAtMostFor > 0}), before any network I/O
     * @throws IllegalStateException if the client is closed
     * @throws dibs.DibsException if the lock could not be tried (Redis unreachable, timeout,
     *     authentication or permission failure)
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
        if (lockConfiguration == null) {
            throw new IllegalArgumentException("lockConfiguration must not be null");
        }
        // Within a task whose outcome is recorded, the first lock is that task's.
        TaskOutcome.Frame task = TaskOutcome.claim();
        Optional<DibsLease> lease = client.tryLock(
                lockConfiguration.getName(),
                lockConfiguration.getLockAtMostFor(),
                lockConfiguration.getLockAtLeastFor());
        try {
            return lease.map(l -> new DibsSimpleLock(l, task));
        } catch (Throwable e) { // the JVM failing (out of memory): let go of the lock now, not at atMost
            try {
                lease.ifPresent(DibsLease::close);
            } catch (Throwable again) {
                e.addSuppressed(again);
            }
            throw e;
        }
    }

    /**
     * ShedLock's handle on a {@link DibsLease}; invalid after unlock or extend. An extend makes a
     * new handle on the same lease, returned only once this one is invalid. A ReentrantLock, not
     * a monitor, so that a virtual thread waiting here does not pin its carrier.
     */
    private static final class DibsSimpleLock implements SimpleLock {
        private final DibsLease lease;
        /** The task whose outcome the release records ({@link TaskOutcome}), or null. */
        private final TaskOutcome.Frame task;

        private final ReentrantLock guard = new ReentrantLock();
        private boolean valid = true; // guarded by guard

        DibsSimpleLock(DibsLease lease, TaskOutcome.Frame task) {
            this.lease = lease;
            this.task = task;
        }

        /** Releases now, or once the task has ended when its outcome is recorded. */
        private void release() {
            if (task == null || !task.defer(lease)) {
                lease.release();
            }
        }

        /**
         * Releases the lock. Invalid afterwards, even if the release failed (dibs logs that; the
         * key then expires after lockAtMostFor).
         *
         * @throws IllegalStateException if this lock was unlocked or extended already
         */
        @Override
        public void unlock() {
            guard.lock();
            try {
                checkValid();
                valid = false;
                release();
            } finally {
                guard.unlock();
            }
        }

        /**
         * If the lock is still ours: sets its expiry to {@code lockAtMostFor} from now and keeps it
         * for at least {@code lockAtLeastFor} from now, and returns a new lock for it; this one is
         * invalid afterwards. If it was no longer ours (expired, or taken by another holder),
         * returns empty and lets go of it (touching nothing in Redis); this one is invalid too.
         *
         * @throws IllegalArgumentException if a duration is null or invalid (this lock stays valid)
         * @throws IllegalStateException if this lock was unlocked or extended already
         * @throws dibs.DibsException if Redis could not be reached (this lock stays valid)
         */
        @Override
        public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
            guard.lock();
            try {
                checkValid();
                boolean extended = lease.extend(lockAtMostFor, lockAtLeastFor);
                valid = false;
                if (!extended) {
                    release(); // no longer ours: nothing is touched, dibs logs a warning
                    return Optional.empty();
                }
                return Optional.of(new DibsSimpleLock(lease, task));
            } finally {
                guard.unlock();
            }
        }

        private void checkValid() {
            if (!valid) {
                throw new IllegalStateException(
                        "the lock '" + lease.lockName() + "' is not valid: it was unlocked or extended already");
            }
        }

        @Override
        public String toString() {
            guard.lock();
            try {
                return "DibsSimpleLock[" + lease.lockName() + (valid ? "]" : ", invalid]");
            } finally {
                guard.unlock();
            }
        }
    }
}
