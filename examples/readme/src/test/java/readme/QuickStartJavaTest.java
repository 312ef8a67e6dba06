package readme;

// readme:begin java-quick-start
import dibs.Dibs;
import java.time.Duration;
// readme:end
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.DibsCli;
import dibs.RedisServer;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The README's Java quick start, as written, against redis:6379. */
class QuickStartJavaTest {
    private final AtomicInteger built = new AtomicInteger();

    record Report(int number) {}

    private Report buildReport() {
        return new Report(built.incrementAndGet());
    }

    @Test
    void aPlainCallRunsTheTaskAndRecordsItsRun() throws Exception {
        try (RedisServer redis = Readme.start()) {
            // readme:begin java-quick-start
            boolean ran = Dibs.execute("redis://redis:6379", "nightly-report", 600, 30, () -> buildReport());
            // readme:end
            assertTrue(ran);
            assertEquals(1, built.get());
            assertTrue(!Dibs.execute("redis://redis:6379", "nightly-report", 600, 30, () -> buildReport()),
                    "atLeast (30 s) keeps the lock: a second call is skipped");
            Readme.assertRecorded("nightly-report", "nightly-report");
        }
    }

    @Test
    void aMapConnWithAPasswordReturnsTheTasksValue() throws Exception {
        try (RedisServer redis = Readme.start("--requirepass", "readme-pw-5d3f")) {
            String secret = "readme-pw-5d3f";
            // readme:begin java-quick-start
            Optional<Report> report = Dibs.executeWithResult(
                    Map.of("host", "redis", "port", 6379, "password", secret),
                    "weekly-report", Duration.ofMinutes(10), Duration.ofSeconds(30),
                    () -> buildReport());
            // readme:end
            assertEquals(Optional.of(new Report(1)), report);
            DibsCli check = Readme.check("weekly-report", "redis://:" + secret + "@redis:6379");
            assertEquals(0, check.exitCode(), check.toString());
            assertTrue(!check.output().contains(secret), "no password in the output");
        }
    }
}
