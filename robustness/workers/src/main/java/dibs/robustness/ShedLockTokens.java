package dibs.robustness;

import dibs.DibsListener;

/**
 * The fencing token of the ShedLock lock held by this thread. {@code Dibs.fencingToken()} knows
 * only the tasks that dibs itself runs ({@code execute}, {@code executeOnce}); a ShedLock job runs
 * under a {@code tryLock} lease that ShedLock holds, whose token the {@code @SchedulerLock} method
 * cannot reach. The starter hands every {@link DibsListener} bean the client's events, and a
 * lease's {@code acquired} is told on the thread that took it: ShedLock's, which then runs the
 * method. So this listener keeps the token of {@code lockName} per thread, and the method takes
 * it ({@link #take}), which also clears it, so that a later run on that thread never reads a
 * stale one.
 */
final class ShedLockTokens implements DibsListener {
    private final String lockName;
    private final ThreadLocal<Long> token = new ThreadLocal<>();

    ShedLockTokens(String lockName) {
        this.lockName = lockName;
    }

    @Override
    public void acquired(String name, long fencingToken) {
        if (name.equals(lockName)) {
            token.set(fencingToken);
        }
    }

    /** @return the token of the lock this thread acquired last, 0 if none; cleared */
    long take() {
        Long t = token.get();
        token.remove();
        return t == null ? 0 : t;
    }
}
