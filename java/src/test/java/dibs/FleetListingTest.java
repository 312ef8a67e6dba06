package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 29 (3): on a Redis whose keyspace is mostly other keys (a cache sharing the server:
 * 1,000,000 of them), {@link DibsClient#locks} and {@link DibsClient#jobs} find every held lock
 * and every job, and say that their scan was complete. Before, they stopped after 100
 * {@code SCAN} calls: {@code locks} found 0 of 5 held locks, {@code jobs} 1 of 5 jobs.
 */
@Timeout(120)
class FleetListingTest extends RedisTestBase {
    @Test
    void everyHeldLockAndEveryJobIsFoundAmongAMillionOtherKeys() throws Exception {
        for (int batch = 0; batch < 10; batch++) {
            redis.command(
                    "EVAL",
                    "for i = 1, 100000 do redis.call('SET', 'cache:' .. ARGV[1] .. ':' .. i, 'x') end",
                    "0",
                    Integer.toString(batch));
        }
        try (DibsClient client = Dibs.client(local().build())) {
            List<String> jobs = new ArrayList<>();
            for (int i = 1; i <= 5; i++) {
                String job = "listed-job-" + i + "-" + ProcessHandle.current().pid();
                assertTrue(client.execute(job, Duration.ofSeconds(10), Duration.ZERO, () -> {}));
                jobs.add(job);
            }
            List<DibsLease> held = new ArrayList<>();
            for (int i = 1; i <= 5; i++) {
                held.add(client.tryLock("listed-lock-" + i, Duration.ofMinutes(1), Duration.ZERO)
                        .orElseThrow());
            }
            DibsListing<HeldLock> locks = client.locks("listed-lock-*", 100);
            assertTrue(locks.complete(), locks.partialNote());
            assertEquals(5, locks.size(), locks.toString());
            assertEquals(
                    1_000_012,
                    locks.keys(),
                    "the cache, 5 locks, 5 jobs' streams, the index of jobs and its jobs of one run");
            DibsListing<DibsJob> found = client.jobs(100);
            assertTrue(found.complete(), found.partialNote());
            assertEquals(
                    jobs,
                    found.stream()
                            .map(DibsJob::name)
                            .filter(jobs::contains)
                            .sorted()
                            .collect(Collectors.toList()));
            assertFalse(found.truncated());
            held.forEach(DibsLease::release);
        }
    }
}
