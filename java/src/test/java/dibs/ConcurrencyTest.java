package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.TestSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Many threads of one process on one lock: the critical sections never overlap. */
@Timeout(120)
class ConcurrencyTest extends RedisTestBase {
    private static final int THREADS = 32;
    /** Each thread keeps trying until the threads together have won this often. */
    private static final int TARGET_WINS = 300;

    /** Deliberately not atomic: lost updates would show an overlap. */
    private int counter;

    @Test
    void thirtyTwoThreadsOnOneLockNeverOverlap() throws Exception {
        String name = TestSupport.uniqueName("threads");
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger wins = new AtomicInteger();
        AtomicInteger attempts = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                futures.add(pool.submit(() -> {
                    go.await();
                    long deadline = System.nanoTime() + 60_000_000_000L;
                    while (wins.get() < TARGET_WINS && System.nanoTime() < deadline) {
                        attempts.incrementAndGet();
                        boolean won = Dibs.execute(redis.uri(), name, 10, 0, () -> {
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            int read = counter;
                            TestSupport.sleep(2);
                            counter = read + 1;
                            inside.decrementAndGet();
                        });
                        if (won) {
                            wins.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.println(THREADS + " threads: " + attempts.get() + " attempts, " + wins.get() + " wins");
        assertEquals(0, overlaps.get(), "critical sections overlapped");
        assertTrue(wins.get() >= TARGET_WINS, "wins: " + wins.get());
        assertEquals(wins.get(), counter, "every win counted exactly once");
    }
}
