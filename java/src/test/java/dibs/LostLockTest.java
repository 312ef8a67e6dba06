package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dibs.testsupport.RedisServer;
import dibs.testsupport.VirtualThreads;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A lost lock stops its task (issue 18): with keep-alive, an outsider deletes a held key; the
 * next extension (a third of atMost later) finds it gone, and the task is told at once: its
 * thread interrupted (opt-in, {@code interruptOnLost}), {@link DibsLease#whenLost()} completed,
 * {@link DibsLease#safeUntil()} now. On a platform and on a virtual thread.
 */
@Tag("jvm")
@Timeout(60)
class LostLockTest extends RedisTestBase {
    /** atMost 1.5 s: keep-alive extends every 500 ms, so a loss is found within 500 ms. */
    private static final Duration AT_MOST = Duration.ofMillis(1500);

    private static final long PERIOD_MS = AT_MOST.toMillis() / 3;
    /** The margin safeUntil keeps for clocks running at different rates: 1% of atMost + 2 ms. */
    private static final long DRIFT_MS = AT_MOST.toMillis() / 100 + 2;
    /** Beyond the period, for the watcher to wake and the thread to run; qemu's emulation is slow. */
    private static final long SLACK_MS = Boolean.getBoolean("dibs.test.emulated") ? 1500 : 300;

    @Test
    void aLostLockInterruptsItsTaskOnAPlatformThread() throws Exception {
        interruptsItsTask(false);
    }

    @Test
    void aLostLockInterruptsItsTaskOnAVirtualThread() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads: Java 21+");
        interruptsItsTask(true);
    }

    private void interruptsItsTask(boolean virtual) throws Exception {
        String name = uniqueName("lost-interrupt");
        AtomicLong deletedAt = new AtomicLong();
        AtomicLong interruptedAt = new AtomicLong();
        AtomicBoolean lostSeen = new AtomicBoolean();
        AtomicReference<DibsResult<String>> result = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (DibsClient client =
                Dibs.client(local().keepAlive(true).interruptOnLost(true).build())) {
            Runnable call = () -> {
                try {
                    result.set(client.attempt(name, AT_MOST, Duration.ZERO, () -> {
                        deleteLater(name, 200, deletedAt);
                        try {
                            Thread.sleep(10_000);
                            return "slept";
                        } catch (InterruptedException e) {
                            interruptedAt.set(System.nanoTime());
                            lostSeen.set(Dibs.isLockLost());
                            return "interrupted";
                        }
                    }));
                } catch (Throwable e) {
                    failure.set(e);
                }
            };
            Thread t = virtual ? VirtualThreads.start(call) : new Thread(call, "lost-holder");
            if (!virtual) {
                t.start();
            }
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        long afterMs = TimeUnit.NANOSECONDS.toMillis(interruptedAt.get() - deletedAt.get());
        System.out.printf(
                "lost lock (%s thread): the task was interrupted %d ms after the key was deleted "
                        + "(extension period %d ms)%n",
                virtual ? "virtual" : "platform", afterMs, PERIOD_MS);
        assertEquals("interrupted", result.get().value());
        assertTrue(interruptedAt.get() > 0 && afterMs <= PERIOD_MS + SLACK_MS, "interrupted after " + afterMs + " ms");
        assertTrue(lostSeen.get(), "Dibs.isLockLost() says so");
        assertFalse(result.get().ownedToTheEnd(), "not owned to the end");
    }

    @Test
    void whenLostCompletesForALostLeaseAndNeverForAReleasedOne() throws Exception {
        try (DibsClient client = Dibs.client(local().keepAlive(true).build())) {
            String name = uniqueName("lost-future");
            DibsLease lease = client.tryLock(name, AT_MOST, Duration.ZERO).orElseThrow();
            CompletableFuture<Void> lost = lease.whenLost().toCompletableFuture();
            long deleted = System.nanoTime();
            redis.command("DEL", lockKey(name));
            lost.get(PERIOD_MS + SLACK_MS + 1000, TimeUnit.MILLISECONDS);
            long afterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - deleted);
            assertTrue(lease.isLost());
            assertTrue(lease.safeUntil() - System.nanoTime() <= 0, "nothing is safe once lost");
            assertFalse(lease.release());
            assertTrue(afterMs <= PERIOD_MS + SLACK_MS, "told after " + afterMs + " ms");

            String kept = uniqueName("kept-future");
            DibsLease other = client.tryLock(kept, AT_MOST, Duration.ZERO).orElseThrow();
            CompletableFuture<Void> never = other.whenLost().toCompletableFuture();
            assertTrue(other.release());
            Thread.sleep(PERIOD_MS + 200);
            assertFalse(never.isDone(), "a released lease is never told lost");
        }
    }

    @Test
    void safeUntilIsAtMostFromTheSetLessTheDriftAndMovesWithKeepAlive() throws Exception {
        try (DibsClient plain = Dibs.client(local().build());
                DibsClient keepAlive = Dibs.client(local().keepAlive(true).build())) {
            long before = System.nanoTime();
            DibsLease lease = plain.tryLock(uniqueName("safe-plain"), AT_MOST, Duration.ZERO)
                    .orElseThrow();
            long after = System.nanoTime();
            // The SET was sent between the two readings: the deadline is atMost less the drift from then.
            long safeUntil = lease.safeUntil();
            long safeNanos = TimeUnit.MILLISECONDS.toNanos(AT_MOST.toMillis() - DRIFT_MS);
            assertTrue(
                    safeUntil - after <= safeNanos
                            && safeUntil - before >= safeNanos - TimeUnit.MILLISECONDS.toNanos(100),
                    "safe until " + TimeUnit.NANOSECONDS.toMicros(safeUntil - before) + " µs after the call began, "
                            + TimeUnit.NANOSECONDS.toMicros(after - before) + " µs in the call; expected "
                            + (AT_MOST.toMillis() - DRIFT_MS) + " ms after the SET was sent");
            Thread.sleep(PERIOD_MS * 2);
            assertTrue(
                    lease.safeUntil() - System.nanoTime()
                            < TimeUnit.MILLISECONDS.toNanos(AT_MOST.toMillis() - 2 * PERIOD_MS),
                    "without keep-alive the deadline stays");
            assertTrue(lease.release());

            DibsLease extended = keepAlive
                    .tryLock(uniqueName("safe-kept"), AT_MOST, Duration.ZERO)
                    .orElseThrow();
            Thread.sleep(PERIOD_MS * 2 + 200); // two extensions since
            long leftMs = TimeUnit.NANOSECONDS.toMillis(extended.safeUntil() - System.nanoTime());
            assertTrue(
                    leftMs > AT_MOST.toMillis() - PERIOD_MS - DRIFT_MS - 300,
                    "keep-alive moved it: " + leftMs + " ms left");
            assertTrue(extended.release());
        }
    }

    /**
     * On a server frozen for 300 ms, the SET's reply comes 300 ms after it was sent: the deadline
     * still counts from the send. The bounds above cannot tell the send from the reply.
     */
    @Test
    void safeUntilCountsFromTheSendNotTheReply() throws Exception {
        long safeNanos = TimeUnit.MILLISECONDS.toNanos(AT_MOST.toMillis() - DRIFT_MS);
        try (RedisServer frozen = RedisServer.launch();
                DibsClient client = Dibs.client(DibsOptions.builder()
                        .host("127.0.0.1")
                        .port(frozen.port())
                        .readTimeout(Duration.ofSeconds(3))
                        .build())) {
            assertTrue(client.execute(uniqueName("warm"), AT_MOST, Duration.ZERO, () -> {}), "a connection to reuse");
            frozen.freeze();
            Thread thaw = new Thread(
                    () -> {
                        try {
                            Thread.sleep(300);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        frozen.thaw();
                    },
                    "thaw");
            long before = System.nanoTime();
            thaw.start();
            DibsLease lease = client.tryLock(uniqueName("safe-frozen"), AT_MOST, Duration.ZERO)
                    .orElseThrow();
            long after = System.nanoTime();
            thaw.join();
            long safeUntil = lease.safeUntil();
            assertTrue(after - before >= TimeUnit.MILLISECONDS.toNanos(250), "the reply waited for the thaw");
            long slackMs = Boolean.getBoolean("dibs.test.emulated") ? 200 : 100; // under the 300 ms it must tell
            assertTrue(
                    safeUntil - before <= safeNanos + TimeUnit.MILLISECONDS.toNanos(slackMs),
                    "counted from the send, not the reply: safe until "
                            + TimeUnit.NANOSECONDS.toMillis(safeUntil - before) + " ms after the call began, "
                            + TimeUnit.NANOSECONDS.toMillis(after - before) + " ms in the call");
            assertTrue(lease.release());
        }
    }

    private static void deleteLater(String name, long ms, AtomicLong deletedAt) {
        Thread outsider = new Thread(
                () -> {
                    try {
                        Thread.sleep(ms);
                        redis.command("DEL", lockKey(name));
                        deletedAt.set(System.nanoTime());
                    } catch (InterruptedException | IOException e) {
                        throw new IllegalStateException(e);
                    }
                },
                "outsider");
        outsider.setDaemon(true);
        outsider.start();
    }
}
