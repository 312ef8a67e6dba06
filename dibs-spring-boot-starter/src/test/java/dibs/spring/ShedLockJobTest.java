package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dibs.DibsClient;
import dibs.DibsRun;
import dibs.shedlock.DibsLockProvider;
import dibs.testsupport.DibsCli;
import dibs.testsupport.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A ShedLock {@code @SchedulerLock} job on {@link DibsLockProvider} over the auto-configured
 * client shows up in the meters and in /actuator/dibs like any other locked call, against a real
 * redis-server. The job is called directly, as a scheduler would: ShedLock's proxy locks it.
 */
class ShedLockJobTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    static final String LOCK = "nightly-report";
    static final String FLAKY = "flaky-report";

    /**
     * The job: its first run blocks until released, so that the test sees it running. The bean
     * is ShedLock's proxy, so the test reads its state through methods, never fields.
     */
    public static class NightlyReport {
        private final CountDownLatch running = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private final AtomicInteger runs = new AtomicInteger();

        @SchedulerLock(name = LOCK, lockAtMostFor = "PT30S", lockAtLeastFor = "PT30S")
        public void run() {
            runs.incrementAndGet();
            running.countDown();
            DibsMetricsTest.await(release);
        }

        public boolean awaitRunning() throws InterruptedException {
            return running.await(10, TimeUnit.SECONDS);
        }

        public void release() {
            release.countDown();
        }

        public int runs() {
            return runs.get();
        }
    }

    /** A job that fails every night: ShedLock's proxy locks it, and it throws. */
    public static class FlakyReport {
        @SchedulerLock(name = FLAKY, lockAtMostFor = "PT30S")
        public void run() {
            throw new IllegalStateException("the report's database is down");
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
    static class Jobs {
        @Bean
        FlakyReport flakyReport() {
            return new FlakyReport();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        LockProvider lockProvider(DibsClient client) {
            return new DibsLockProvider(client);
        }

        @Bean
        NightlyReport nightlyReport() {
            return new NightlyReport();
        }
    }

    private static double count(MeterRegistry r, String name) {
        var counter = r.find(name).tag("lock", LOCK).counter();
        return counter == null ? 0 : counter.count();
    }

    /**
     * Issue 29 (2): a {@code @SchedulerLock} job that throws is recorded as failed, so that
     * {@code dibs check} flags it. Before, 3 runs that each threw were 3 successes in the history,
     * and {@code dibs check} exited 0.
     */
    @Test
    void aSchedulerLockJobThatThrowsIsRecordedAsFailedAndDibsCheckFlagsIt() {
        Contexts.runner()
                .withUserConfiguration(Jobs.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    FlakyReport job = context.getBean(FlakyReport.class);
                    for (int i = 0; i < 3; i++) {
                        assertThatThrownBy(job::run)
                                .isInstanceOf(IllegalStateException.class)
                                .hasMessage("the report's database is down");
                    }
                    List<DibsRun> runs = context.getBean(DibsClient.class).history(FLAKY, 10);
                    assertThat(runs).hasSize(3).noneMatch(DibsRun::succeeded).allMatch(DibsRun::ownedToTheEnd);
                    DibsCli check = DibsCli.run(redis.uri(), "check", FLAKY, "--within", "1h");
                    assertThat(check.exitCode()).as(check.toString()).isEqualTo(1);
                    assertThat(check.output()).contains("overdue: job 'flaky-report'", "task failed");
                    MeterRegistry r = context.getBean(MeterRegistry.class);
                    assertThat(r.get("dibs.lock.acquired")
                                    .tag("lock", FLAKY)
                                    .counter()
                                    .count())
                            .isEqualTo(3);
                });
    }

    @Test
    void aSchedulerLockJobIsInTheMetersAndTheEndpoint() {
        Contexts.runner()
                .withUserConfiguration(Jobs.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    NightlyReport job = context.getBean(NightlyReport.class);
                    MeterRegistry r = context.getBean(MeterRegistry.class);
                    DibsEndpoint endpoint = context.getBean(DibsEndpoint.class);
                    Thread scheduler = new Thread(job::run);
                    scheduler.start();
                    assertThat(job.awaitRunning()).isTrue();

                    DibsEndpoint.Locks held = endpoint.locks();
                    double active =
                            r.get("dibs.lock.active").tag("lock", LOCK).gauge().value();
                    job.release();
                    scheduler.join(10_000);
                    // Kept for lockAtLeastFor: the next run is skipped, and counted so.
                    job.run();

                    assertThat(job.runs()).isEqualTo(1);
                    assertThat(held.count()).isEqualTo(1);
                    assertThat(held.locks().get(0).name()).isEqualTo(LOCK);
                    assertThat(held.locks().get(0).remainingTtlMs()).isBetween(1L, 30_000L);
                    assertThat(active).isEqualTo(1.0);
                    assertThat(endpoint.locks().count()).isZero();
                    assertThat(count(r, "dibs.lock.attempts")).isEqualTo(2);
                    assertThat(count(r, "dibs.lock.acquired")).isEqualTo(1);
                    assertThat(count(r, "dibs.lock.skipped")).isEqualTo(1);
                    assertThat(r.get("dibs.lock.execution")
                                    .tag("lock", LOCK)
                                    .timer()
                                    .count())
                            .isEqualTo(1);
                });
    }
}
