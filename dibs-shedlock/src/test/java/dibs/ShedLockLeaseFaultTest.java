package dibs;

import static dibs.testsupport.LeaseFaults.pause;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dibs.shedlock.DibsLockProvider;
import dibs.testsupport.LeaseFaults;
import dibs.testsupport.LeaseFaults.Fault;
import dibs.testsupport.LeaseFaults.Kind;
import dibs.testsupport.LeaseFaults.Point;
import dibs.testsupport.RedisServer;
import dibs.testsupport.VirtualThreads;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The lease of a ShedLock job is released exactly once wherever the JVM fails between the
 * provider's lock and its unlock (issue 17), through ShedLock's own DefaultLockingTaskExecutor,
 * on a platform thread and (Java 21+) on a virtual one: the points and checks of the library's
 * LeaseFaultTest. In package dibs, for the lease table and the injection points.
 */
@Timeout(300)
class ShedLockLeaseFaultTest {
    private static final AtomicInteger CASES = new AtomicInteger();

    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

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
        for (Point point : Point.values()) {
            for (Kind kind : Kind.values()) {
                for (boolean virtual : new boolean[] {false, true}) {
                    out.add(Arguments.of(point, kind, virtual));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} virtual={2}")
    @MethodSource("cases")
    void theLeaseOfAShedLockJobIsReleasedOnceWhereverTheJvmFails(Point point, Kind kind, boolean virtual)
            throws Exception {
        assumeTrue(!virtual || Runtime.version().feature() >= 21, "virtual threads: Java 21+");
        assumeTrue(virtual || point != Point.OFFLOAD_SUBMIT, "a platform thread calls Rust directly");
        int n = CASES.incrementAndGet();
        String name = "shedlock-fault-" + point + "-" + kind + "-" + "p"
                + ProcessHandle.current().pid() + "-" + n;
        Fault fault = new Fault(point, kind);
        failingLogger = LeaseFaults.failingLogger(fault);
        FaultInjection.hook = p -> fault.at(p.name());
        DibsListener listener = LeaseFaults.failingListener(DibsListener.class, fault);
        Duration atMost = fault.expires() ? Duration.ofMillis(200) : Duration.ofMillis(10_000 + n);
        long leasesBefore = NativeLib.heldLeases();
        Set<String> extendersBefore = LeaseFaults.threadIdsNamed("dibs-keep-alive");
        AtomicBoolean ran = new AtomicBoolean();
        AtomicReference<Throwable> caught = new AtomicReference<>();
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        try (DibsClient client = Dibs.client(DibsOptions.builder()
                .uri(redis.uri())
                .keepAlive(!fault.expires())
                .listener(listener)
                .build())) {
            DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(new DibsLockProvider(client));
            LockConfiguration config = new LockConfiguration(Instant.now(), name, atMost, Duration.ZERO);
            Runnable call = () -> {
                try {
                    executor.executeWithLock(
                            (Runnable) () -> {
                                ran.set(true);
                                fault.at(Point.TASK);
                                if (fault.expires()) {
                                    pause(350);
                                }
                            },
                            config);
                } catch (Throwable e) {
                    caught.set(e);
                } finally {
                    interruptedAfter.set(Thread.interrupted());
                }
            };
            Thread t = virtual ? VirtualThreads.start(call) : new Thread(call, "shedlock-fault-case");
            if (!virtual) {
                t.start();
            }
            t.join();
        }
        FaultInjection.hook = null;
        String what = fault + (virtual ? " (virtual)" : "");
        assertTrue(fault.fired(), what + ": the point was reached");
        if (fault.failsTheCall()) {
            assertSame(fault.thrown(), caught.get(), what + ": the job's caller gets the very object thrown");
            assertEquals(point == Point.TASK, ran.get(), what + ": the task ran only if the lease was made");
        } else {
            if (caught.get() != null) {
                throw new AssertionError(what + ": the job failed", caught.get());
            }
            assertTrue(ran.get(), what + ": the task ran");
        }
        if (kind == Kind.INTERRUPT) {
            assertTrue(interruptedAfter.get(), what + ": the interrupt is kept for the caller");
        }
        assertEquals("0", redis.command("EXISTS", RedisServer.lockKey(name)), what + ": the lock is released");
        assertEquals(leasesBefore, NativeLib.heldLeases(), what + ": no lease is left in Rust");
        // Threads of this call's keep-alive, none left (one of an earlier test's dropped lease
        // may end meanwhile, by the cleaner's release).
        assertEquals(
                Set.of(),
                LeaseFaults.settledNewThreadsNamed("dibs-keep-alive", extendersBefore),
                what + ": keep-alive stopped");
    }
}
