package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.sleep;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dibs.testsupport.TestSupport;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link DibsListener} on locked calls: the events of each ending, and a listener that throws. Leases: {@link LeaseListenerTest}. */
@Timeout(90)
class DibsListenerTest extends RedisTestBase {
    @Test
    void aWinIsAttemptAcquiredFinishedReleased() throws IOException {
        EventRecorder rec = new EventRecorder();
        DibsOptions options = local().listener(rec).build();
        String name = uniqueName("lst-win");
        List<String> seenInTask = new ArrayList<>();
        DibsResult<String> r = Dibs.attempt(options, name, Duration.ofSeconds(10), Duration.ZERO, () -> {
            seenInTask.addAll(rec.events);
            sleep(150);
            return "v";
        });
        assertEquals("v", r.value());
        assertEquals(List.of("attempt", "acquired"), seenInTask, "events before the task ran");
        assertEquals(List.of("attempt", "acquired", "finished", "released"), rec.events);
        assertEquals(Collections.nCopies(4, name), rec.names);
        assertTrue(rec.finished.toMillis() >= 150, "finished after " + rec.finished);
        assertTrue(rec.heldFor.toMillis() >= 150, "held for " + rec.heldFor);
        assertEquals(r.elapsed(), rec.heldFor);
        assertFalse(keyExists(lockKey(name)));

        // The same listener through execute and executeWithResult.
        rec.events.clear();
        assertTrue(Dibs.execute(options, name, 10, 0, () -> {}));
        assertEquals(Optional.of(1), Dibs.executeWithResult(options, name, 10, 0, () -> 1));
        assertEquals(
                List.of("attempt", "acquired", "finished", "released", "attempt", "acquired", "finished", "released"),
                rec.events);
    }

    @Test
    void aSkipIsAttemptSkipped() throws IOException {
        EventRecorder rec = new EventRecorder();
        String name = uniqueName("lst-skip");
        redis.command("SET", lockKey(name), "foo", "PX", "5000");
        assertFalse(Dibs.execute(local().listener(rec).build(), name, 10, 0, () -> fail("must not run")));
        assertEquals(List.of("attempt", "skipped"), rec.events);
        assertEquals(List.of(name, name), rec.names);
    }

    @Test
    void anExpiryMidTaskEndsWithExpired() {
        EventRecorder rec = new EventRecorder();
        String name = uniqueName("lst-expired");
        DibsResult<Void> r =
                Dibs.attempt(local().listener(rec).build(), name, Duration.ofMillis(200), Duration.ZERO, () -> {
                    sleep(400);
                    return null;
                });
        assertFalse(r.ownedToTheEnd());
        assertEquals(List.of("attempt", "acquired", "finished", "expired"), rec.events);
        assertTrue(rec.finished.toMillis() >= 400, "finished after " + rec.finished);
        assertTrue(rec.heldFor.toMillis() >= 400, "held for " + rec.heldFor);
    }

    @Test
    void aTaskExceptionStillFiresTheEventsAndPassesThrough() throws IOException {
        EventRecorder rec = new EventRecorder();
        String name = uniqueName("lst-throws");
        IllegalStateException boom = new IllegalStateException("boom");
        IllegalStateException caught = assertThrows(
                IllegalStateException.class,
                () -> Dibs.execute(local().listener(rec).build(), name, 10, 0, () -> {
                    throw boom;
                }));
        assertSame(boom, caught);
        assertEquals(0, boom.getSuppressed().length);
        assertEquals(List.of("attempt", "acquired", "finished", "released"), rec.events);
        assertFalse(keyExists(lockKey(name)), "released after the exception");
    }

    @Test
    void aListenerThatAlwaysThrowsNeverBreaksTheLifecycle() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        DibsListener hostile = new DibsListener() {
            private RuntimeException boom(String event) {
                calls.incrementAndGet();
                return new IllegalStateException("listener " + event + " exploded");
            }

            @Override
            public void attempt(String lockName) {
                throw boom("attempt");
            }

            @Override
            public void skipped(String lockName) {
                throw boom("skipped");
            }

            @Override
            public void acquired(String lockName) {
                throw boom("acquired");
            }

            @Override
            public void finished(String lockName, Duration duration) {
                calls.incrementAndGet();
                throw new AssertionError("listener finished exploded with an Error");
            }

            @Override
            public void released(String lockName, Duration heldFor) {
                throw boom("released");
            }

            @Override
            public void expired(String lockName, Duration heldFor) {
                throw boom("expired");
            }
        };
        DibsOptions options = local().listener(hostile).build();
        String name = uniqueName("lst-hostile");
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            AtomicBoolean ran = new AtomicBoolean();
            DibsResult<String> r = Dibs.attempt(options, name, 10, 0, () -> {
                ran.set(true);
                return "still fine";
            });
            assertTrue(ran.get());
            assertTrue(r.acquired());
            assertEquals("still fine", r.value());
            assertTrue(r.ownedToTheEnd());
            assertFalse(keyExists(lockKey(name)), "released despite the listener");
            assertEquals(4, calls.get());
            List<String> warnings = log.warningsAbout(name);
            for (String event : List.of("attempt", "acquired", "finished", "released")) {
                assertTrue(
                        warnings.stream().anyMatch(w -> w.contains("DibsListener." + event)),
                        event + " not logged: " + warnings);
            }

            // A skip, an expiry and a task exception, with the same listener.
            redis.command("SET", lockKey(name), "foo", "PX", "5000");
            assertFalse(Dibs.attempt(options, name, 10, 0, () -> 1).acquired());
            redis.command("DEL", lockKey(name));
            assertFalse(Dibs.attempt(options, name, Duration.ofMillis(100), Duration.ZERO, () -> {
                        sleep(250);
                        return 1;
                    })
                    .ownedToTheEnd());
            IOException checked = new IOException("task failure");
            assertSame(
                    checked,
                    assertThrows(
                            IOException.class,
                            () -> Dibs.execute(options, name, 10, 0, () -> {
                                throw TestSupport.sneak(checked);
                            })));
            assertFalse(keyExists(lockKey(name)));
            assertEquals(4 + 2 + 4 + 4, calls.get());
            List<String> all = log.warningsAbout(name);
            assertTrue(all.stream().anyMatch(w -> w.contains("DibsListener.skipped")), all.toString());
            assertTrue(all.stream().anyMatch(w -> w.contains("DibsListener.expired")), all.toString());
        }
    }

    @Test
    void eachOptionsInstanceHasItsOwnListener() {
        EventRecorder a = new EventRecorder();
        EventRecorder b = new EventRecorder();
        String name = uniqueName("lst-own");
        Dibs.execute(local().listener(a).build(), name, 10, 0, () -> {});
        assertEquals(4, a.events.size());
        assertEquals(0, b.events.size());
        Dibs.execute(local().listener(b).build(), name, 10, 0, () -> {});
        assertEquals(4, a.events.size(), "a heard b's call: " + a.events);
        assertEquals(4, b.events.size());
        Dibs.execute(local().build(), name, 10, 0, () -> {});
        assertEquals(4, a.events.size());
        assertEquals(4, b.events.size());
    }
}
