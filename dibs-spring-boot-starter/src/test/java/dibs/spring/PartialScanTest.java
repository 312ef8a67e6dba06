package dibs.spring;

import static dibs.spring.FleetViews.await;
import static dibs.spring.FleetViews.check;
import static dibs.spring.FleetViews.job;
import static dibs.spring.FleetViews.view;
import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A scan for running locks cut short (100,000 other keys, {@code dibs.jobs.scan-budget=1ms})
 * settles no rule that a run it missed could change: a late job with a grace after start, and a
 * job with a maximum duration and nothing against it, are {@code unknown} in the health, the
 * gauges and {@code /actuator/dibs}, as {@code dibs check} exits 3 with {@code --budget 1ms}.
 * Before, they were overdue (OUT_OF_SERVICE) and fine (UP). A bad budget stops the start, naming
 * the property. Against a real redis-server of its own.
 */
class PartialScanTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    @Test
    void aRuleThatAMissedRunCouldChangeIsUnknown() throws Exception {
        redis.command("EVAL", "for i = 1, 100000 do redis.call('SET', 'cache:' .. i, 'x') end", "0");
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "dibs.jobs.refresh=100ms",
                        "dibs.jobs.scan-budget=1ms",
                        "dibs.jobs.grace=50ms",
                        "dibs.jobs.expect-every.sync=100ms",
                        "dibs.jobs.grace-after-start.sync=1h",
                        "dibs.jobs.max-duration.backup=1h")
                .run(context -> {
                    DibsClient dibs = context.getBean(DibsClient.class);
                    SimpleMeterRegistry meters = new SimpleMeterRegistry();
                    context.getBean(DibsJobsMeters.class).bindTo(meters);
                    assertThat(dibs.execute("backup", 10, 0, () -> {})).isTrue();

                    await(
                            "sync and backup are unknown",
                            () -> job(context, "sync") != null
                                    && job(context, "sync").unknown().isPresent()
                                    && job(context, "backup") != null
                                    && job(context, "backup").unknown().isPresent());
                    DibsJobs.Job sync = job(context, "sync");
                    assertThat(sync.overdue()).as("%s", sync).isFalse();
                    assertThat(sync.unknown().orElseThrow())
                            .contains("started within its grace after start may be missing")
                            .contains("partial: scanned about ");
                    DibsJobs.Job backup = job(context, "backup");
                    assertThat(backup.tooLong()).isFalse();
                    assertThat(backup.unknown().orElseThrow())
                            .contains("longer than its maximum duration, but one may be missing");
                    for (String name : List.of("sync", "backup")) {
                        assertThat(meters.get("dibs.job.unknown")
                                        .tag("lock", name)
                                        .gauge()
                                        .value())
                                .isEqualTo(1);
                    }
                    assertThat(meters.get("dibs.job.overdue")
                                    .tag("lock", "sync")
                                    .gauge()
                                    .value())
                            .isZero();
                    DibsJobsHealthCheck.Result result =
                            context.getBean(DibsJobsHealthCheck.class).check();
                    assertThat(result.status()).isEqualTo("UNKNOWN");
                    assertThat(result.details().get("unknown"))
                            .asInstanceOf(InstanceOfAssertFactories.LIST)
                            .containsExactlyInAnyOrder("sync", "backup");
                    assertThat(view(context, "sync").unknown()).contains("may be missing");

                    assertThat(check(
                                    redis,
                                    "check",
                                    "sync",
                                    "--within",
                                    "1s",
                                    "--grace-after-start",
                                    "1h",
                                    "--budget",
                                    "1ms"))
                            .isEqualTo(3);
                    assertThat(check(
                                    redis,
                                    "check",
                                    "backup",
                                    "--within",
                                    "1h",
                                    "--max-duration",
                                    "1h",
                                    "--budget",
                                    "1ms"))
                            .isEqualTo(3);
                    // A complete scan settles both, in the CLI as in the starter's rules.
                    assertThat(check(redis, "check", "sync", "--within", "1s", "--grace-after-start", "1h"))
                            .isEqualTo(1);
                    assertThat(check(redis, "check", "backup", "--within", "1h", "--max-duration", "1h"))
                            .isZero();
                    assertThat(dibs.running("backup", java.time.Duration.ofSeconds(30))
                                    .complete())
                            .isTrue();
                });
    }

    @Test
    void aBadScanBudgetStopsTheStartNamingTheProperty() {
        Contexts.runner()
                .withPropertyValues("spring.data.redis.port=" + redis.port(), "dibs.jobs.scan-budget=0s")
                .run(context -> assertThat(Contexts.startupException(context.getStartupFailure())
                                .getMessage())
                        .contains("dibs.jobs.scan-budget")
                        .contains("more than 0"));
    }
}
