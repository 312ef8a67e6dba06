package dibs;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Locked calls on one connection pool. {@link Dibs#client(Object)} makes one with a pool of its
 * own: close it when done, its connections are dropped, and any call after that throws
 * {@link IllegalStateException}. A call running while another thread closes the client finishes
 * normally. {@link Dibs}'s static methods are these methods, on a client shared by equal conns.
 * Thread-safe.
 *
 * <pre>{@code
 * try (DibsClient dibs = Dibs.client("redis://redis:6379")) {
 *     dibs.execute("nightly-report", 600, 30, () -> buildReport());
 * }
 * }</pre>
 */
public final class DibsClient implements AutoCloseable {
    /** A listing's scan budget left to the core: its default, 5 seconds. */
    private static final long SCAN_BUDGET_MS = -1;

    private final ClientHandle client;
    private final long handle;
    private volatile boolean closed;

    DibsClient(long handle, DibsListener listener, boolean interruptOnLost) {
        this.client = new ClientHandle(handle, listener, interruptOnLost);
        this.handle = handle;
    }

    /**
     * Runs {@code task} if and only if this process wins the lock {@code lockName}.
     *
     * @param lockName the lock's name; instances that should exclude each other use the same one
     * @param atMostSec how long the lock is held at most, in seconds, counted from acquisition
     * @param atLeastSec how long the lock is held at least, in seconds ({@code 0..atMostSec})
     * @param task what to run while holding the lock
     * @return {@code true} if the lock was won and the task ran, {@code false} if another
     *     instance held it and the task was skipped
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public boolean execute(String lockName, long atMostSec, long atLeastSec, Runnable task) {
        return attempt(lockName, atMostSec, atLeastSec, supplier(task)).acquired();
    }

    /**
     * Runs {@code task} if and only if this process wins the lock {@code lockName}, with
     * durations of any length (in whole milliseconds, see {@link Dibs}'s class docs).
     *
     * @param lockName the lock's name; instances that should exclude each other use the same one
     * @param atMost how long the lock is held at most, counted from acquisition
     * @param atLeast how long the lock is held at least ({@code Duration.ZERO..atMost})
     * @param task what to run while holding the lock
     * @return {@code true} if the lock was won and the task ran, {@code false} if skipped
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public boolean execute(String lockName, Duration atMost, Duration atLeast, Runnable task) {
        return attempt(lockName, atMost, atLeast, supplier(task)).acquired();
    }

    /**
     * Runs {@code task} for one tick of a scheduled job, at most once across every instance:
     * the instance that wins the tick's lock runs it, and the lock stays behind for all of
     * {@code atMost} from then (released early or not) as the tick's "done" marker, so an
     * instance whose scheduler fires the same tick later (up to {@code atMost}) skips it. No
     * {@code atLeast} to size: a name that says which tick it is needs none.
     *
     * <pre>{@code
     * @Scheduled(cron = "0 0 3 * * *")
     * void nightly() {
     *     dibs.executeOnce("nightly-report", LocalDate.now().toString(), Duration.ofHours(1), this::buildReport);
     * }
     * }</pre>
     *
     * @param lockName the job's name (the Redis key is the prefix, the name, {@code @} and the tick)
     * @param tick which tick this is: its fire time or date, the same on every instance (1 to
     *     128 bytes of UTF-8, no {@code @}, no control characters)
     * @param atMost how long the lock is held, and the tick marked done, counted from acquisition;
     *     longer than the task and than the skew between instances' schedulers
     * @param task what to run
     * @return {@code true} if this instance ran the tick, {@code false} if it was run (or is
     *     running) elsewhere
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public boolean executeOnce(String lockName, String tick, Duration atMost, Runnable task) {
        return attemptOnce(lockName, tick, atMost, supplier(task)).acquired();
    }

    /**
     * {@link #executeOnce}, returning the task's outcome.
     *
     * @param <T> the task's result type
     * @param lockName the job's name
     * @param tick which tick this is (see {@link #executeOnce})
     * @param atMost how long the lock is held, and the tick marked done, from acquisition
     * @param task what to run
     * @return the outcome
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public <T> DibsResult<T> attemptOnce(String lockName, String tick, Duration atMost, Supplier<T> task) {
        checkOpen(lockName, task);
        Lifecycle.checkNotNull(tick, "tick");
        return Lifecycle.run(client, lockName, tick, LockDurations.of(atMost, atMost), task);
    }

    /**
     * {@link #executeOnce(String, String, Duration, Runnable)} with catch-up: first the ticks
     * of the window that no instance ran, as the policy says ({@link DibsCatchUp}), each once
     * across every instance and recorded in the history as a catch-up's, then the tick due now.
     * Every tick is taken only when the job's history proves that it did not run, in the same
     * script as its lock: an instance that fires late never runs a tick twice.
     *
     * <pre>{@code
     * dibs.executeOnce("nightly-report", DibsScheduledTick.catchUp(), Duration.ofHours(1), tick -> build(tick));
     * }</pre>
     *
     * @param lockName the job's name
     * @param ticks the window's ticks, the last due now, and the policy
     * @param atMost how long each tick's lock is held, and the tick marked done, from acquisition
     * @param task what to run, given the tick it runs for
     * @return the ticks this instance ran, oldest first; empty when each ran (or runs) elsewhere
     * @throws IllegalArgumentException if an argument is {@code null} or invalid, or the conn
     *     keeps no history or is a Cluster's (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if a tick could not be tried (after the other ticks were)
     */
    public List<String> executeOnce(String lockName, DibsCatchUp ticks, Duration atMost, Consumer<String> task) {
        checkOpen(lockName, task);
        Lifecycle.checkNotNull(ticks, "ticks");
        return TickCatchUp.run(client, lockName, ticks, LockDurations.of(atMost, atMost), task);
    }

    /**
     * Runs {@code task} if and only if this process wins the lock, and returns its value.
     *
     * <p><b>Note:</b> {@code Optional.empty()} means either that the task was skipped or that it
     * ran and returned {@code null}; the two cannot be told apart here. {@link #attempt} can.
     *
     * @param <T> the task's result type
     * @param lockName the lock's name; instances that should exclude each other use the same one
     * @param atMostSec how long the lock is held at most, in seconds, counted from acquisition
     * @param atLeastSec how long the lock is held at least, in seconds ({@code 0..atMostSec})
     * @param task what to run while holding the lock
     * @return the task's value, or empty if the task was skipped (or returned {@code null})
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public <T> Optional<T> executeWithResult(String lockName, long atMostSec, long atLeastSec, Supplier<T> task) {
        return attempt(lockName, atMostSec, atLeastSec, task).toOptional();
    }

    /**
     * Runs {@code task} if and only if this process wins the lock, and returns its value, with
     * durations of any length (in whole milliseconds, see {@link Dibs}'s class docs).
     *
     * <p><b>Note:</b> {@code Optional.empty()} means either that the task was skipped or that it
     * ran and returned {@code null}; the two cannot be told apart here. {@link #attempt} can.
     *
     * @param <T> the task's result type
     * @param lockName the lock's name; instances that should exclude each other use the same one
     * @param atMost how long the lock is held at most, counted from acquisition
     * @param atLeast how long the lock is held at least ({@code Duration.ZERO..atMost})
     * @param task what to run while holding the lock
     * @return the task's value, or empty if the task was skipped (or returned {@code null})
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public <T> Optional<T> executeWithResult(String lockName, Duration atMost, Duration atLeast, Supplier<T> task) {
        return attempt(lockName, atMost, atLeast, task).toOptional();
    }

    /**
     * Runs {@code task} if and only if this process wins the lock, and says how it went: skipped,
     * or ran with this value (which may be {@code null}), and whether the lock was still ours
     * when it was released.
     *
     * <p>The call is a {@link #tryLock} lease around the task: the task runs on the calling
     * thread, outside any native call; the lease is released however the task ends, and what
     * the task throws reaches the caller as the very same object (a failed release never
     * replaces it). The listener hears the call as it hears a lease, with {@code finished}
     * timing the task itself.
     *
     * @param <T> the task's result type
     * @param lockName the lock's name; instances that should exclude each other use the same one
     * @param atMostSec how long the lock is held at most, in seconds, counted from acquisition
     * @param atLeastSec how long the lock is held at least, in seconds ({@code 0..atMostSec})
     * @param task what to run while holding the lock
     * @return the outcome
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public <T> DibsResult<T> attempt(String lockName, long atMostSec, long atLeastSec, Supplier<T> task) {
        checkOpen(lockName, task);
        return Lifecycle.run(client, lockName, null, LockDurations.ofSeconds(atMostSec, atLeastSec), task);
    }

    /**
     * {@link #attempt(String, long, long, Supplier)} with durations of any length (in whole
     * milliseconds, see {@link Dibs}'s class docs).
     *
     * @param <T> the task's result type
     * @param lockName the lock's name; instances that should exclude each other use the same one
     * @param atMost how long the lock is held at most, counted from acquisition
     * @param atLeast how long the lock is held at least ({@code Duration.ZERO..atMost})
     * @param task what to run while holding the lock
     * @return the outcome
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if the lock could not be tried; the task did not run
     */
    public <T> DibsResult<T> attempt(String lockName, Duration atMost, Duration atLeast, Supplier<T> task) {
        checkOpen(lockName, task);
        return Lifecycle.run(client, lockName, null, LockDurations.of(atMost, atLeast), task);
    }

    /**
     * Takes the lock {@code lockName} if it is free, and holds it until the lease is released:
     * for locked work that is not one call (ShedLock's {@code SimpleLock}). With keep-alive, the
     * lock is extended until then. The listener hears the lease (see {@link DibsLease}).
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
        return Optional.ofNullable(DibsLease.acquire(client, lockName, null, LockDurations.of(atMost, atLeast)));
    }

    /**
     * Tells whether the lock {@code lockName} is held, for how much longer, and by which host and
     * process. One round trip; it never changes the lock.
     *
     * @param lockName the lock's name
     * @return what Redis holds for that lock now
     * @throws IllegalArgumentException if the name is {@code null} or invalid (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if Redis could not be read
     */
    public LockInfo inspect(String lockName) {
        checkOpen(lockName, this);
        return new LockInfo(NativeIo.inspect(handle, lockName));
    }

    /**
     * The last {@code limit} recorded runs of a job, or of one lock of a job, fleet-wide, the
     * newest first, and since when the history holds every run of it: of the job named
     * {@code name} when one is recorded, or else of the lock of that name (its runs within its
     * job's history). A call's job is its lock name unless the name surely ends in a tick
     * ({@code report} for {@code report-2026-12-01}, see {@link Dibs#jobOf}); for
     * {@link #executeOnce} it is the name it was given. One round trip for a job, up to three for
     * a lock.
     *
     * @param name a job's name, or a lock's
     * @param limit how many runs at most (1 to 10,000); the history keeps about 100 per job
     * @return the runs, newest first; empty when none is recorded
     * @throws IllegalArgumentException if an argument is {@code null} or invalid (before I/O)
     * @throws DibsException if Redis could not be read
     */
    public DibsHistory history(String name, int limit) {
        checkOpen(name, this);
        return new DibsHistory(name, NativeIo.history(handle, name, limit));
    }

    /**
     * Whether this client's releases record their runs in the history: the conn's
     * {@code history} ({@link DibsOptions.Builder#history}), true by default. Where it is false,
     * this instance's runs are missing from {@link #history}, so no absence of a run there proves
     * that the job did not run. No I/O.
     *
     * @return whether each release records its run
     * @throws IllegalStateException if this client is closed
     */
    public boolean keepsHistory() {
        checkOpen("keepsHistory", this);
        return NativeLib.keepsHistory(handle);
    }

    /**
     * The jobs with a recorded run, fleet-wide, the most recently run first, with the time of
     * their last record: found by {@code SCAN} over the history's keys, for at most 5 seconds
     * (on every master of a Cluster); a scan cut short says so ({@link DibsListing#complete}).
     *
     * @param limit how many at most (1 to 10,000); the history keeps about 1,000 jobs
     * @return the jobs, the most recently recorded first
     * @throws IllegalArgumentException on a bad limit
     * @throws DibsException if Redis could not be read
     */
    public DibsListing<DibsJob> jobs(int limit) {
        checkOpen("jobs", this);
        Border.Listing found = NativeIo.jobs(handle, limit, SCAN_BUDGET_MS);
        List<DibsJob> jobs = new ArrayList<>();
        for (Border.Recorded job : found.jobs) {
            jobs.add(new DibsJob(job.job, Instant.ofEpochMilli(job.lastRecordedMs)));
        }
        return new DibsListing<>(Collections.unmodifiableList(jobs), found);
    }

    /**
     * The locks held now, fleet-wide, whose names match a glob ({@code *} for all), by
     * {@code SCAN} over the key prefix to the end of the keyspace (on every master of a Cluster),
     * for at most 5 seconds: a scan cut short says so ({@link DibsListing#complete}), and then a
     * held lock may be missing from it.
     *
     * @param pattern a Redis glob over the lock names
     * @param limit how many at most (1 to 10,000)
     * @return the held locks, by name
     * @throws IllegalArgumentException on a bad argument
     * @throws DibsException if Redis could not be read
     */
    public DibsListing<HeldLock> locks(String pattern, int limit) {
        checkOpen(pattern, this);
        Border.Listing found = NativeIo.locks(handle, pattern, limit, SCAN_BUDGET_MS);
        return new DibsListing<>(HeldLock.all(found.locks), found);
    }

    /**
     * The locks of a job that a run holds now, fleet-wide: its own name, its ticks'
     * ({@code job@tick}) and the names whose job it is ({@link Dibs#jobOf}), each still held by
     * its run (a lock kept after its release, or a tick's done-mark, is not). A {@code SCAN} as
     * {@link #locks} does, for at most 5 seconds: for a dead-man's switch, not for every call.
     *
     * @param job the job
     * @return the running locks, by name; {@link DibsListing#complete} says whether the scan
     *     reached the end
     * @throws IllegalArgumentException on a bad job name
     * @throws DibsException if Redis could not be read
     */
    public DibsListing<HeldLock> running(String job) {
        checkOpen(job, this);
        return runningWithin(job, SCAN_BUDGET_MS);
    }

    /**
     * {@link #running(String)}, scanning for at most {@code budget}: more than 5 seconds where
     * the keyspace is too large for them (a scan cut short may miss a run).
     *
     * @param job the job
     * @param budget how long the scan may take: more than 0, at most 1 hour
     * @return the running locks, by name; {@link DibsListing#complete} says whether the scan
     *     reached the end
     * @throws IllegalArgumentException on a bad job name or budget (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if Redis could not be read
     */
    public DibsListing<HeldLock> running(String job, Duration budget) {
        checkOpen(job, this);
        checkScanBudget(budget);
        return runningWithin(job, DibsCheck.ms(budget));
    }

    /** The scan of {@link #running}, within {@code budgetMs} (-1: the core's default). */
    private DibsListing<HeldLock> runningWithin(String job, long budgetMs) {
        Border.Listing found = NativeIo.running(handle, job, budgetMs);
        return new DibsListing<>(HeldLock.all(found.locks), found);
    }

    /**
     * Checks a scan's budget as {@link #running(String, Duration)} does, without I/O: for a
     * setting read before any scan.
     *
     * @param budget how long a scan may take
     * @throws IllegalArgumentException unless it is more than 0 and at most 1 hour
     */
    public static void checkScanBudget(Duration budget) {
        Lifecycle.checkNotNull(budget, "budget");
        NativeLib.validateBudget(DibsCheck.ms(budget));
    }

    /**
     * How the job {@code job} stands: {@code dibs check}'s question, answered by the same judge
     * (the Rust core's), so both always agree. Reads the job's last runs (one round trip; where
     * none of them succeeded, its whole history: a second), the runs holding its locks where a
     * rule needs them (a {@code SCAN} within the question's budget), and its own lock for a job
     * expected {@link DibsCheck#every} period (one round trip, or found by that scan). Unknown,
     * never overdue or ok on a guess, where the history or a scan cut short cannot tell; and
     * where this client records no runs ({@link #keepsHistory}) and the answer rests on their
     * absence.
     *
     * @param job the job, or one lock of a job
     * @param question what is asked
     * @return how the job stands, with what was read
     * @throws IllegalArgumentException on a bad name or duration (before I/O)
     * @throws IllegalStateException if this client is closed
     * @throws DibsException if Redis could not be read
     */
    public DibsCheckResult check(String job, DibsCheck question) {
        checkOpen(job, this);
        Lifecycle.checkNotNull(question, "question");
        return new DibsCheckResult(job, question.ask(handle, job));
    }

    /**
     * The lock {@code lockName} as {@link #inspect} reads it, with its holder's token (one round
     * trip): what {@link #forceRelease} takes.
     *
     * @param lockName the lock's name
     * @return the held lock; empty when free
     * @throws IllegalArgumentException if the name is {@code null} or invalid (before I/O)
     * @throws DibsException if Redis could not be read
     */
    public Optional<HeldLock> heldLock(String lockName) {
        checkOpen(lockName, this);
        Border.Held found = NativeIo.heldLock(handle, lockName);
        return found == null ? Optional.empty() : Optional.of(new HeldLock(found));
    }

    /**
     * An operator's forced release: deletes the lock if it holds {@code token} (as
     * {@link HeldLock#token()} shows it, from {@link #heldLock} or {@link #locks}), and records that in its job's history with
     * {@code by}. A lock taken since by another holder is left alone.
     *
     * @param lockName the lock's name
     * @param token the holder's token
     * @param by who forces it, for the history ({@code user@host}, an actuator principal): 1 to 128
     *     bytes without {@code ;} or control characters
     * @return true if the lock was deleted; false if it was free or held by another token
     * @throws IllegalArgumentException on a bad argument (before I/O)
     * @throws DibsException if Redis could not be reached
     */
    public boolean forceRelease(String lockName, String token, String by) {
        checkOpen(lockName, this);
        Lifecycle.checkNotNull(token, "token");
        Lifecycle.checkNotNull(by, "by");
        return Border.ForcedRelease.of(NativeIo.forceRelease(handle, lockName, token, by))
                == Border.ForcedRelease.RELEASED;
    }

    /** The native client handle. */
    long handle() {
        return handle;
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

    private static Supplier<Void> supplier(Runnable task) {
        Lifecycle.checkNotNull(task, "task");
        return () -> {
            task.run();
            return null;
        };
    }
}
