package dibs;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The native calls that wait on the network, made so that a virtual thread parks instead of
 * pinning its carrier. A native frame pins a virtual thread (JEP 444), and a call may wait up to
 * its read timeout (seconds, while Redis is frozen), so a virtual caller hands the call to a
 * platform thread of a small pool and parks until it is done. A platform caller calls directly,
 * at no extra cost. Whether the caller is virtual is asked at run time ({@code Thread.isVirtual},
 * Java 21+), so that the jar still runs on Java 11.
 */
final class NativeIo {
    /** {@code Thread::isVirtual}, or null before Java 21. */
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();
    /** Platform threads that make the calls of virtual threads; idle ones end after a minute. */
    private static final ThreadPoolExecutor POOL = pool();

    private NativeIo() {}

    static void acquire(
            long handle,
            String lockName,
            String tick,
            long atMost,
            long atLeast,
            long unitMs,
            boolean tellJob,
            Border.Acquired into) {
        if (!isVirtual()) {
            NativeLib.acquire(handle, lockName, tick, atMost, atLeast, unitMs, tellJob, into);
            return;
        }
        offload(() -> {
            NativeLib.acquire(handle, lockName, tick, atMost, atLeast, unitMs, tellJob, into);
            return null;
        });
    }

    static void acquireUnrun(
            long handle,
            String job,
            String tick,
            long atMost,
            long unitMs,
            long dueMs,
            boolean catchUp,
            boolean tellJob,
            Border.Acquired into) {
        if (!isVirtual()) {
            NativeLib.acquireUnrun(handle, job, tick, atMost, unitMs, dueMs, catchUp, tellJob, into);
            return;
        }
        offload(() -> {
            NativeLib.acquireUnrun(handle, job, tick, atMost, unitMs, dueMs, catchUp, tellJob, into);
            return null;
        });
    }

    static Border.TickState tickState(long handle, String job, String tick, long dueMs) {
        if (!isVirtual()) {
            return Border.TickState.of(NativeLib.tickState(handle, job, tick, dueMs));
        }
        return Border.TickState.of(offload(() -> NativeLib.tickState(handle, job, tick, dueMs)));
    }

    static void release(long lease, Border.Task task, Border.Released into) {
        if (!isVirtual()) {
            NativeLib.release(lease, task.code(), into);
            return;
        }
        offload(() -> {
            NativeLib.release(lease, task.code(), into);
            return null;
        });
    }

    static boolean extend(long lease, long atMostMs, long atLeastMs) {
        if (!isVirtual()) {
            return NativeLib.extend(lease, atMostMs, atLeastMs);
        }
        return offload(() -> NativeLib.extend(lease, atMostMs, atLeastMs));
    }

    static Border.Inspected inspect(long handle, String lockName) {
        if (!isVirtual()) {
            return NativeLib.inspect(handle, lockName);
        }
        return offload(() -> NativeLib.inspect(handle, lockName));
    }

    static Border.History history(long handle, String job, int limit) {
        if (!isVirtual()) {
            return NativeLib.history(handle, job, limit);
        }
        return offload(() -> NativeLib.history(handle, job, limit));
    }

    static Border.Listing jobs(long handle, int limit, long budgetMs) {
        if (!isVirtual()) {
            return NativeLib.jobs(handle, limit, budgetMs);
        }
        return offload(() -> NativeLib.jobs(handle, limit, budgetMs));
    }

    static Border.Listing running(long handle, String job, long budgetMs) {
        if (!isVirtual()) {
            return NativeLib.running(handle, job, budgetMs);
        }
        return offload(() -> NativeLib.running(handle, job, budgetMs));
    }

    static Border.Listing locks(long handle, String pattern, int limit, long budgetMs) {
        if (!isVirtual()) {
            return NativeLib.locks(handle, pattern, limit, budgetMs);
        }
        return offload(() -> NativeLib.locks(handle, pattern, limit, budgetMs));
    }

    static Border.Judged check(
            long handle,
            String job,
            long withinMs,
            long periodMs,
            long graceMs,
            long sinceMs,
            long minMs,
            long maxMs,
            long graceAfterStartMs,
            long budgetMs) {
        if (!isVirtual()) {
            return NativeLib.check(
                    handle, job, withinMs, periodMs, graceMs, sinceMs, minMs, maxMs, graceAfterStartMs, budgetMs);
        }
        return offload(() -> NativeLib.check(
                handle, job, withinMs, periodMs, graceMs, sinceMs, minMs, maxMs, graceAfterStartMs, budgetMs));
    }

    static Border.Held heldLock(long handle, String lockName) {
        if (!isVirtual()) {
            return NativeLib.heldLock(handle, lockName);
        }
        return offload(() -> NativeLib.heldLock(handle, lockName));
    }

    static int forceRelease(long handle, String lockName, String token, String by) {
        if (!isVirtual()) {
            return NativeLib.forceRelease(handle, lockName, token, by);
        }
        return offload(() -> NativeLib.forceRelease(handle, lockName, token, by));
    }

    static boolean isVirtual() {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable e) {
            throw new IllegalStateException("Thread.isVirtual failed", e);
        }
    }

    /**
     * Runs {@code call} on a pool thread while this (virtual) thread parks. The wait is not
     * interruptible: an acquire abandoned half-way could win a lock that nobody releases. An
     * interrupt is kept for the caller to see afterwards. The call's exception is rethrown as
     * the same object. The call is always made: when it cannot be handed over (every pool thread
     * busy, or no thread can be created: an {@code OutOfMemoryError}), it runs here, pinning the
     * carrier for one round trip, since a release not made would keep the lock (and with
     * keep-alive, for ever).
     */
    private static <T> T offload(Supplier<T> call) {
        CompletableFuture<T> future;
        try {
            FaultInjection.at(FaultInjection.Point.OFFLOAD_SUBMIT);
            future = CompletableFuture.supplyAsync(call, POOL);
        } catch (RuntimeException | Error e) {
            return call.get();
        }
        try {
            return future.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw e;
        }
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup()
                    .findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null; // before Java 21 every thread is a platform thread
        }
    }

    private static ThreadPoolExecutor pool() {
        AtomicInteger count = new AtomicInteger();
        // No queue: a call gets a thread at once, or (past the cap) runs on its caller.
        ThreadPoolExecutor pool = new ThreadPoolExecutor(0, 256, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, "dibs-io-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        return pool;
    }
}
