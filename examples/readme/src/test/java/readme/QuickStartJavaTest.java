package readme;

// readme:begin java-quick-start
import dibs.Dibs;
import java.time.Duration;
import java.time.LocalDate;
// readme:end
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.DibsCli;
import dibs.testsupport.RedisServer;
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

    private Report syncPartners() {
        return buildReport();
    }

    @Test
    void aTickRunsOnceAndIsRecordedUnderItsJob() throws Exception {
        try (RedisServer redis = Readme.start()) {
            // readme:begin java-quick-start
            boolean ran = Dibs.executeOnce("redis://redis:6379", "nightly-report", LocalDate.now().toString(),
                    Duration.ofHours(1), () -> buildReport());
            // readme:end
            assertTrue(ran);
            assertEquals(1, built.get());
            assertTrue(!Dibs.executeOnce("redis://redis:6379", "nightly-report", LocalDate.now().toString(),
                    Duration.ofHours(1), () -> buildReport()), "the tick is done: a second call is skipped");
            assertEquals(1, built.get());
            Readme.assertRecorded("nightly-report", "nightly-report@" + LocalDate.now());
        }
    }

    @Test
    void aMapConnWithAPasswordReturnsTheTasksValue() throws Exception {
        try (RedisServer redis = Readme.start("--requirepass", "readme-pw-5d3f")) {
            String secret = "readme-pw-5d3f";
            // readme:begin java-quick-start
            Optional<Report> report = Dibs.executeWithResult(
                    Map.of("host", "redis", "port", 6379, "password", secret),
                    "partner-sync", Duration.ofMinutes(10), Duration.ofSeconds(30),
                    () -> syncPartners());
            // readme:end
            assertEquals(Optional.of(new Report(1)), report);
            DibsCli check = Readme.check("partner-sync", "redis://:" + secret + "@redis:6379");
            assertEquals(0, check.exitCode(), check.toString());
            assertTrue(!check.output().contains(secret), "no password in the output");
        }
    }
}
