package dibs;

import static dibs.RedisServer.lockKey;
import static dibs.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
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
@Timeout(300)
class LeaseFaultTest extends RedisTestBase {
    /** How the JVM fails. */
    enum Kind { ERROR, EXCEPTION, INTERRUPT }

    /** Where. */
    enum Point {
        /** The listener's attempt (before the acquire: nothing to leak, checked anyway). */
        ATTEMPT,
        /** Allocating the lease, right after the native acquire won. */
        LEASE_MADE,
        /** Logging keep-alive's warning about the acquire's atMost. */
        ACQUIRE_WARNING,
        /** The listener's acquired. */
        ACQUIRED,
        /** Logging that the listener's acquired threw. */
        ACQUIRED_LOGGED,
        /** The task. */
        TASK,
        /** The listener's finished. */
        FINISHED,
        /** A virtual thread handing the acquire and the release to an offload thread. */
        OFFLOAD_SUBMIT,
        /** Logging the release's warning (the lock had expired). */
        RELEASE_WARNING,
        /** The listener's released or expired. */
        ENDED,
    }

    /** The front ends. */
    enum Front { DIBS, CLIENT, TRY_LOCK }

    static final class InjectedError extends Error {
        private static final long serialVersionUID = 1L;

        InjectedError(String where) {
            super("injected at " + where);
        }
    }

    static final class InjectedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InjectedException(String where) {
            super("injected at " + where);
        }
    }

    /** One case: where, how, and what was thrown there (null for an interrupt). */
    static final class Fault {
        final Point point;
        final Kind kind;
        final AtomicReference<Throwable> thrown = new AtomicReference<>();

        Fault(Point point, Kind kind) {
            this.point = point;
            this.kind = kind;
        }

        void at(Point here) {
            if (here != point) {
                return;
            }
            switch (kind) {
                case ERROR: {
                    InjectedError e = new InjectedError(here.name());
                    thrown.compareAndSet(null, e);
                    throw e;
                }
                case EXCEPTION: {
                    InjectedException e = new InjectedException(here.name());
                    thrown.compareAndSet(null, e);
                    throw e;
                }
                default:
                    Thread.currentThread().interrupt();
            }
        }
    }

    /** A listener that fails at its point. */
    static final class FailingListener implements DibsListener {
        final Fault fault;

        FailingListener(Fault fault) {
            this.fault = fault;
        }

        @Override
        public void attempt(String lockName) {
            fault.at(Point.ATTEMPT);
        }

        @Override
        public void acquired(String lockName) {
            fault.at(Point.ACQUIRED);
            if (fault.point == Point.ACQUIRED_LOGGED) {
                throw new IllegalStateException("a listener that throws, so that the logger is called");
            }
        }

        @Override
        public void finished(String lockName, Duration duration) {
            fault.at(Point.FINISHED);
        }

        @Override
        public void released(String lockName, Duration heldFor) {
            fault.at(Point.ENDED);
        }

        @Override
        public void expired(String lockName, Duration heldFor) {
            fault.at(Point.ENDED);
        }
    }

    /** A java.util.logging handler on "dibs" that fails on the record of its point. */
    static final class FailingHandler extends Handler {
        final Fault fault;

        FailingHandler(Fault fault) {
            this.fault = fault;
        }

        @Override
        public void publish(LogRecord record) {
            String m = String.valueOf(record.getMessage());
            if (m.contains("with keep-alive, atMost")) {
                fault.at(Point.ACQUIRE_WARNING);
            } else if (m.contains("DibsListener.acquired threw")) {
                fault.at(Point.ACQUIRED_LOGGED);
            } else if (m.contains("was no longer ours when it was released")) {
                fault.at(Point.RELEASE_WARNING);
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }

    private static final Logger DIBS_LOG = Logger.getLogger("dibs");
    private static final AtomicInteger CASES = new AtomicInteger();
    private Handler handler;

    @AfterEach
    void removeHooks() {
        FaultInjection.hook = null;
        if (handler != null) {
            DIBS_LOG.removeHandler(handler);
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
            VirtualThreadTest.startVirtual(() -> {
                try {
                    DibsLease lease = client.tryLock(name, Duration.ofSeconds(40), Duration.ZERO).orElseThrow();
                    FaultInjection.hook = p -> {
                        submits.incrementAndGet();
                        throw new OutOfMemoryError("unable to create native thread: possibly out of memory");
                    };
                    assertTrue(lease.release());
                } catch (Throwable e) {
                    failure.set(e);
                }
            }).join();
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
        handler = new FailingHandler(fault);
        handler.setLevel(Level.ALL);
        DIBS_LOG.addHandler(handler);
        if (point == Point.LEASE_MADE || point == Point.OFFLOAD_SUBMIT) {
            FaultInjection.hook = p -> fault.at(Point.valueOf(p.name()));
        }
        // The release's warning needs a lock that expired while its task ran: no keep-alive there.
        boolean expire = point == Point.RELEASE_WARNING;
        DibsOptions options = local().keepAlive(!expire).listener(new FailingListener(fault)).build();
        // keep-alive warns once per locker and atMost: a new atMost each case, so each hears it.
        Duration atMost = expire ? Duration.ofMillis(200) : Duration.ofMillis(10_000 + n);
        long leasesBefore = NativeLib.heldLeases();
        int extendersBefore = threadsNamed("dibs-keep-alive");
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
            VirtualThreadTest.startVirtual(call).join();
        } else {
            Thread t = new Thread(call, "fault-case");
            t.start();
            t.join();
        }
        FaultInjection.hook = null;
        String what = front + " " + point + " " + kind + (virtual ? " (virtual)" : "");

        Throwable injected = fault.thrown.get();
        boolean callFails = kind != Kind.INTERRUPT && (point == Point.TASK || point == Point.LEASE_MADE);
        if (callFails) {
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
        assertEquals(extendersBefore, settledThreadsNamed("dibs-keep-alive", extendersBefore),
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

    private static void pause(long ms) {
        long until = System.nanoTime() + ms * 1_000_000;
        while (System.nanoTime() < until) { // not Thread.sleep: an interrupt case may be set
            Thread.onSpinWait();
        }
    }

    /** The threads of this process named {@code name}, from /proc/self/task. */
    static int threadsNamed(String name) throws IOException {
        int count = 0;
        try (Stream<Path> tasks = Files.list(Paths.get("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    if (new String(Files.readAllBytes(t.resolve("comm"))).trim().equals(name)) {
                        count++;
                    }
                } catch (IOException e) {
                    // the thread ended while listed
                }
            }
        }
        return count;
    }

    /** {@link #threadsNamed} once it is down to {@code expected}, or after 5 s. */
    static int settledThreadsNamed(String name, int expected) throws Exception {
        long until = System.nanoTime() + 5_000_000_000L;
        int now = threadsNamed(name);
        while (now > expected && System.nanoTime() < until) {
            Thread.sleep(20);
            now = threadsNamed(name);
        }
        return now;
    }
}
