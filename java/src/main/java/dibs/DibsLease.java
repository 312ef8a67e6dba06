package dibs;

import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A lock this process holds, from {@link DibsClient#tryLock} until {@link #release()}: for code
 * whose locked work is not one call, such as ShedLock's {@code SimpleLock}. Where the work is one
 * call, {@link DibsClient#execute} is simpler and cannot forget the release.
 *
 * <p>A lease is released once. One that becomes unreachable unreleased is released when the
 * garbage collector finds it, with a warning; until then its lock stays held (and, with
 * keep-alive, extended). Thread-safe.
 *
 * <p>The {@link DibsListener} of the client hears a lease as it hears {@code execute}: taking it
 * is {@code attempt}, then {@code acquired} or {@code skipped}; releasing it is
 * {@code finished} (with how long the lease was held here), then {@code released},
 * {@code expired} or {@code releaseFailed}. Every locked call of dibs is such a lease.
 *
 * <pre>{@code
 * try (DibsLease lease = client.tryLock("report", Duration.ofMinutes(10), Duration.ZERO).orElse(null)) {
 *     if (lease != null) {
 *         buildReport();
 *     }
 * }
 * }</pre>
 */
public final class DibsLease implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    private final LeaseState state;
    private final Cleaner.Cleanable cleanable;

    private DibsLease(LeaseState state) {
        this.state = state;
        this.cleanable = CLEANER.register(this, state);
    }

    /**
     * Takes a lock, the one way dibs does: tells {@code attempt}, tries the lock in Rust, then
     * tells {@code skipped} and returns null, or tells {@code acquired} and returns the lease.
     * With a {@code tick} (null for none), the lock of that tick of the job {@code lockName}.
     *
     * @throws IllegalArgumentException on an invalid name, tick or durations (from Rust, before I/O)
     * @throws DibsException if the lock could not be tried
     */
    static DibsLease acquire(ClientHandle client, String lockName, String tick, LockDurations durations) {
        return acquire(client, lockName, tick, durations, null, false, new Border.Acquired());
    }

    /**
     * {@link #acquire}, and with a {@code due} time (not null), the lock of a tick that may not
     * have run: taken only when the job's history proves that it did not ({@link
     * NativeLib#acquireUnrun}); a tick that ran is told as {@code skipped}, and one whose state
     * is unknown too, with a warning. {@code catchUp}: its run is recorded as a catch-up's.
     * {@code acquired} (new, made by the caller) receives what the acquire said: a null lease's
     * outcome tells taken from unconfirmed.
     */
    static DibsLease acquire(
            ClientHandle client,
            String lockName,
            String tick,
            LockDurations durations,
            java.time.Instant due,
            boolean catchUp,
            Border.Acquired acquired) {
        // Made before the lock exists, the records Rust fills included: between the native acquire
        // and the try below nothing can throw, and nothing leaks the lease. Inside the try, a
        // failure lets go of the lock at once; once made, the lease is the cleaner's too.
        DibsListener listener = client.listener;
        LeaseState state = new LeaseState(lockName, listener);
        Events.attempt(listener, lockName);
        if (tick != null) {
            Events.tick(listener, lockName, tick, catchUp);
        }
        try {
            if (due == null) {
                NativeIo.acquire(
                        client.id,
                        lockName,
                        tick,
                        durations.atMost,
                        durations.atLeast,
                        durations.unitMs,
                        listener != null,
                        acquired);
            } else {
                NativeIo.acquireUnrun(
                        client.id,
                        lockName,
                        tick,
                        durations.atMost,
                        durations.unitMs,
                        due.toEpochMilli(),
                        catchUp,
                        listener != null,
                        acquired);
            }
        } catch (RuntimeException | Error e) { // no lock: the listener hears how the call ended, then the caller
            Events.acquireFailed(listener, lockName, e);
            throw e;
        }
        JobNames.told(lockName, acquired.job); // before the listener hears more of the call
        String warning = acquired.warning;
        switch (acquired.outcome()) {
            case WON:
                break;
            case UNCONFIRMED: // given back already: a call that did not run
                Log.warning(warning);
                Events.unconfirmed(listener, lockName);
                return null;
            default: // taken, or the tick ran, is unknown or beyond reach
                Log.warning(warning);
                Events.skipped(listener, lockName);
                return null;
        }
        state.id = acquired.leaseId;
        state.acquiredAt = System.nanoTime();
        state.fencingToken = acquired.fencingToken;
        DibsLease lease;
        try {
            FaultInjection.at(FaultInjection.Point.LEASE_MADE);
            lease = new DibsLease(state);
            Log.warning(warning); // rare: keep-alive's schedule cannot hold for this atMost
            if (client.interruptOnLost) {
                state.interruptOnLost(Thread.currentThread());
            }
            Events.acquired(listener, lockName, state.fencingToken);
        } catch (Throwable e) { // the JVM failing (out of memory): let go of the lock now, not at atMost
            state.releaseUntold(e);
            throw e;
        }
        return lease;
    }

    /** @return the lock's name */
    public String lockName() {
        return state.lockName;
    }

    /**
     * The fencing token of this acquisition: greater than that of every earlier holder of the
     * lock, so that the resource the lock guards can refuse the writes of a holder that was
     * paused past its lease (a GC pause, a stopped VM) and woke after another took the lock:
     *
     * <pre>{@code
     * UPDATE report SET body = ?, fence = ? WHERE id = ? AND fence < ?   -- 0 rows: a stale holder
     * }</pre>
     *
     * <p>It is the Redis server's clock, in microseconds, read in the acquire's own script, so it
     * needs no key of its own. It holds as long as that clock does not step back past an
     * earlier token (a clock set back, a failover to a server whose clock is behind by more than
     * the time since the last acquisition). 0 when the server's ACL refuses {@code TIME}: no
     * guarded write then accepts it, and dibs logs a warning naming {@code +time} once per
     * connection spec. Kept after the release. No network I/O.
     *
     * @return the token: &gt; 0, or 0 where the server refuses {@code TIME}
     */
    public long fencingToken() {
        return state.fencingToken;
    }

    /**
     * With keep-alive: whether the lock was found taken by another holder, or could not be
     * extended before it would lapse, while this lease was held. Work that must not run without
     * the lock can check it between steps. Always false without keep-alive. No network I/O.
     *
     * @return true if the lock is known lost
     * @throws IllegalStateException if the lease was released
     */
    public boolean isLost() {
        LeaseState s = state;
        s.guard.lock();
        try {
            s.checkHeld();
            return NativeLib.isLost(s.id);
        } finally {
            s.guard.unlock();
        }
    }

    /**
     * With keep-alive: completes, on dibs's watcher thread, as soon as keep-alive finds the lock
     * taken by another holder or cannot extend it before it would lapse, so that work which must
     * not go on without the lock can stop at once ({@code lease.whenLost().thenRun(job::cancel)}).
     * It never completes if the lease is released first, nor without keep-alive (nothing watches
     * the lock then). Keep what runs on it short: it runs on the thread that tells every lease.
     * No network I/O.
     *
     * @return a stage completed when the lock is found lost
     * @throws IllegalStateException if the lease was released
     */
    public CompletionStage<Void> whenLost() {
        LeaseState s = state;
        s.guard.lock();
        try {
            s.checkHeld();
            if (s.lost == null) {
                s.lost = new CompletableFuture<>();
                s.watch();
            }
            return s.lost.minimalCompletionStage();
        } finally {
            s.guard.unlock();
        }
    }

    /**
     * With a client that interrupts on a lost lock ({@code DibsOptions.Builder#interruptOnLost}):
     * the thread that a loss found from now on interrupts, for as long as the lease is held.
     * {@code tryLock} names the thread that called it; name the thread that runs the work, if
     * it is another, or {@code null} for none: for work that moves between threads (a coroutine,
     * which {@link #whenLost()} cancels instead). An interrupt dibs delivered is taken back at the
     * release, on that thread. No network I/O.
     *
     * @param thread the thread to interrupt, or null for none
     * @throws IllegalStateException if the lease was released
     */
    public void interruptOnLost(Thread thread) {
        LeaseState s = state;
        s.guard.lock();
        try {
            s.checkHeld();
            s.interruptOnLost(thread);
        } finally {
            s.guard.unlock();
        }
    }

    /**
     * The deadline, in {@link System#nanoTime()} terms, up to which this holder may rely on the
     * lock: {@code atMost} from when the command that last set its expiry was sent (the
     * acquire's {@code SET}, an {@link #extend}, or keep-alive's last extension that succeeded),
     * less a margin for this host's clock and Redis's running at different rates (1% of atMost
     * + 2 ms, as Redlock allows). Past it, another instance may hold the lock. Once keep-alive
     * found the lock lost, the deadline is now. A process paused past it (GC, a stopped VM)
     * learns it only when it resumes: guard the resource itself with a fencing token where that
     * matters. No network I/O.
     *
     * @return the deadline, comparable with {@code System.nanoTime()}
     * @throws IllegalStateException if the lease was released
     */
    public long safeUntil() {
        LeaseState s = state;
        s.guard.lock();
        try {
            s.checkHeld();
            long now = System.nanoTime();
            return now + Math.min(NativeLib.safeForMs(s.id), Long.MAX_VALUE / 2_000_000) * 1_000_000;
        } finally {
            s.guard.unlock();
        }
    }

    /**
     * If the lock is still ours, sets its expiry to {@code atMost} from now, and counts
     * {@code atLeast} from now. The lease stays held either way.
     *
     * @param atMost the new expiry, from now
     * @param atLeast how long the lock is held at least, from now ({@code Duration.ZERO..atMost})
     * @return true if extended; false if the lock was no longer ours
     * @throws IllegalArgumentException if a duration is null or invalid (before any I/O)
     * @throws IllegalStateException if the lease was released
     * @throws DibsException if Redis could not be reached
     */
    public boolean extend(Duration atMost, Duration atLeast) {
        LockDurations durations = LockDurations.of(atMost, atLeast);
        if (!durations.inMillis()) {
            throw new DibsArgumentException("atMost", "atMost and atLeast must fit in 64-bit milliseconds");
        }
        LeaseState s = state;
        s.guard.lock();
        try {
            s.checkHeld();
            return NativeIo.extend(s.id, durations.atMost, durations.atLeast);
        } finally {
            s.guard.unlock();
        }
    }

    /**
     * Releases the lock: if still ours, kept for the rest of atLeast (token spent), else
     * {@code DEL}; if no longer ours, nothing is touched and a warning is logged. A failed
     * release (Redis unreachable) is logged too, and the lock expires by itself within atMost.
     * dibs did not see how the work ended, so the run history records its task as unknown
     * ({@code dibs check} then cannot call the job ok on it): {@link #release(Throwable)} says.
     *
     * @return true if the lock was ours until this release
     * @throws IllegalStateException if the lease was released already
     */
    public boolean release() {
        return releaseRecording(Border.Task.UNKNOWN);
    }

    /**
     * {@link #release()}, telling the run history how the task ended: a lease's caller knows,
     * dibs does not.
     *
     * @param taskFailure what the task threw, or null when it succeeded (only whether there is
     *     one is recorded, never its message)
     * @return true if the lock was ours until this release
     * @throws IllegalStateException if the lease was released already
     */
    public boolean release(Throwable taskFailure) {
        return releaseRecording(taskFailure == null ? Border.Task.SUCCEEDED : Border.Task.FAILED);
    }

    /** The release, recording in the run history how the task ended. */
    boolean releaseRecording(Border.Task task) {
        LeaseState s = state;
        s.guard.lock();
        try {
            s.checkHeld();
            try {
                s.release(task);
            } finally {
                cleanable.clean(); // unregisters; its action finds the lease released
            }
            return s.ownedToTheEnd;
        } finally {
            s.guard.unlock();
        }
    }

    /** Releases the lease unless it was released already. */
    @Override
    public void close() {
        LeaseState s = state;
        s.guard.lock();
        try {
            if (!s.released) {
                releaseRecording(Border.Task.UNKNOWN);
            }
        } finally {
            s.guard.unlock();
        }
    }

    @Override
    public String toString() {
        LeaseState s = state;
        s.guard.lock();
        try {
            return "DibsLease[" + s.lockName + (s.released ? ", released]" : "]");
        } finally {
            s.guard.unlock();
        }
    }

    /** The native id of the lease, for {@link Dibs#isLockLost()}. */
    long id() {
        return state.id;
    }

    /**
     * For a call that runs its task under this lease ({@link Lifecycle#run}), on the lease's
     * thread: the task ended, after starting at {@code startNanos} (read only with a listener).
     * Tells {@code finished} with the task's own duration, which the release then does not tell
     * again.
     */
    /** The task threw {@code error}: told to the listener, before {@link #taskFinished}. */
    void taskFailed(Throwable error) {
        Events.failed(state.listener, state.lockName, error);
    }

    void taskFinished(long startNanos) {
        LeaseState s = state;
        s.stopInterrupting();
        s.takeBackInterrupt();
        s.taskTold = true;
        if (s.listener != null) {
            Events.finished(s.listener, s.lockName, Duration.ofNanos(System.nanoTime() - startNanos));
        }
    }

    /** How long Rust says the lock was held, acquisition to release; after a release. */
    Duration heldFor() {
        return state.heldFor;
    }
}
