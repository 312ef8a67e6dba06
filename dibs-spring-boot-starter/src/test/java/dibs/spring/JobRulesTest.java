package dibs.spring;

import static dibs.spring.FleetViews.await;
import static dibs.spring.FleetViews.job;
import static dibs.spring.FleetViews.view;
import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.DibsLease;
import dibs.testsupport.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The dead-man's switch's further rules in the starter (issue 33, 2), each with its signal: the
 * {@code dibsJobs} health and its details, the gauge, and the job in {@code /actuator/dibs}. A
 * success shorter than {@code dibs.jobs.min-duration.<job>} is suspect; a run holding its lock
 * longer than {@code max-duration} runs too long; a late job's run in progress excuses it only
 * for {@code grace-after-start} after its start.
 */
class JobRulesTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    private static double gauge(SimpleMeterRegistry meters, String gauge, String job) {
        return meters.get(gauge).tag("lock", job).gauge().value();
    }

    @Test
    void eachRuleHasItsHealthGaugeAndEndpointSignal() {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "dibs.jobs.refresh=100ms",
                        "dibs.jobs.min-duration.export=300ms",
                        "dibs.jobs.max-duration.backup=200ms",
                        "dibs.jobs.expect-every.sync-a=100ms",
                        "dibs.jobs.expect-every.sync-b=100ms",
                        "dibs.jobs.grace=50ms",
                        "dibs.jobs.grace-after-start.sync-a=1h",
                        "dibs.jobs.grace-after-start.sync-b=1ms")
                .run(context -> {
                    DibsClient dibs = context.getBean(DibsClient.class);
                    DibsJobsHealthCheck health = context.getBean(DibsJobsHealthCheck.class);
                    SimpleMeterRegistry meters = new SimpleMeterRegistry();

                    // Suspect: a success of a few ms, below its 300 ms minimum.
                    assertThat(dibs.execute("export", 10, 0, () -> {})).isTrue();
                    await(
                            "export is suspect",
                            () -> job(context, "export") != null
                                    && job(context, "export").suspect());
                    context.getBean(DibsJobsMeters.class).bindTo(meters);
                    assertThat(gauge(meters, "dibs.job.suspect", "export")).isEqualTo(1);
                    DibsJobsHealthCheck.Result result = health.check();
                    assertThat(result.status()).isEqualTo("OUT_OF_SERVICE");
                    assertThat(result.details().get("suspect")).isEqualTo(List.of("export"));
                    assertThat(view(context, "export").suspect()).isTrue();
                    // A run long enough clears it.
                    assertThat(dibs.execute("export", 10, 0, () -> sleep(350))).isTrue();
                    await("export is trusted", () -> !job(context, "export").suspect());
                    assertThat(gauge(meters, "dibs.job.suspect", "export")).isZero();

                    // Too long: a run holding backup's lock past its 200 ms maximum.
                    DibsLease backup = dibs.tryLock("backup", Duration.ofMinutes(1), Duration.ZERO)
                            .orElseThrow();
                    await(
                            "backup runs too long",
                            () -> job(context, "backup") != null
                                    && job(context, "backup").tooLong());
                    assertThat(gauge(meters, "dibs.job.running.too.long", "backup"))
                            .isEqualTo(1);
                    result = health.check();
                    assertThat(result.status()).isEqualTo("OUT_OF_SERVICE");
                    assertThat(result.details().get("runningTooLong")).isEqualTo(List.of("backup"));
                    assertThat(view(context, "backup").runningTooLong()).isTrue();
                    backup.close();
                    await("backup's run ended", () -> !job(context, "backup").tooLong());
                    assertThat(gauge(meters, "dibs.job.running.too.long", "backup"))
                            .isZero();

                    // A grace after start: both jobs are late (never succeeded, expected every
                    // 100 ms) and a tick of each runs now; sync-a's run is within its hour, so
                    // sync-a is running, not overdue; sync-b's 1 ms are over, so sync-b is.
                    DibsLease a = dibs.tryLock("sync-a@2026-12-06T02:00", Duration.ofMinutes(1), Duration.ZERO)
                            .orElseThrow();
                    DibsLease b = dibs.tryLock("sync-b@2026-12-06T02:00", Duration.ofMinutes(1), Duration.ZERO)
                            .orElseThrow();
                    await(
                            "a read that sees both runs",
                            () -> job(context, "sync-a") != null
                                    && job(context, "sync-a").running().size() == 1
                                    && job(context, "sync-b").running().size() == 1);
                    assertThat(job(context, "sync-b").overdue()).isTrue();
                    assertThat(job(context, "sync-a").overdue())
                            .as("%s", job(context, "sync-a"))
                            .isFalse();
                    assertThat(health.check().details().get("overdue")).isEqualTo(List.of("sync-b"));
                    a.close();
                    b.close();
                });
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
