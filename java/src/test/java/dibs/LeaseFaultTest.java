package dibs;

import static dibs.testsupport.LeaseFaults.pause;
import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dibs.testsupport.LeaseFaults;
import dibs.testsupport.LeaseFaults.Fault;
import dibs.testsupport.LeaseFaults.Kind;
import dibs.testsupport.LeaseFaults.Point;
import dibs.testsupport.VirtualThreads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A lease is released exactly once on every path (issue 17): the JVM fails (an {@code Error}, a
 * {@code RuntimeException}, an interrupt) at every point between the native acquire and the
 * native release, for each front end ({@link Dibs}, {@link DibsClient}, {@link DibsClient#tryLock}),
 * on a platform thread and on a virtual one. After each: the key is gone (atLeast 0), the Rust
 * lease table is back where it was, and no keep-alive thread is left. The listener, the logger
 * and the task fail for real (a listener that throws, a java.util.logging handler that throws as
 * log4j2's {@code ignoreExceptions=false} appenders do); allocating the lease and handing a call
 * to an offload thread fail through {@link FaultInjection}.
 */
@Tag("jvm")
@Timeout(300)
class LeaseFaultTest extends RedisTestBase {
    /** The front ends. */
    enum Front {
        DIBS,
        CLIENT,
        TRY_LOCK
    }

    private static final AtomicInteger CASES = new AtomicInteger();
    private AutoCloseable failingLogger;

    @AfterEach
    void removeHooks() throws Exception {
        FaultInjection.hook = null;
        if (failingLogger != null) {
            failingLogger.close();
        }
        Thread.interrupted();
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (Front front : Front.values()) {
            for (Point point : Point.values()) {
                for (Kind kind : Kind.values()) {
                    out.add(Arguments.of(front, point, kind));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} {2} on a platform thread")
    @MethodSource("cases")
    void onAPlatformThreadTheLeaseIsReleasedOnceWhereverTheJvmFails(Front front, Point point, Kind kind)
            throws Exception {
        assumeTrue(point != Point.OFFLOAD_SUBMIT, "a platform thread calls Rust directly: no offload");
        check(front, point, kind, false);
    }

    @ParameterizedTest(name = "{0} {1} {2} on a virtual thread")
    @MethodSource("cases")
    void onAVirtualThreadTheLeaseIsReleasedOnceWhereverTheJvmFails(Front front, Point point, Kind kind)
            throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads: Java 21+");
        check(front, point, kind, true);
    }

    /**
     * Issue 17 (2): no offload thread can be made ("unable to create native thread" is an
     * OutOfMemoryError from the submit). Before, the release was never made and keep-alive went
     * on extending the lock; now the call is made on the virtual thread itself.
     */
    @Test
    void aReleaseThatCannotBeOffloadedIsMadeOnTheCallersThread() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads: Java 21+");
        String name = uniqueName("no-thread");
        AtomicInteger submits = new AtomicInteger();
        try (DibsClient client = Dibs.client(local().keepAlive(true).build())) {
            AtomicReference<Throwable> failure = new AtomicReference<>();
            VirtualThreads.start(() -> {
                        try {
                            DibsLease lease = client.tryLock(name, Duration.ofSeconds(40), Duration.ZERO)
                                    .orElseThrow();
                            FaultInjection.hook = p -> {
                                submits.incrementAndGet();
                                throw new OutOfMemoryError("unable to create native thread: possibly out of memory");
                            };
                            assertTrue(lease.release());
                        } catch (Throwable e) {
                            failure.set(e);
                        }
                    })
                    .join();
            FaultInjection.hook = null;
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            assertEquals(1, submits.get(), "the release tried to offload once");
            assertFalse(keyExists(lockKey(name)), "released");
            assertEquals(0, NativeLib.heldLeases(), "no lease left in Rust");
        }
    }

    private void check(Front front, Point point, Kind kind, boolean virtual) throws Exception {
        int n = CASES.incrementAndGet();
        String name = uniqueName("fault-" + point + "-" + kind);
        Fault fault = new Fault(point, kind);
        failingLogger = LeaseFaults.failingLogger(fault);
        FaultInjection.hook = p -> fault.at(p.name());
        // The release's warning needs a lock that expired while its task ran: no keep-alive there.
        boolean expire = fault.expires();
        DibsOptions options = local().keepAlive(!expire)
                .listener(LeaseFaults.failingListener(DibsListener.class, fault))
                .build();
        // keep-alive warns once per locker and atMost: a new atMost each case, so each hears it.
        Duration atMost = expire ? Duration.ofMillis(200) : Duration.ofMillis(10_000 + n);
        long leasesBefore = NativeLib.heldLeases();
        Set<String> extendersBefore = LeaseFaults.threadIdsNamed("dibs-keep-alive");
        AtomicBoolean ran = new AtomicBoolean();
        Runnable task = () -> {
            ran.set(true);
            fault.at(Point.TASK);
            if (expire) {
                pause(350);
            }
        };
        AtomicReference<Throwable> caught = new AtomicReference<>();
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        AtomicReference<Object> result = new AtomicReference<>();
        Runnable call = () -> {
            try {
                result.set(call(front, options, name, atMost, task));
            } catch (Throwable e) {
                caught.set(e);
            } finally {
                interruptedAfter.set(Thread.interrupted());
            }
        };
        if (virtual) {
            VirtualThreads.start(call).join();
        } else {
            Thread t = new Thread(call, "fault-case");
            t.start();
            t.join();
        }
        FaultInjection.hook = null;
        String what = front + " " + point + " " + kind + (virtual ? " (virtual)" : "");

        Throwable injected = fault.thrown();
        assertTrue(fault.fired(), what + ": the point was reached");
        if (fault.failsTheCall()) {
            assertSame(injected, caught.get(), what + ": the call throws the very object thrown");
            assertEquals(point == Point.TASK, ran.get(), what + ": the task ran only if the lease was made");
        } else {
            if (caught.get() != null) {
                throw new AssertionError(what + ": the call failed", caught.get());
            }
            assertTrue(ran.get(), what + ": the task ran");
            assertEquals(Boolean.TRUE, result.get(), what + ": the call says it ran");
        }
        if (kind == Kind.INTERRUPT) {
            assertTrue(interruptedAfter.get(), what + ": the interrupt is kept for the caller");
        }
        assertFalse(keyExists(lockKey(name)), what + ": the lock is released");
        assertEquals(leasesBefore, NativeLib.heldLeases(), what + ": no lease is left in Rust");
        // Threads of this call's keep-alive, none left (one of an earlier test's dropped lease
        // may end meanwhile, by the cleaner's release).
        assertEquals(
                Set.of(),
                LeaseFaults.settledNewThreadsNamed("dibs-keep-alive", extendersBefore),
                what + ": keep-alive stopped");
    }

    /** One locked call of {@code front}; true if its task ran. */
    private static Object call(Front front, DibsOptions options, String name, Duration atMost, Runnable task) {
        switch (front) {
            case DIBS:
                return Dibs.execute(options, name, atMost, Duration.ZERO, task);
            case CLIENT:
                try (DibsClient client = Dibs.client(options)) {
                    return client.execute(name, atMost, Duration.ZERO, task);
                }
            default:
                try (DibsClient client = Dibs.client(options)) {
                    Optional<DibsLease> taken = client.tryLock(name, atMost, Duration.ZERO);
                    if (taken.isEmpty()) {
                        return false;
                    }
                    try (DibsLease lease = taken.get()) {
                        task.run();
                    }
                    return true;
                }
        }
    }
}
