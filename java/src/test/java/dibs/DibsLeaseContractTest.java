package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.LockContract;
import dibs.testsupport.RedisServer;
import dibs.testsupport.TestSupport;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link DibsClient#tryLock} and {@link DibsLease} pass the lock contract, and extend. */
@Tag("jvm")
class DibsLeaseContractTest extends LockContract {
    private static DibsClient client;

    @BeforeAll
    static void open() {
        client = Dibs.client(redis.uri());
    }

    @AfterAll
    static void close() {
        client.close();
    }

    @Override
    protected boolean runLocked(String name, Duration atMost, Duration atLeast, Runnable task) {
        return client.tryLock(name, atMost, atLeast)
                .map(lease -> {
                    try (lease) {
                        task.run();
                    }
                    return true;
                })
                .orElse(false);
    }

    @Override
    protected String frontEnd() {
        return "DibsClient.tryLock";
    }

    @Test
    void extendSetsANewExpiryWhileOurs() throws Exception {
        String name = name("extend");
        DibsLease lease =
                client.tryLock(name, Duration.ofMillis(500), Duration.ZERO).orElseThrow();
        assertTrue(lease.extend(Duration.ofSeconds(20), Duration.ZERO));
        long pttl = Long.parseLong(redis.command("PTTL", RedisServer.lockKey(name)));
        assertTrue(pttl > 10_000 && pttl <= 20_000, "PTTL after extend: " + pttl);
        TestSupport.sleep(700);
        assertFalse(client.tryLock(name, Duration.ofSeconds(1), Duration.ZERO).isPresent(), "held past the old atMost");
        assertTrue(lease.release(), "ours to the end");
        assertEquals("0", redis.command("EXISTS", RedisServer.lockKey(name)));
    }

    @Test
    void extendAfterTheLockLapsedSaysSoAndTouchesNothing() throws Exception {
        String name = name("extend-late");
        DibsLease lease =
                client.tryLock(name, Duration.ofMillis(50), Duration.ZERO).orElseThrow();
        TestSupport.sleep(120);
        DibsLease other =
                client.tryLock(name, Duration.ofSeconds(30), Duration.ZERO).orElseThrow();
        assertFalse(lease.extend(Duration.ofSeconds(20), Duration.ZERO), "no longer ours");
        assertFalse(lease.release(), "and not released as ours");
        assertTrue(other.release(), "the new holder's lock was untouched");
    }

    @Test
    void aLeaseIsReleasedOnceAndInvalidDurationsAreRefusedBeforeIo() {
        DibsLease lease = client.tryLock(name("once"), Duration.ofSeconds(30), Duration.ZERO)
                .orElseThrow();
        IllegalArgumentException bad = assertThrows(
                IllegalArgumentException.class, () -> lease.extend(Duration.ofSeconds(1), Duration.ofSeconds(2)));
        assertTrue(bad.getMessage().contains("atLeast"), bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> lease.extend(Duration.ZERO, Duration.ZERO));
        assertTrue(lease.release());
        IllegalStateException twice = assertThrows(IllegalStateException.class, lease::release);
        assertTrue(twice.getMessage().contains("released already"), twice.getMessage());
        assertThrows(IllegalStateException.class, () -> lease.extend(Duration.ofSeconds(1), Duration.ZERO));
        lease.close(); // harmless after a release
    }

    @Test
    void withKeepAliveTheHolderCanSeeThatItsLockWasTaken() throws Exception {
        String name = name("lost");
        try (DibsClient keepAlive = Dibs.client(
                DibsOptions.builder().uri(redis.uri()).keepAlive(true).build())) {
            DibsLease lease = keepAlive
                    .tryLock(name, Duration.ofMillis(300), Duration.ZERO)
                    .orElseThrow();
            TestSupport.sleep(150);
            assertFalse(lease.isLost(), "extended, still ours");
            redis.command("SET", RedisServer.lockKey(name), "someone-else", "PX", "60000");
            long deadline = System.nanoTime() + 2_000_000_000L;
            while (!lease.isLost()) {
                assertTrue(System.nanoTime() < deadline, "keep-alive never noticed");
                TestSupport.sleep(10);
            }
            assertFalse(lease.release(), "not ours at the end");
            assertEquals("someone-else", redis.command("GET", RedisServer.lockKey(name)), "untouched");
            assertThrows(IllegalStateException.class, lease::isLost);
        }
    }
}
