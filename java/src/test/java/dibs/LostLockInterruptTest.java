package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 30 (1, 2): with {@code interruptOnLost}, the interrupt a loss delivers goes to the thread
 * running the task, and only while it runs; dibs takes its own interrupt back before the call
 * returns, and keeps one that came from elsewhere. The loss is made as a user meets it: an
 * outsider deletes the held key, and keep-alive's next extension (a third of atMost) finds it.
 */
@Tag("jvm")
@Timeout(60)
class LostLockInterruptTest extends RedisTestBase {
    private static final Duration AT_MOST = Duration.ofMillis(1500);

    @AfterEach
    void clearTheTestThread() {
        Thread.interrupted(); // whatever a failed assertion left, for the next test
    }

    @Test
    void aTaskThatRestoresTheInterruptLeavesItsCallerUninterrupted() throws Exception {
        String name = uniqueName("interrupt-restored");
        try (DibsClient client = interrupting()) {
            DibsResult<String> result = client.attempt(name, AT_MOST, Duration.ZERO, () -> {
                deleteKey(name);
                try {
                    Thread.sleep(10_000);
                    return "slept";
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt(); // as Java code should
                    return "interrupted";
                }
            });
            assertEquals("interrupted", result.value());
            assertFalse(Thread.interrupted(), "dibs took back the interrupt it delivered");
            Thread.sleep(50); // the caller's next sleep sleeps
        }
    }

    @Test
    void anInterruptFromElsewhereIsKeptThroughALoss() throws Exception {
        String name = uniqueName("interrupt-kept");
        try (DibsClient client = interrupting()) {
            DibsLease lease = client.tryLock(name, AT_MOST, Duration.ZERO).orElseThrow();
            deleteKey(name);
            Thread.currentThread().interrupt(); // the application's own, before the loss is found
            // Waits without touching the flag: join() would clear it while it parks, and restore it.
            CompletableFuture<Void> lost = lease.whenLost().toCompletableFuture();
            while (!lost.isDone()) {
                Thread.onSpinWait();
            }
            assertFalse(lease.release());
            assertTrue(Thread.interrupted(), "an interrupt dibs did not deliver is kept");
        }
        try (DibsClient client = interrupting()) {
            assertTrue(client.execute(
                    uniqueName("interrupt-own"),
                    AT_MOST,
                    Duration.ZERO,
                    () -> Thread.currentThread().interrupt()));
            assertTrue(Thread.interrupted(), "a task's own interrupt, with no loss, is kept");
        }
    }

    @Test
    void aLeaseInterruptsTheThreadItNamesAndNotTheOneThatTookIt() throws Exception {
        String name = uniqueName("interrupt-named");
        CountDownLatch asleep = new CountDownLatch(1);
        AtomicReference<String> worked = new AtomicReference<>();
        Thread worker = new Thread(
                () -> {
                    asleep.countDown();
                    try {
                        Thread.sleep(10_000);
                        worked.set("slept");
                    } catch (InterruptedException e) {
                        worked.set("interrupted");
                    }
                },
                "lease-worker");
        try (DibsClient client = interrupting()) {
            DibsLease lease = client.tryLock(name, AT_MOST, Duration.ZERO).orElseThrow();
            lease.interruptOnLost(worker);
            worker.start();
            assertTrue(asleep.await(5, TimeUnit.SECONDS));
            deleteKey(name);
            lease.whenLost().toCompletableFuture().join();
            worker.join();
            assertEquals("interrupted", worked.get(), "the named thread is interrupted");
            assertFalse(Thread.currentThread().isInterrupted(), "the thread that took the lease is not");
            assertFalse(lease.release());
        }
    }

    private static DibsClient interrupting() {
        return Dibs.client(local().keepAlive(true).interruptOnLost(true).build());
    }

    private static void deleteKey(String name) {
        try {
            redis.command("DEL", lockKey(name));
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
