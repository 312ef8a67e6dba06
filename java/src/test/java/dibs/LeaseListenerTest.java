package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.sleep;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.RedisServer;
import dibs.testsupport.TestSupport;
import java.io.IOException;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@link DibsLease} from {@link DibsClient#tryLock} is heard by the client's
 * {@link DibsListener} as every locked call is: attempt, then skipped, or acquired and, at the
 * release, finished and one of released, expired or releaseFailed.
 */
@Timeout(60)
class LeaseListenerTest extends RedisTestBase {
    private static DibsClient client(EventRecorder rec) {
        return Dibs.client(DibsOptions.builder().uri(redis.uri()).listener(rec).build());
    }

    private static boolean exists(String name) throws IOException {
        return "1".equals(redis.command("EXISTS", lockKey(name)));
    }

    @Test
    void aLeaseIsAttemptAcquiredThenFinishedReleasedAtItsRelease() throws IOException {
        EventRecorder rec = new EventRecorder();
        String name = uniqueName("lease-win");
        try (DibsClient client = client(rec)) {
            DibsLease lease =
                    client.tryLock(name, Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
            assertEquals(List.of("attempt", "acquired"), rec.events, "told at the acquire");
            sleep(150);
            assertEquals(List.of("attempt", "acquired"), rec.events, "nothing while held");
            assertTrue(lease.release());
        }
        assertEquals(List.of("attempt", "acquired", "finished", "released"), rec.events);
        assertEquals(Collections.nCopies(4, name), rec.names);
        assertTrue(rec.finished.toMillis() >= 150, "finished: held here for " + rec.finished);
        assertTrue(rec.heldFor.toMillis() >= 150, "released: held for " + rec.heldFor);
        assertFalse(exists(name));
    }

    @Test
    void aHeldLockIsAttemptSkipped() throws IOException {
        EventRecorder rec = new EventRecorder();
        String name = uniqueName("lease-skip");
        redis.command("SET", lockKey(name), "someone-else", "PX", "10000");
        try (DibsClient client = client(rec)) {
            assertFalse(
                    client.tryLock(name, Duration.ofSeconds(10), Duration.ZERO).isPresent());
        }
        assertEquals(List.of("attempt", "skipped"), rec.events);
        assertEquals(List.of(name, name), rec.names);
    }

    @Test
    void aLeaseThatLapsedEndsWithExpired() {
        EventRecorder rec = new EventRecorder();
        String name = uniqueName("lease-expired");
        try (DibsClient client = client(rec)) {
            DibsLease lease =
                    client.tryLock(name, Duration.ofMillis(100), Duration.ZERO).orElseThrow();
            sleep(300);
            assertFalse(lease.release(), "lapsed: no longer ours");
        }
        assertEquals(List.of("attempt", "acquired", "finished", "expired"), rec.events);
        assertTrue(rec.heldFor.toMillis() >= 300, "held for " + rec.heldFor);
    }

    @Test
    void closeIsTheReleaseAndIsToldOnce() throws IOException {
        EventRecorder rec = new EventRecorder();
        String name = uniqueName("lease-close");
        try (DibsClient client = client(rec)) {
            try (DibsLease lease = client.tryLock(name, Duration.ofSeconds(10), Duration.ofSeconds(5))
                    .orElseThrow()) {
                assertTrue(exists(name));
                lease.close(); // and again by try-with-resources: harmless, and not told twice
            }
        }
        assertEquals(List.of("attempt", "acquired", "finished", "released"), rec.events);
        assertTrue(exists(name), "kept for the rest of atLeast");
    }

    @Test
    void aReleaseThatFailsIsToldReleaseFailed() throws IOException {
        EventRecorder rec = new EventRecorder();
        String name = uniqueName("lease-release-failed");
        try (RedisServer doomed = RedisServer.launch();
                DibsClient client = Dibs.client(DibsOptions.builder()
                        .uri(doomed.uri())
                        .connectTimeout(Duration.ofMillis(500))
                        .readTimeout(Duration.ofMillis(500))
                        .listener(rec)
                        .build());
                TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            DibsLease lease =
                    client.tryLock(name, Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
            doomed.kill();
            assertFalse(lease.release(), "a failed release is not ours to the end");
            assertFalse(log.warningsAbout(name).isEmpty(), "logged: " + log.warnings());
        }
        assertEquals(List.of("attempt", "acquired", "finished", "releaseFailed"), rec.events);
    }

    @Test
    void aDroppedLeaseIsReleasedByTheCleanerAndHeard() throws IOException {
        EventRecorder rec = new EventRecorder();
        String name = uniqueName("lease-dropped");
        try (DibsClient client = client(rec);
                TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            takeAndDrop(client, name);
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (!rec.events.contains("released")) {
                assertTrue(System.nanoTime() < deadline, "never released by the cleaner: " + rec.events);
                System.gc();
                sleep(20);
            }
            assertEquals(List.of("attempt", "acquired", "finished", "released"), rec.events);
            assertFalse(exists(name), "released in Redis");
            assertTrue(
                    log.warningsAbout(name).stream().anyMatch(w -> w.contains("garbage collected")),
                    "warned: " + log.warnings());
        }
    }

    private static void takeAndDrop(DibsClient client, String name) throws IOException {
        assertTrue(client.tryLock(name, Duration.ofSeconds(30), Duration.ZERO).isPresent());
        assertTrue(exists(name));
    }

    @Test
    void aListenerThatThrowsNeverBreaksALease() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        DibsListener hostile = new DibsListener() {
            @Override
            public void attempt(String lockName) {
                calls.incrementAndGet();
                throw new IllegalStateException("attempt");
            }

            @Override
            public void acquired(String lockName) {
                calls.incrementAndGet();
                throw new IllegalStateException("acquired");
            }

            @Override
            public void finished(String lockName, Duration duration) {
                calls.incrementAndGet();
                throw new IllegalStateException("finished");
            }

            @Override
            public void released(String lockName, Duration heldFor) {
                calls.incrementAndGet();
                throw new AssertionError("released");
            }
        };
        String name = uniqueName("lease-hostile");
        try (DibsClient client = Dibs.client(
                        DibsOptions.builder().uri(redis.uri()).listener(hostile).build());
                TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            DibsLease lease =
                    client.tryLock(name, Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
            assertTrue(exists(name));
            assertTrue(lease.release());
            assertEquals(
                    4,
                    log.warningsAbout(name).stream()
                            .filter(w -> w.contains("ignored"))
                            .count(),
                    log.warnings().toString());
        }
        assertEquals(4, calls.get());
        assertFalse(exists(name));
    }

    @Test
    void executeIsALeaseToo() {
        // execute tells finished with the task's own time, once, before the release.
        EventRecorder rec = new EventRecorder();
        String name = uniqueName("lease-execute");
        try (DibsClient client = client(rec)) {
            assertTrue(client.execute(name, Duration.ofSeconds(10), Duration.ZERO, () -> sleep(100)));
            DibsLease lease =
                    client.tryLock(name, Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
            assertTrue(lease.release());
        }
        assertEquals(
                List.of("attempt", "acquired", "finished", "released", "attempt", "acquired", "finished", "released"),
                rec.events);
    }
}
