package dibs.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dibs.Dibs;
import dibs.DibsClient;
import dibs.DibsException;
import dibs.DibsOptions;
import dibs.testsupport.RedisServer;
import dibs.testsupport.VirtualThreads;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * Issue 17 (4): ShedLock jobs on virtual threads, with Redis frozen. Their unlocks wait for the
 * read timeout; on Java 21-23 a monitor held across that wait would pin the carrier, and 4 of
 * them would starve every other virtual thread on 2 carriers. The provider's lock and the lease
 * it holds are ReentrantLocks, so an unrelated virtual ticker keeps ticking. Runs on JDK 21 (the
 * jdk21 execution, 2 carriers) and is skipped on 17.
 */
@EnabledForJreRange(min = JRE.JAVA_21)
class DibsLockProviderVirtualThreadTest {
    @Test
    void unlocksWaitingOnAFrozenRedisParkInsteadOfStarvingTheOthers() throws Exception {
        try (RedisServer frozen = RedisServer.launch();
                DibsClient client = Dibs.client(DibsOptions.builder()
                        .uri(frozen.uri())
                        .connectTimeout(Duration.ofMillis(1500))
                        .readTimeout(Duration.ofMillis(1500))
                        .build())) {
            DibsLockProvider provider = new DibsLockProvider(client);
            List<SimpleLock> locks = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String name = "vt-frozen-p" + ProcessHandle.current().pid() + "-" + i;
                locks.add(
                        provider.lock(new LockConfiguration(Instant.now(), name, Duration.ofSeconds(30), Duration.ZERO))
                                .orElseThrow());
            }
            ConcurrentLinkedQueue<String> outcomes = new ConcurrentLinkedQueue<>();
            List<Runnable> jobs = new ArrayList<>();
            for (SimpleLock lock : locks) {
                jobs.add(() -> {
                    try {
                        lock.extend(Duration.ofSeconds(30), Duration.ZERO);
                        outcomes.add("extended");
                    } catch (DibsException e) {
                        lock.unlock(); // still valid after a failed extend: release it
                        outcomes.add("unlocked");
                    }
                });
            }
            frozen.freeze();
            long gapMs = VirtualThreads.largestTickerGapMs("4 virtual ShedLock jobs extending and unlocking", jobs);
            frozen.thaw();
            assertEquals(List.of("unlocked", "unlocked", "unlocked", "unlocked"), new ArrayList<>(outcomes));
            VirtualThreads.assertTickerKeptTicking(gapMs);
        }
    }
}
