package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;

/**
 * Issue 42 (5): {@code window = "P30D"}, the documented maximum, after a month of misses. The
 * job's history holds one run from 31 days ago and none since, so every tick of a 6-hourly cron
 * within the window was missed, down to the oldest; that one used to be a few ms (or hours, for
 * a fire without a recorded trigger) past the core's 30-day limit when it was looked at, and the
 * whole fire threw {@code DibsArgumentException}, the tick due now included. The window is now
 * clamped inside the limit: the newest missed tick and the tick due now run.
 */
class CatchUpWindowTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    static final String JOB = "month-of-misses";

    static final class Job {
        final DibsClient dibs;
        final List<String> ran = new CopyOnWriteArrayList<>();

        Job(DibsClient dibs) {
            this.dibs = dibs;
        }

        @Scheduled(cron = "0 0 */6 * * *", zone = "UTC")
        @CatchUp(policy = "latest", window = "P30D")
        void everySixHours() {
            dibs.executeOnce(JOB, DibsScheduledTick.catchUp(), Duration.ofMinutes(5), ran::add);
        }
    }

    @Test
    void aThirtyDayWindowAfterAMonthOfMissesRunsTheLatestMissedTickAndTheOneDueNow() throws Exception {
        // The one run in the job's history, 31 days ago (a record as the release writes it).
        long old = Instant.now().minus(Duration.ofDays(31)).toEpochMilli();
        redis.command(
                "XADD",
                "dibs:\u001f{history}:" + JOB,
                old + "-0",
                "run",
                "ok;10;0;1;" + old + ";1;test-host;;;" + JOB + "@2026-01-01T00:00");
        Contexts.runner()
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Job job = new Job(context.getBean(DibsClient.class));
                    job.everySixHours(); // a fire no trigger recorded: the tick due is the latest

                    CronExpression cron = CronExpression.parse("0 0 */6 * * *");
                    ZonedDateTime due = DibsScheduledTick.latestFire(cron, ZonedDateTime.now(ZoneOffset.UTC))
                            .orElseThrow();
                    ZonedDateTime missed = due.minusHours(6);
                    assertThat(job.ran).containsExactly(DibsScheduledTick.name(missed), DibsScheduledTick.name(due));
                });
    }
}
