package dibs.spring;

import static dibs.spring.FleetViews.await;
import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * A {@link CatchUp} method without {@link DibsJob} is expected from start-up, its job named at its
 * first attempt, at the edges a review found (each failed before): two beans of one class, each
 * its own job; a job whose period is configured too; a first attempt from a caller that is not
 * {@code @Scheduled}. Against a real redis-server, with Spring's scheduler firing the methods.
 */
class UnnamedCatchUpTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    /** One class, two beans, each its own job; tenant b's every fire throws before its lock. */
    static final class TenantReport {
        final DibsClient dibs;
        final String job;
        final AtomicInteger attempts = new AtomicInteger();

        TenantReport(DibsClient dibs, String job) {
            this.dibs = dibs;
            this.job = job;
        }

        @Scheduled(cron = "* * * * * *")
        @CatchUp(policy = "skip", window = "PT1M")
        void run() {
            if (job.equals("tenant-b-report")) {
                throw new IllegalStateException("tenant b's database is down");
            }
            attempts.incrementAndGet();
            dibs.executeOnce(job, DibsScheduledTick.catchUp(), Duration.ofSeconds(10), t -> {});
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class TenantsApp {
        @Bean
        TenantReport tenantA(DibsClient dibs) {
            return new TenantReport(dibs, "tenant-a-report");
        }

        @Bean
        TenantReport tenantB(DibsClient dibs) {
            return new TenantReport(dibs, "tenant-b-report");
        }
    }

    /** Before: one entry for both beans, taken by tenant a's job; tenant b's was never expected. */
    @Test
    void eachBeanOfTheMethodIsExpectedAndTheOneThatNeverTriedStaysUnnamed() {
        Contexts.runner()
                .withUserConfiguration(TenantsApp.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port(), "dibs.jobs.refresh=100ms")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    TenantReport a = context.getBean("tenantA", TenantReport.class);
                    DibsExpectations expectations = context.getBean(DibsExpectations.class);
                    String method = TenantReport.class.getName() + ".run()";
                    assertThat(expectations.unnamed().get(method)).hasSize(2);
                    await("tenant a tried its lock twice", () -> a.attempts.get() >= 2);
                    assertThat(expectations.all()).containsKey("tenant-a-report");
                    assertThat(expectations.unnamed().get(method)).hasSize(1);
                    @SuppressWarnings("unchecked")
                    Map<String, Object> unnamed = (Map<String, Object>) context.getBean(DibsJobsHealthCheck.class)
                            .check()
                            .details()
                            .get("unnamed");
                    assertThat(unnamed).containsOnlyKeys(method);
                });
    }

    /** A method whose job's period is also configured. */
    static final class Configured {
        final DibsClient dibs;
        final AtomicInteger attempts = new AtomicInteger();

        Configured(DibsClient dibs) {
            this.dibs = dibs;
        }

        @Scheduled(cron = "* * * * * *")
        @CatchUp(policy = "skip", window = "PT1M")
        void report() {
            attempts.incrementAndGet();
            dibs.executeOnce("configured-report", DibsScheduledTick.catchUp(), Duration.ofSeconds(10), t -> {});
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class ConfiguredApp {
        @Bean
        Configured configured(DibsClient dibs) {
            return new Configured(dibs);
        }
    }

    /** Before: the configured job returned before the walk, and the method stayed unnamed. */
    @Test
    void aMethodWhoseJobIsConfiguredIsNamedAtItsFirstAttempt() {
        Contexts.runner()
                .withUserConfiguration(ConfiguredApp.class)
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "dibs.jobs.refresh=100ms",
                        "dibs.jobs.expect-every.configured-report=1h")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Configured c = context.getBean(Configured.class);
                    await("an attempt", () -> c.attempts.get() >= 1);
                    DibsExpectations e = context.getBean(DibsExpectations.class);
                    await("the method named", () -> e.unnamed().isEmpty());
                    assertThat(e.all().get("configured-report").every()).isEqualTo(Duration.ofHours(1));
                    assertThat(context.getBean(DibsJobsHealthCheck.class)
                                    .check()
                                    .details())
                            .doesNotContainKey("unnamed");
                });
    }

    /** A job tried first by a caller that is not {@code @Scheduled}: a "run now" at start-up. */
    static final class RunNow {
        final DibsClient dibs;
        final AtomicInteger attempts = new AtomicInteger();

        RunNow(DibsClient dibs) {
            this.dibs = dibs;
        }

        @Scheduled(cron = "* * * * * *")
        @CatchUp(policy = "skip", window = "PT1M")
        void export() {
            attempts.incrementAndGet();
            dibs.executeOnce("export", DibsScheduledTick.catchUp(), Duration.ofSeconds(10), t -> {});
        }

        void runNow() {
            dibs.executeOnce("export", "manual-" + System.nanoTime(), Duration.ofSeconds(1), () -> {});
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class RunNowApp {
        @Bean
        RunNow runNowBean(DibsClient dibs) {
            return new RunNow(dibs);
        }

        @Bean
        SmartInitializingSingleton runNowAtStart(RunNow r) {
            return r::runNow;
        }
    }

    /** Before: the manual call marked the job looked at, and it was never expected. */
    @Test
    void aJobFirstTriedFromElsewhereIsStillNamedByItsScheduledMethod() {
        Contexts.runner()
                .withUserConfiguration(RunNowApp.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port(), "dibs.jobs.refresh=100ms")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RunNow r = context.getBean(RunNow.class);
                    await("a scheduled attempt", () -> r.attempts.get() >= 1);
                    DibsExpectations e = context.getBean(DibsExpectations.class);
                    await("export expected", () -> e.all().containsKey("export"));
                    assertThat(e.all().get("export").source()).startsWith("@CatchUp of ");
                    assertThat(e.unnamed()).isEqualTo(Map.<String, List<DibsExpectations.Expectation>>of());
                });
    }
}
