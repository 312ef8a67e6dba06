package dibs;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lease, apart from the DibsLease so that the cleaner can release a dropped one. A
 * ReentrantLock, not a monitor, guards it: a virtual thread releasing parks in
 * {@link NativeIo}, which a monitor would turn into pinning its carrier (before Java 24).
 */
final class LeaseState implements Runnable {
    final String lockName;
    final DibsListener listener;
    final ReentrantLock guard = new ReentrantLock();
    /** Filled by the native release (made ahead: a release never allocates after the lock is gone). */
    final Border.Released report = new Border.Released();
    /** Set once, right after the native acquire, before the lease is published. */
    long id;

    long acquiredAt;
    /**
     * From the acquire's facts, set before the lease is published; 0 when the server's ACL
     * refuses {@code TIME}.
     */
    long fencingToken;
    // guarded by guard:
    boolean released;
    /** Whether the call's task told {@code finished} itself (written by the lease's thread). */
    boolean taskTold;

    /** Whether the lock was ours from acquisition to release, as the release found it. */
    boolean ownedToTheEnd;

    Duration heldFor = Duration.ZERO;
    /** The thread to interrupt when the lock is found lost; null for none. */
    Thread holder;
    /** The thread a loss interrupted, and whether it was interrupted already then. */
    Thread interrupted;

    boolean interruptedBefore;
    /** Completed when the lock is found lost; made by the first {@code whenLost}. */
    CompletableFuture<Void> lost;
    /** Whether {@link LostWatch} watches this lease. */
    boolean watched;

    LeaseState(String lockName, DibsListener listener) {
        this.lockName = lockName;
        this.listener = listener;
    }

    /** Has a loss of the lock interrupt {@code thread} (the policy of the client); null: none. */
    void interruptOnLost(Thread thread) {
        guard.lock();
        try {
            if (thread != holder && interrupted == Thread.currentThread() && !interruptedBefore) {
                Thread.interrupted(); // a loss that came first interrupted this thread, no longer the holder
                interrupted = null;
            }
            holder = thread;
            if (thread != null) {
                watch();
            }
        } finally {
            guard.unlock();
        }
    }

    /** The task ended: a loss found from now on interrupts no one. */
    void stopInterrupting() {
        if (holder != null) { // only this thread sets it
            guard.lock();
            try {
                holder = null;
            } finally {
                guard.unlock();
            }
        }
    }

    /**
     * Clears the calling thread's interrupt if dibs delivered it, and it was not interrupted
     * before: a task that restored the flag, as it should, leaves its caller as it found it.
     * Called once dibs interrupts no one any more.
     */
    void takeBackInterrupt() {
        boolean ours;
        guard.lock();
        try {
            ours = interrupted == Thread.currentThread() && !interruptedBefore;
            interrupted = null;
        } finally {
            guard.unlock();
        }
        if (ours) {
            Thread.interrupted();
        }
    }

    /** With {@link #guard} held. */
    void watch() {
        if (!watched) {
            watched = true;
            LostWatch.watch(id, this::onLost);
        }
    }

    /** The watcher's action: the lock was found lost. The future completes outside the guard. */
    void onLost() {
        CompletableFuture<Void> told;
        guard.lock();
        try {
            if (released) {
                return;
            }
            if (holder != null) {
                interrupted = holder;
                interruptedBefore = holder.isInterrupted();
                holder.interrupt();
            }
            told = lost;
        } finally {
            guard.unlock();
        }
        if (told != null) {
            told.complete(null);
        }
    }

    void checkHeld() {
        if (released) {
            throw new IllegalStateException("the lease of lock '" + lockName + "' was released already");
        }
    }

    /**
     * The one release: tells {@code finished} unless the task did, releases in Rust, logs the
     * warning Rust wrote and tells how it ended. Once, with {@link #guard} held.
     */
    void release(Border.Task task) {
        released = true;
        holder = null;
        if (interrupted == Thread.currentThread() && !interruptedBefore) {
            Thread.interrupted(); // dibs's own interrupt, taken back (the guard is held)
        }
        interrupted = null;
        if (watched) {
            LostWatch.unwatch(id);
        }
        if (listener != null && !taskTold) {
            Events.finished(listener, lockName, Duration.ofNanos(System.nanoTime() - acquiredAt));
        }
        try {
            NativeIo.release(id, task, report);
        } catch (Throwable e) { // the JVM failing (out of memory) or a broken lease
            Events.ended(listener, lockName, Border.Ending.RELEASE_FAILED, Duration.ZERO);
            throw e;
        }
        ownedToTheEnd = report.ownedToTheEnd;
        heldFor = Duration.ofMillis(report.heldMs);
        Log.warning(report.warning);
        Events.ended(listener, lockName, report.ending(), heldFor);
    }

    /**
     * Lets go of a lease that no one heard of (its acquire failed half-way), adding any
     * failure to {@code cause}. The guard, as the cleaner may hold a half-made lease already.
     */
    void releaseUntold(Throwable cause) {
        guard.lock();
        try {
            if (!released) {
                released = true;
                holder = null;
                if (watched) {
                    LostWatch.unwatch(id);
                }
                NativeIo.release(id, Border.Task.FAILED, report);
            }
        } catch (Throwable e) {
            cause.addSuppressed(e);
        } finally {
            guard.unlock();
        }
    }

    /** The cleaner's action: a lease dropped unreleased. */
    @Override
    public void run() {
        guard.lock();
        try {
            if (!released) {
                Log.warning(
                        "a DibsLease of lock '" + lockName + "' was garbage collected without release(); released now");
                release(Border.Task.UNKNOWN); // how its work ended, nobody said
            }
        } finally {
            guard.unlock();
        }
    }
}
