package dibs.spring;

import static dibs.spring.FleetViews.await;
import static dibs.spring.FleetViews.check;
import static dibs.spring.FleetViews.job;
import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 43: a service that locks a name per tenant, each run more than once, and more of them
 * than the history keeps (about 1,000 jobs), drops the runs of the job recorded least recently:
 * here an expected job that ran once, then stopped. Its proof gone, the job is not quietly fine:
 * it is {@code unknown}, saying its own runs were dropped, and the {@code dibsJobs} health says
 * {@code UNKNOWN} (it said UP before), as {@code dibs check} exits 3. A flood of one-off names
 * (a lock per order) leaves its proof alone. Against a real redis-server of its own.
 */
class EvictedHistoryTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    @Test
    void anExpectedJobWhoseRunsWereDroppedIsUnknownAndItsHealthSaysSo() throws Exception {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "dibs.jobs.refresh=100ms",
                        "dibs.jobs.grace=100ms",
                        "dibs.jobs.expect-every.export=1s")
                .run(context -> {
                    DibsClient dibs = context.getBean(DibsClient.class);
                    assertThat(dibs.execute("export", 10, 0, () -> {})).isTrue();
                    assertThat(dibs.execute("export", 10, 0, () -> {})).isTrue();
                    for (int n = 0; n < 1100; n++) {
                        dibs.execute("order-" + n, 10, 0, () -> {});
                    }
                    assertThat(dibs.history("export", 5))
                            .as("one-off names leave it")
                            .hasSize(2);
                    for (int n = 0; n < 1100; n++) {
                        dibs.execute("tenant-" + n + "-sync", 10, 0, () -> {});
                        dibs.execute("tenant-" + n + "-sync", 10, 0, () -> {});
                    }
                    assertThat(dibs.history("export", 5))
                            .as("dropped by jobs that recur")
                            .isEmpty();
                    assertThat(dibs.history("export", 5).ownRunsEvictedAt()).isPresent();

                    await(
                            "export is unknown",
                            () -> job(context, "export") != null
                                    && job(context, "export").unknown().isPresent());
                    DibsJobs.Job export = job(context, "export");
                    assertThat(export.overdue()).isFalse();
                    assertThat(export.unknown().orElseThrow()).contains("its own runs were dropped from the history");
                    DibsJobsHealthCheck.Result health =
                            context.getBean(DibsJobsHealthCheck.class).check();
                    assertThat(health.status()).isEqualTo("UNKNOWN");
                    assertThat(String.valueOf(health.details().get("unknown"))).contains("export");
                    assertThat(check(redis, "check", "export", "--within", "1s"))
                            .isEqualTo(3);
                });
    }
}
