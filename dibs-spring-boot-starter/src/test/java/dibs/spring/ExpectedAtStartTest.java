package dibs.spring;

import static dibs.spring.FleetViews.await;
import static dibs.spring.FleetViews.job;
import static dibs.spring.FleetViews.view;
import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * A job named up front ({@link DibsJob}) is expected from start-up on: one whose every fire throws
 * before its lock is tried turns overdue after its period and grace, in the {@code dibsJobs}
 * health, the gauge and {@code /actuator/dibs}. Before, the starter learned a job at its first
 * attempt, and such a job was never expected: UP, no gauge. Against a real redis-server, with
 * Spring's scheduler firing the methods.
 */
class ExpectedAtStartTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    /** A billing job whose every fire throws before its lock: its gateway is not configured. */
    static final class Billing {
        final DibsClient dibs;
        final AtomicInteger fires = new AtomicInteger();
        final AtomicInteger ran = new AtomicInteger();
        volatile String gateway; // never set: a property the deploy lost

        Billing(DibsClient dibs) {
            this.dibs = dibs;
        }

        @Scheduled(fixedRate = 1000)
        @DibsJob("charge-cards")
        void chargeCards() {
            fires.incrementAndGet();
            if (gateway == null) {
                throw new IllegalStateException("no payment gateway configured");
            }
            dibs.execute("charge-cards", 10, 0, ran::incrementAndGet);
        }

        @Scheduled(cron = "* * * * * *")
        @CatchUp(policy = "latest", window = "PT1M")
        @DibsJob("${billing.invoice-job}")
        void sendInvoices() {
            fires.incrementAndGet();
            if (gateway == null) {
                throw new IllegalStateException("no payment gateway configured");
            }
            dibs.executeOnce(
                    "send-invoices", DibsScheduledTick.catchUp(), Duration.ofSeconds(10), t -> ran.incrementAndGet());
        }
    }

    /**
     * Two @CatchUp jobs that do not name themselves: one fires once a year, so it never tries its
     * lock in a test; the other fires every second, and its every run fails.
     */
    static final class Reports {
        final DibsClient dibs;
        final java.util.concurrent.atomic.AtomicReference<java.time.Instant> firstAttempt =
                new java.util.concurrent.atomic.AtomicReference<>();

        Reports(DibsClient dibs) {
            this.dibs = dibs;
        }

        @Scheduled(cron = "0 0 0 1 1 *")
        @CatchUp(policy = "skip", window = "PT1M")
        void yearly() {
            dibs.executeOnce("yearly-report", DibsScheduledTick.catchUp(), Duration.ofSeconds(10), t -> {});
        }

        @Scheduled(cron = "* * * * * *")
        @CatchUp(policy = "skip", window = "PT1M")
        void everySecond() {
            firstAttempt.compareAndSet(null, java.time.Instant.now());
            dibs.executeOnce("second-report", DibsScheduledTick.catchUp(), Duration.ofSeconds(10), t -> {
                throw new IllegalStateException("the report's database is down");
            });
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class ReportsApp {
        @Bean
        Reports reports(DibsClient dibs) {
            return new Reports(dibs);
        }
    }

    /**
     * A @CatchUp job without @DibsJob is expected from start-up: until its first attempt, the
     * health lists its method as unnamed (before: nothing); once it tries its lock, its job is
     * counted overdue from start-up, not from that attempt (before: from the attempt).
     */
    @Test
    @SuppressWarnings("unchecked")
    void aCatchUpJobWithoutItsNameIsExpectedFromStartUp() {
        Contexts.runner()
                .withUserConfiguration(ReportsApp.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port(), "dibs.jobs.refresh=100ms")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Reports reports = context.getBean(Reports.class);
                    DibsJobsHealthCheck health = context.getBean(DibsJobsHealthCheck.class);
                    String yearly = Reports.class.getName() + ".yearly()";
                    String everySecond = Reports.class.getName() + ".everySecond()";
                    await(
                            "second-report is overdue",
                            () -> job(context, "second-report") != null
                                    && job(context, "second-report").overdue());
                    DibsExpectations.Expectation expected =
                            context.getBean(DibsExpectations.class).all().get("second-report");
                    assertThat(expected.since()).isBefore(reports.firstAttempt.get());
                    assertThat(expected.source()).isEqualTo("@CatchUp of " + everySecond);
                    Map<String, Object> unnamed =
                            (Map<String, Object>) health.check().details().get("unnamed");
                    assertThat(unnamed).containsOnlyKeys(yearly);
                    assertThat((String) unnamed.get(yearly))
                            .contains("expected every PT87", "@DibsJob"); // a year, or a leap year
                    assertThat(health.check().status()).isEqualTo("OUT_OF_SERVICE");
                });
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class BillingApp {
        @Bean
        Billing billing(DibsClient dibs) {
            return new Billing(dibs);
        }
    }

    /** A fixedRate job: expected every 1 s from start-up, overdue 1.5 s later (half a period of grace). */
    @Test
    void aFixedRateJobThatNeverTriesItsLockIsOverdue() throws Exception {
        overdueEverywhere("charge-cards", Duration.ofSeconds(1));
    }

    /** A @CatchUp cron job, its name a placeholder: the same, every 1 s of its cron. */
    @Test
    void aCatchUpJobThatNeverTriesItsLockIsOverdue() throws Exception {
        overdueEverywhere("send-invoices", Duration.ofSeconds(1));
    }

    private static void overdueEverywhere(String name, Duration period) {
        Contexts.runner()
                .withUserConfiguration(BillingApp.class)
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "dibs.jobs.refresh=100ms",
                        "billing.invoice-job=send-invoices")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    SimpleMeterRegistry meters = new SimpleMeterRegistry();
                    context.getBean(DibsJobsMeters.class).bindTo(meters);
                    Billing billing = context.getBean(Billing.class);
                    // Measured: overdue 1.4-1.5 s after the context started here (1 s + 0.5 s of grace);
                    // FleetViews.await allows 10 s, over 6 times that.
                    await(
                            name + " is overdue",
                            () -> job(context, name) != null
                                    && job(context, name).overdue());
                    assertThat(billing.fires.get())
                            .as("fires, each of which threw")
                            .isPositive();
                    assertThat(billing.ran.get()).isZero();
                    assertThat(job(context, name).expected().every()).isEqualTo(period);
                    assertOverdue(context, meters, name, period);
                });
    }

    /** Overdue in every signal a user reads: the health, the gauge, {@code /actuator/dibs}. */
    @SuppressWarnings("unchecked")
    static void assertOverdue(ApplicationContext context, SimpleMeterRegistry meters, String name, Duration period) {
        DibsJobsHealthCheck.Result health =
                context.getBean(DibsJobsHealthCheck.class).check();
        assertThat(health.status()).isEqualTo("OUT_OF_SERVICE");
        assertThat(health.details().get("overdue"))
                .asInstanceOf(InstanceOfAssertFactories.LIST)
                .contains(name);
        Map<String, Object> job =
                (Map<String, Object>) ((Map<String, Object>) health.details().get("jobs")).get(name);
        assertThat(job).containsEntry("overdue", true).containsEntry("expectEvery", period.toString());
        meters.getMeters(); // the gauges are registered at a read of the view
        assertThat(meters.get("dibs.job.overdue").tag("lock", name).gauge().value())
                .isEqualTo(1);
        DibsEndpoint.JobView view = view(context, name);
        assertThat(view.overdue()).isTrue();
        assertThat(view.expectEveryMs()).isEqualTo(period.toMillis());
    }
}
