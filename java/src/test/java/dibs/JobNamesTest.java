package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The job comes back with the acquire (issue 45, 3): a listener that asks {@link Dibs#jobOf}
 * during a call (as the starter's meters and expectations do) gets the job the core computed for
 * the lock, and Rust is never asked again for it, per-tick names included; a name outside a
 * call is asked of Rust, with no cache in Java.
 */
class JobNamesTest extends RedisTestBase {
    @Test
    void aListenerHearsTheJobOfEachCallWithoutAskingRust() throws Exception {
        List<String> jobs = new CopyOnWriteArrayList<>();
        DibsListener listener = new DibsListener() {
            @Override
            public void acquired(String lockName) {
                jobs.add(Dibs.jobOf(lockName));
            }

            @Override
            public void skipped(String lockName) {
                jobs.add(Dibs.jobOf(lockName));
            }

            @Override
            public void released(String lockName, Duration heldFor) {
                jobs.add(Dibs.jobOf(lockName));
            }
        };
        try (DibsClient client = Dibs.client(local().listener(listener).build())) {
            long asked = JobNames.ASKED.sum();
            for (int day = 1; day <= 28; day++) {
                String tick = String.format("report-2026-12-%02d", day);
                assertTrue(client.execute(tick, Duration.ofSeconds(10), Duration.ZERO, () -> {}));
            }
            try (DibsLease held = client.tryLock("shard-7", Duration.ofMinutes(1), Duration.ZERO)
                    .orElseThrow()) {
                assertTrue(client.tryLock("shard-7", Duration.ofMinutes(1), Duration.ZERO)
                        .isEmpty());
            }
            assertEquals(0, JobNames.ASKED.sum() - asked, "Rust was asked for a job the acquire told");
            assertEquals(28 * 2 + 3, jobs.size(), jobs.toString());
            assertEquals(28 * 2, jobs.stream().filter("report"::equals).count(), jobs.toString());
            assertEquals(3, jobs.stream().filter("shard-7"::equals).count(), jobs.toString());
            // Outside a call: asked of Rust, every time (no cache).
            assertEquals("backup", Dibs.jobOf("backup-2026-12-01"));
            assertEquals("backup", Dibs.jobOf("backup-2026-12-02"));
            assertEquals(2, JobNames.ASKED.sum() - asked);
        }
    }
}
