package dibs;

import java.util.function.Consumer;

/**
 * The points of a lease's lifecycle where the JVM can fail but no test can make it fail for real
 * (allocating the lease, handing a call to an offload thread): a test sets {@link #hook} to throw
 * an {@code Error}, an exception or to interrupt there, and proves that the lease is still
 * released exactly once. Every other point (listener, logger, task) fails for real in the tests.
 * Unset outside tests, where a point costs one volatile read.
 */
final class FaultInjection {
    enum Point {
        /** After the native acquire won, before the lease object exists. */
        LEASE_MADE,
        /** A virtual thread handing a native call to an offload thread. */
        OFFLOAD_SUBMIT,
    }

    /** What happens at each point; null outside tests. */
    static volatile Consumer<Point> hook;

    private FaultInjection() {}

    static void at(Point point) {
        Consumer<Point> h = hook;
        if (h != null) {
            h.accept(point);
        }
    }
}
