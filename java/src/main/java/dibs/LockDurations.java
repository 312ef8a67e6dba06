package dibs;

import java.time.Duration;

/**
 * A lock's {@code atMost} and {@code atLeast} as the native calls take them: whole amounts of
 * {@code unitMs} milliseconds. Every caller's durations become these here, so that there is one
 * conversion; Rust then validates them and owns the overflow rule.
 */
final class LockDurations {
    static final long SECONDS = 1000;
    static final long MILLIS = 1;

    final long atMost;
    final long atLeast;
    /** {@link #SECONDS} or {@link #MILLIS}. */
    final long unitMs;

    private LockDurations(long atMost, long atLeast, long unitMs) {
        this.atMost = atMost;
        this.atLeast = atLeast;
        this.unitMs = unitMs;
    }

    /** Whole seconds, as the {@code long} overloads take them: Rust checks that they fit in milliseconds. */
    static LockDurations ofSeconds(long atMostSec, long atLeastSec) {
        return new LockDurations(atMostSec, atLeastSec, SECONDS);
    }

    /**
     * The one conversion of {@link Duration}s: milliseconds when both fit in a long ({@code atMost}
     * cut, {@code atLeast} rounded up, see {@link #atLeastMillis}), else whole seconds, so that
     * Rust, the one owner of the overflow rule, reports it.
     *
     * @throws IllegalArgumentException if either is null
     */
    static LockDurations of(Duration atMost, Duration atLeast) {
        Lifecycle.checkNotNull(atMost, "atMost");
        Lifecycle.checkNotNull(atLeast, "atLeast");
        if (fitsMillis(atMost) && fitsMillis(atLeast)) {
            return new LockDurations(atMost.toMillis(), atLeastMillis(atMost, atLeast), MILLIS);
        }
        return new LockDurations(atMost.getSeconds(), atLeast.getSeconds(), SECONDS);
    }

    /** Whether these are milliseconds, as {@link NativeLib#extend} needs. */
    boolean inMillis() {
        return unitMs == MILLIS;
    }

    /**
     * atLeast in whole milliseconds for an atMost cut to whole milliseconds: rounded up (the lock
     * is never held shorter than asked), but not past atMost when it was within it.
     */
    private static long atLeastMillis(Duration atMost, Duration atLeast) {
        boolean fraction = !atLeast.isNegative() && atLeast.getNano() % 1_000_000 != 0;
        long atLeastMs = atLeast.toMillis() + (fraction ? 1 : 0);
        if (atLeast.compareTo(atMost) <= 0) {
            atLeastMs = Math.min(atLeastMs, Math.max(atMost.toMillis(), 0));
        }
        return atLeastMs;
    }

    private static boolean fitsMillis(Duration d) {
        try {
            d.toMillis();
            return true;
        } catch (ArithmeticException e) {
            return false;
        }
    }
}
