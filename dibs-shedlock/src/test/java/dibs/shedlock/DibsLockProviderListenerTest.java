package dibs.shedlock;

import static java.time.Duration.ZERO;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.Dibs;
import dibs.DibsClient;
import dibs.DibsListener;
import dibs.DibsOptions;
import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The locks of {@link DibsLockProvider} are heard by the {@link DibsListener} of its client, as
 * every dibs lock is (so a Spring application's meters count ShedLock's jobs too).
 */
class DibsLockProviderListenerTest extends ProviderFixture {
    /** Every event, as "event name". */
    private static final List<String> EVENTS = Collections.synchronizedList(new ArrayList<>());

    private static DibsClient heard;
    private static DibsLockProvider heardProvider;

    @BeforeAll
    static void openHeard() {
        DibsListener recorder = new DibsListener() {
            @Override
            public void attempt(String lockName) {
                EVENTS.add("attempt " + lockName);
            }

            @Override
            public void skipped(String lockName) {
                EVENTS.add("skipped " + lockName);
            }

            @Override
            public void acquired(String lockName) {
                EVENTS.add("acquired " + lockName);
            }

            @Override
            public void finished(String lockName, Duration duration) {
                EVENTS.add("finished " + lockName);
            }

            @Override
            public void released(String lockName, Duration heldFor) {
                EVENTS.add("released " + lockName);
            }

            @Override
            public void expired(String lockName, Duration heldFor) {
                EVENTS.add("expired " + lockName);
            }

            @Override
            public void releaseFailed(String lockName, Duration heldFor) {
                EVENTS.add("releaseFailed " + lockName);
            }
        };
        heard = Dibs.client(
                DibsOptions.builder().uri(redis.uri()).listener(recorder).build());
        heardProvider = new DibsLockProvider(heard);
    }

    @AfterAll
    static void closeHeard() {
        heard.close();
    }

    private static String name(String base) {
        return uniqueName("shedlock-listener", base);
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(Instant.now(), name, atMost, atLeast);
    }

    /** The events of one lock, in order, without its name. */
    private static List<String> eventsOf(String name) {
        List<String> out = new ArrayList<>();
        synchronized (EVENTS) {
            for (String e : EVENTS) {
                if (e.endsWith(" " + name)) {
                    out.add(e.substring(0, e.length() - name.length() - 1));
                }
            }
        }
        return out;
    }

    @Test
    void aLockIsAttemptAcquiredAndItsUnlockFinishedReleased() throws IOException {
        String name = name("unlock");
        SimpleLock lock =
                heardProvider.lock(config(name, Duration.ofSeconds(30), ZERO)).orElseThrow();
        assertEquals(List.of("attempt", "acquired"), eventsOf(name));
        lock.unlock();
        assertEquals(List.of("attempt", "acquired", "finished", "released"), eventsOf(name));
        assertEquals("0", redis.command("EXISTS", RedisServer.lockKey(name)));
    }

    @Test
    void aHeldLockIsAttemptSkipped() throws IOException {
        String name = name("skip");
        redis.command("SET", RedisServer.lockKey(name), "another-instance", "PX", "10000");
        assertTrue(
                heardProvider.lock(config(name, Duration.ofSeconds(30), ZERO)).isEmpty());
        assertEquals(List.of("attempt", "skipped"), eventsOf(name));
    }

    @Test
    void aLockThatLapsedBeforeItsUnlockIsExpired() throws InterruptedException {
        String name = name("lapsed");
        SimpleLock lock =
                heardProvider.lock(config(name, Duration.ofMillis(100), ZERO)).orElseThrow();
        Thread.sleep(300);
        lock.unlock();
        assertEquals(List.of("attempt", "acquired", "finished", "expired"), eventsOf(name));
    }

    @Test
    void anExtendedLockIsOneLeaseToItsUnlock() {
        String name = name("extended");
        SimpleLock lock =
                heardProvider.lock(config(name, Duration.ofSeconds(30), ZERO)).orElseThrow();
        Optional<SimpleLock> extended = lock.extend(Duration.ofSeconds(60), ZERO);
        assertTrue(extended.isPresent());
        assertEquals(List.of("attempt", "acquired"), eventsOf(name), "an extend is no new lock");
        extended.get().unlock();
        assertEquals(List.of("attempt", "acquired", "finished", "released"), eventsOf(name));
    }

    @Test
    void shedLocksExecutorIsHeardAroundTheTask() {
        // What @SchedulerLock goes through: ShedLock's own executor on the provider.
        String name = name("executor");
        List<String> seenInTask = new ArrayList<>();
        new DefaultLockingTaskExecutor(heardProvider)
                .executeWithLock(
                        (Runnable) () -> seenInTask.addAll(eventsOf(name)), config(name, Duration.ofSeconds(30), ZERO));
        assertEquals(List.of("attempt", "acquired"), seenInTask, "told before the task ran");
        assertEquals(List.of("attempt", "acquired", "finished", "released"), eventsOf(name));
        assertFalse(eventsOf(name).contains("skipped"));
    }
}
