package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.TestSupport;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The trap of issue 18: a name made per tick, {@code atLeast} 0 and a quick task let an instance
 * whose scheduler fires a little later run the same tick again. dibs warns once per job, naming
 * the fix; not for {@code executeOnce}, a name without a tick, or an {@code atLeast} that covers it.
 */
class PerTickAdviceTest extends RedisTestBase {
    @Test
    void aPerTickNameReleasedAtOnceIsWarnedAboutOncePerJobWithTheFix() throws Exception {
        String job = "direct" + ProcessHandle.current().pid(); // unique in this JVM, no digits run of 8
        try (DibsClient client = Dibs.client(local().build());
                TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            assertTrue(client.execute(job + "-2026-12-02T10:00:00", Duration.ofSeconds(10), Duration.ZERO, () -> {}));
            assertTrue(client.execute(job + "-2026-12-02T10:00:02", Duration.ofSeconds(10), Duration.ZERO, () -> {}));
            List<String> warnings = log.warningsAbout(job);
            assertEquals(1, warnings.size(), "once per job: " + log.messages());
            String w = warnings.get(0);
            assertTrue(w.contains("executeOnce(\"" + job + "\", \"2026-12-02T10:00:00\", atMost, task)"), w);

            // None where the call cannot run a tick twice, or names no tick.
            String other = "report" + ProcessHandle.current().pid();
            assertTrue(client.execute(other + "-2026-12-02", Duration.ofSeconds(10), Duration.ofSeconds(2), () -> {}));
            assertTrue(client.executeOnce(other, "2026-12-03", Duration.ofSeconds(10), () -> {}));
            assertTrue(client.execute(other + "-shard-7", Duration.ofSeconds(10), Duration.ZERO, () -> {}));
            assertEquals(List.of(), log.warningsAbout(other), "no advice for these");
        }
    }
}
