package dibs.shedlock;

import static java.time.Duration.ZERO;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.Dibs;
import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's provider contract, after shedlock-test-support's
 * {@code AbstractLockProviderIntegrationTest} and {@code AbstractExtensibleLockProviderIntegrationTest}
 * (written here: that artifact is not served to this build), against a real redis-server.
 * {@link #assertLocked} and {@link #assertUnlocked} check both the Redis key and the provider.
 */
class DibsLockProviderTest extends ProviderFixture {
    private static final Duration LOCK_AT_LEAST_FOR = Duration.ofSeconds(2);

    private static String name(String base) {
        return uniqueName("shedlock", base);
    }

    private static LockConfiguration lockConfig(String name) {
        return lockConfig(name, Duration.ofMinutes(5), ZERO);
    }

    private static LockConfiguration lockConfig(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
        return new LockConfiguration(Instant.now(), name, lockAtMostFor, lockAtLeastFor);
    }

    private static boolean keyExists(String name) throws IOException {
        return "1".equals(redis.command("EXISTS", RedisServer.lockKey(name)));
    }

    private static void assertLocked(String name) throws IOException {
        assertTrue(keyExists(name), "the key of '" + name + "' is in Redis");
        assertTrue(provider.lock(lockConfig(name)).isEmpty(), "'" + name + "' cannot be locked again");
    }

    private static void assertUnlocked(String name) throws IOException {
        assertFalse(keyExists(name), "the key of '" + name + "' is gone");
        Optional<SimpleLock> lock = provider.lock(lockConfig(name));
        assertTrue(lock.isPresent(), "'" + name + "' can be locked");
        lock.get().unlock();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    // ---- AbstractLockProviderIntegrationTest ----

    @Test
    void createsALockAndRefusesASecond() throws IOException {
        String name = name("create");
        Optional<SimpleLock> lock = provider.lock(lockConfig(name));
        assertTrue(lock.isPresent());
        assertLocked(name);
        lock.get().unlock();
        assertUnlocked(name);
    }

    @Test
    void twoIndependentLocks() {
        Optional<SimpleLock> lock1 = provider.lock(lockConfig(name("one")));
        Optional<SimpleLock> lock2 = provider.lock(lockConfig(name("two")));
        assertTrue(lock1.isPresent());
        assertTrue(lock2.isPresent());
        lock1.get().unlock();
        lock2.get().unlock();
    }

    @Test
    void lockTwiceInARow() {
        String name = name("twice");
        provider.lock(lockConfig(name)).orElseThrow().unlock();
        provider.lock(lockConfig(name)).orElseThrow().unlock();
    }

    @Test
    void aLockLapsesAfterLockAtMostFor() throws IOException {
        String name = name("timeout");
        SimpleLock lapsed =
                provider.lock(lockConfig(name, Duration.ofMillis(50), ZERO)).orElseThrow();
        sleep(100);
        assertFalse(keyExists(name), "expired after 50 ms");
        SimpleLock next = provider.lock(lockConfig(name)).orElseThrow();
        lapsed.unlock(); // no longer ours: must leave the new holder's lock alone
        assertLocked(name);
        next.unlock();
        assertUnlocked(name);
    }

    @Test
    void lockRightAfterUnlockTenTimes() {
        String name = name("ten");
        for (int i = 0; i < 10; i++) {
            Optional<SimpleLock> lock = provider.lock(lockConfig(name));
            assertTrue(lock.isPresent(), "round " + i);
            assertTrue(provider.lock(lockConfig(name)).isEmpty(), "round " + i + ": held");
            lock.get().unlock();
        }
    }

    @Test
    void lockAtLeastForHoldsTheLockAfterUnlock() throws IOException {
        String name = name("at-least");
        provider.lock(lockConfig(name, LOCK_AT_LEAST_FOR.multipliedBy(2), LOCK_AT_LEAST_FOR))
                .orElseThrow()
                .unlock();
        long pttl = Long.parseLong(redis.command("PTTL", RedisServer.lockKey(name)));
        assertTrue(pttl > 1_000 && pttl <= 2_000, "kept for the rest of lockAtLeastFor: PTTL " + pttl);
        assertTrue(provider.lock(lockConfig(name)).isEmpty(), "refused within lockAtLeastFor");
        sleep(pttl + 50);
        assertUnlocked(name);
    }

    @Test
    void eightThreadsOnTwoLocksShareACounterWithoutARace() throws Exception {
        String[] names = {name("fuzz-a"), name("fuzz-b")};
        long[] counters = new long[2]; // plain fields: only the lock keeps the updates apart
        AtomicInteger[] won = {new AtomicInteger(), new AtomicInteger()};
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int lock = t % 2;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < 40; i++) {
                        Optional<SimpleLock> held =
                                provider.lock(lockConfig(names[lock], Duration.ofSeconds(30), ZERO));
                        if (held.isPresent()) {
                            try {
                                long before = counters[lock];
                                Thread.yield();
                                counters[lock] = before + 1;
                                won[lock].incrementAndGet();
                            } finally {
                                held.get().unlock();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        for (int lock = 0; lock < 2; lock++) {
            assertEquals(won[lock].get(), counters[lock], "lock " + lock + ": no lost update");
            assertTrue(won[lock].get() > 0, "lock " + lock + " was won");
        }
    }

    // ---- AbstractExtensibleLockProviderIntegrationTest ----

    @Test
    void anExtendedLockIsHeldPastItsOriginalLockAtMostFor() throws IOException {
        String name = name("extend");
        SimpleLock lock =
                provider.lock(lockConfig(name, Duration.ofMillis(300), ZERO)).orElseThrow();
        Optional<SimpleLock> extended = lock.extend(Duration.ofSeconds(10), ZERO);
        assertTrue(extended.isPresent());
        sleep(400);
        assertLocked(name);
        extended.get().unlock();
        assertUnlocked(name);
    }

    @Test
    void anUnlockedLockCannotBeExtended() throws IOException {
        String name = name("extend-unlocked");
        SimpleLock lock =
                provider.lock(lockConfig(name, Duration.ofSeconds(1), ZERO)).orElseThrow();
        lock.unlock();
        assertUnlocked(name);
        IllegalStateException e =
                assertThrows(IllegalStateException.class, () -> lock.extend(Duration.ofSeconds(10), ZERO));
        assertTrue(e.getMessage().contains(name), e.getMessage());
        assertThrows(IllegalStateException.class, lock::unlock, "unlocked once");
    }

    @Test
    void anExpiredLockCannotBeExtended() throws IOException {
        String name = name("extend-expired");
        // 50 ms, not less: a lock whose reply comes after half its atMost is given back unrun.
        SimpleLock lock =
                provider.lock(lockConfig(name, Duration.ofMillis(50), ZERO)).orElseThrow();
        sleep(100);
        assertTrue(lock.extend(Duration.ofSeconds(10), ZERO).isEmpty(), "no longer ours");
        assertUnlocked(name);
        assertThrows(IllegalStateException.class, lock::unlock, "invalid after the extend");
    }

    @Test
    void aLockTakenByAnotherHolderCannotBeExtendedAndIsLeftAlone() throws IOException {
        String name = name("extend-taken");
        SimpleLock lock =
                provider.lock(lockConfig(name, Duration.ofMillis(50), ZERO)).orElseThrow();
        sleep(100);
        SimpleLock other = provider.lock(lockConfig(name)).orElseThrow();
        assertTrue(lock.extend(Duration.ofSeconds(10), ZERO).isEmpty());
        assertLocked(name);
        other.unlock();
        assertUnlocked(name);
    }

    @Test
    void extendCountsLockAtLeastForFromNow() throws IOException {
        String name = name("extend-at-least");
        SimpleLock lock =
                provider.lock(lockConfig(name, Duration.ofSeconds(10), ZERO)).orElseThrow();
        SimpleLock extended =
                lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9)).orElseThrow();
        extended.unlock();
        assertLocked(name);
        long pttl = Long.parseLong(redis.command("PTTL", RedisServer.lockKey(name)));
        assertTrue(pttl > 8_000 && pttl <= 9_000, "kept for lockAtLeastFor: PTTL " + pttl);
    }

    @Test
    void theOldLockIsInvalidAfterAnExtend() {
        String name = name("extend-old");
        SimpleLock lock =
                provider.lock(lockConfig(name, Duration.ofSeconds(10), ZERO)).orElseThrow();
        SimpleLock extended = lock.extend(Duration.ofSeconds(10), ZERO).orElseThrow();
        assertThrows(IllegalStateException.class, () -> lock.extend(Duration.ofSeconds(10), ZERO), "extended twice");
        assertThrows(IllegalStateException.class, lock::unlock, "unlocked after extending");
        SimpleLock again = extended.extend(Duration.ofSeconds(10), ZERO).orElseThrow(); // a chain of extends
        assertThrows(IllegalStateException.class, extended::unlock);
        again.unlock();
    }

    @Test
    void aRefusedExtendLeavesTheLockValid() throws IOException {
        String name = name("extend-bad");
        SimpleLock lock =
                provider.lock(lockConfig(name, Duration.ofSeconds(10), ZERO)).orElseThrow();
        assertThrows(IllegalArgumentException.class, () -> lock.extend(Duration.ofSeconds(1), Duration.ofSeconds(2)));
        assertThrows(IllegalArgumentException.class, () -> lock.extend(null, ZERO));
        assertLocked(name);
        lock.unlock();
        assertUnlocked(name);
    }

    // ---- the provider's own checks ----

    @Test
    void argumentsAreCheckedWithClearMessages() {
        IllegalArgumentException noClient =
                assertThrows(IllegalArgumentException.class, () -> new DibsLockProvider(null));
        assertTrue(noClient.getMessage().contains("client must not be null"), noClient.getMessage());
        IllegalArgumentException noConfig = assertThrows(IllegalArgumentException.class, () -> provider.lock(null));
        assertTrue(noConfig.getMessage().contains("lockConfiguration must not be null"), noConfig.getMessage());
        IllegalArgumentException badName =
                assertThrows(IllegalArgumentException.class, () -> provider.lock(lockConfig("bad\nname")));
        assertTrue(badName.getMessage().contains("control"), badName.getMessage());
    }

    @Test
    void theProviderDoesNotOwnTheClient() {
        DibsClient own = Dibs.client(redis.uri());
        DibsLockProvider mine = new DibsLockProvider(own);
        mine.lock(lockConfig(name("own"))).orElseThrow().unlock();
        own.close();
        assertThrows(IllegalStateException.class, () -> mine.lock(lockConfig(name("closed"))), "closed by its owner");
    }
}
