package dibs;

import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.RedisServer;
import dibs.testsupport.VirtualThreads;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.io.TempDir;

/**
 * dibs on virtual threads behaves as on platform threads: the task runs in plain Java, so it
 * never pins its carrier, and a native call that waits on the network parks its virtual caller.
 * Runs on JDK 21+ (the JDK 25 executions, whose JVM has 2 carriers:
 * {@code -Djdk.virtualThreadScheduler.parallelism=2 -Djdk.virtualThreadScheduler.maxPoolSize=2});
 * virtual threads are started by reflection, since the tests compile for Java 11.
 */
@Tag("jvm")
@EnabledForJreRange(min = JRE.JAVA_21)
class VirtualThreadTest extends RedisTestBase {

    @Test
    void theCarriersAreTwo() throws InterruptedException {
        // The figures below mean something only with 2 carriers: 8 pinned 1 s tasks take 4 s.
        assertEquals("2", System.getProperty("jdk.virtualThreadScheduler.parallelism"));
        AtomicReference<Boolean> virtual = new AtomicReference<>();
        VirtualThreads.start(() -> virtual.set(NativeIo.isVirtual())).join();
        assertTrue(virtual.get(), "NativeIo sees a virtual thread");
        assertFalse(NativeIo.isVirtual(), "and a platform one");
    }

    @Test
    void eightLockedOneSecondTasksOnTwoCarriersTakeAsLongAsWithoutDibs() throws InterruptedException {
        Dibs.execute(redis.uri(), uniqueName("warm"), 5, 0, () -> {}); // loads the library, pools a connection
        List<Runnable> plain = new ArrayList<>();
        List<Runnable> locked = new ArrayList<>();
        AtomicLong ran = new AtomicLong();
        for (int i = 0; i < 8; i++) {
            String name = uniqueName("pin-" + i);
            plain.add(() -> VirtualThreads.sleep(1000));
            locked.add(() -> {
                if (Dibs.execute(redis.uri(), name, 30, 0, () -> VirtualThreads.sleep(1000))) {
                    ran.incrementAndGet();
                }
            });
        }
        Duration without = VirtualThreads.run(plain);
        Duration with = VirtualThreads.run(locked);
        assertEquals(8, ran.get(), "every task ran");
        double ratio = (double) with.toNanos() / without.toNanos();
        System.out.printf(
                "8 virtual threads x 1 s on 2 carriers: %d ms with dibs, %d ms without (%.3fx)%n",
                with.toMillis(), without.toMillis(), ratio);
        assertTrue(ratio <= 1.1, "with dibs " + with + ", without " + without);
    }

    @Test
    void aFrozenRedisParksItsVirtualCallersInsteadOfStarvingTheOthers() throws Exception {
        try (RedisServer frozen = RedisServer.launch()) {
            DibsOptions conn = frozenTestOptions(frozen);
            Dibs.execute(conn, uniqueName("warm"), 5, 0, () -> {});
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            List<Runnable> callers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String name = uniqueName("frozen-" + i);
                callers.add(() -> {
                    try {
                        Dibs.execute(conn, name, 30, 0, () -> {});
                    } catch (DibsException e) {
                        failures.add(e);
                    }
                });
            }
            frozen.freeze();
            long gapMs = VirtualThreads.largestTickerGapMs("4 virtual callers of Dibs.execute", callers);
            frozen.thaw();
            assertEquals(4, failures.size(), "each caller timed out: " + failures);
            assertTrue(failures.stream().allMatch(f -> f instanceof DibsTimeoutException), failures.toString());
            VirtualThreads.assertTickerKeptTicking(gapMs);
        }
    }

    /**
     * Issue 17 (4): on Java 21-23 a monitor held across a park pins the carrier. DibsLease used to
     * wait for its offloaded release inside {@code synchronized (lease)}: 4 virtual threads
     * releasing on a frozen Redis pinned both carriers for the read timeout. The releases, and
     * an extend, go through the lease's ReentrantLock now. Run on JDK 21 and 25.
     */
    @Test
    void leasesReleasedOnAFrozenRedisParkInsteadOfStarvingTheOthers() throws Exception {
        try (RedisServer frozen = RedisServer.launch();
                DibsClient client = Dibs.client(frozenTestOptions(frozen))) {
            List<DibsLease> leases = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                leases.add(client.tryLock(uniqueName("frozen-lease-" + i), Duration.ofSeconds(30), Duration.ZERO)
                        .orElseThrow());
            }
            ConcurrentLinkedQueue<Boolean> owned = new ConcurrentLinkedQueue<>();
            List<Runnable> callers = new ArrayList<>();
            for (DibsLease lease : leases) {
                callers.add(() -> {
                    try {
                        lease.extend(Duration.ofSeconds(30), Duration.ZERO);
                    } catch (DibsException e) {
                        // the frozen server: expected, the lease stays held for the release
                    }
                    owned.add(lease.release());
                });
            }
            frozen.freeze();
            long gapMs =
                    VirtualThreads.largestTickerGapMs("4 virtual threads extending and releasing DibsLeases", callers);
            frozen.thaw();
            assertEquals(
                    List.of(false, false, false, false), new ArrayList<>(owned), "each release failed, none proven");
            VirtualThreads.assertTickerKeptTicking(gapMs);
        }
    }

    static DibsOptions frozenTestOptions(RedisServer frozen) {
        return DibsOptions.builder()
                .uri(frozen.uri())
                .connectTimeout(Duration.ofMillis(1500))
                .readTimeout(Duration.ofMillis(1500))
                .build();
    }

    @Test
    void noVirtualThreadIsPinnedWhileItsLockedTaskBlocks(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("pinned.jfr");
        try (Recording recording = new Recording()) {
            recording
                    .enable("jdk.VirtualThreadPinned")
                    .withThreshold(Duration.ZERO)
                    .withStackTrace();
            recording.start();
            List<Runnable> tasks = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String name = uniqueName("jfr-" + i);
                tasks.add(() -> assertTrue(Dibs.execute(redis.uri(), name, 30, 0, () -> VirtualThreads.sleep(100))));
            }
            // The control: parking inside a class initializer pins; the recording must see it.
            tasks.add(() -> assertEquals(1, PinsInItsInitializer.VALUE));
            VirtualThreads.run(tasks);
            recording.stop();
            recording.dump(file);
        }
        List<String> pinnedAt = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            pinnedAt.add(
                    e.getStackTrace() == null
                            ? "?"
                            : e.getStackTrace().getFrames().toString());
        }
        assertTrue(
                pinnedAt.stream().anyMatch(s -> s.contains("PinsInItsInitializer")),
                "the control pin was recorded: " + pinnedAt);
        assertTrue(
                pinnedAt.stream().noneMatch(s -> s.contains("dibs.Lifecycle") || s.contains("dibs.NativeIo")),
                "a locked task pinned its carrier: " + pinnedAt);
        assertEquals(1, pinnedAt.size(), "only the control pinned: " + pinnedAt);
    }

    /** Sleeps in its static initializer: a virtual thread that initializes it is pinned. */
    static final class PinsInItsInitializer {
        static final int VALUE;

        static {
            VirtualThreads.sleep(50);
            VALUE = 1;
        }

        private PinsInItsInitializer() {}
    }

    @Test
    void keepAliveHoldsTheLockOfATaskOnAVirtualThread() throws Exception {
        DibsOptions conn =
                DibsOptions.builder().uri(redis.uri()).keepAlive(true).build();
        String name = uniqueName("vt-keep-alive");
        AtomicReference<DibsResult<String>> result = new AtomicReference<>();
        ConcurrentLinkedQueue<Long> ttls = new ConcurrentLinkedQueue<>();
        VirtualThreads.start(() -> result.set(Dibs.attempt(conn, name, Duration.ofMillis(600), Duration.ZERO, () -> {
                    for (int i = 0; i < 6; i++) {
                        VirtualThreads.sleep(250); // 1.5 s in all, 2.5 x atMost
                        try {
                            ttls.add(Long.parseLong(redis.command("PTTL", RedisServer.lockKey(name))));
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                    return "done";
                })))
                .join();
        assertEquals("done", result.get().value());
        assertTrue(result.get().ownedToTheEnd(), result.get().toString());
        assertTrue(ttls.stream().allMatch(t -> t > 0), "held throughout: PTTLs " + ttls);
        assertEquals("0", redis.command("EXISTS", RedisServer.lockKey(name)), "released after");
    }

    @Test
    void aLeaseIsReleasedWhateverTheVirtualTaskThrows() throws Exception {
        String name = uniqueName("vt-throws");
        AtomicReference<Throwable> caught = new AtomicReference<>();
        StackOverflowError overflow = new StackOverflowError("from the task");
        VirtualThreads.start(() -> {
                    try {
                        Dibs.execute(redis.uri(), name, 30, 0, () -> {
                            throw overflow;
                        });
                    } catch (Throwable t) {
                        caught.set(t);
                    }
                })
                .join();
        assertTrue(caught.get() == overflow, "the same object: " + caught.get());
        assertEquals("0", redis.command("EXISTS", RedisServer.lockKey(name)), "released");
    }
}
