package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.DibsRun;
import dibs.testsupport.DibsCli;
import dibs.testsupport.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * The fleet view on 3 instances of a service (3 contexts, each its own client and instance id)
 * whose {@code @Scheduled(fixedRate = 2000)} job locks one tick every 2 s: each tick's runner is
 * in the history and {@code /actuator/dibs}; when no instance runs the job any more, it is
 * reported overdue (gauge, health, {@code dibs check}) within one period of its first missed
 * tick; when it runs again, it is no longer overdue. Against a real redis-server.
 */
@Timeout(120)
class FleetViewTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    static final long PERIOD_MS = 2_000;
    /** Whether the instances run the job: cleared to stop it everywhere. */
    static final AtomicBoolean RUNNING = new AtomicBoolean(true);

    /** The job: one tick per 2 s window; the winner holds the tick's lock past the window. */
    public static class Beat {
        private final DibsClient dibs;

        public Beat(DibsClient dibs) {
            this.dibs = dibs;
        }

        @Scheduled(fixedRate = PERIOD_MS)
        public void beat() {
            if (RUNNING.get()) {
                long tick = System.currentTimeMillis() / PERIOD_MS;
                dibs.execute("beat-" + tick * 2, Duration.ofSeconds(3), Duration.ofSeconds(3), () -> {});
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class Service {
        @Bean
        Beat beat(DibsClient dibs) {
            return new Beat(dibs);
        }
    }

    interface Body {
        void run(List<ApplicationContext> instances) throws Exception;
    }

    /** Runs {@code body} with 3 instances up at once. */
    private static void withInstances(Body body, String... extra) {
        run(body, List.of(), extra);
    }

    private static void run(Body body, List<ApplicationContext> up, String... extra) {
        if (up.size() == 3) {
            try {
                body.run(up);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            return;
        }
        String[] properties = new String[extra.length + 3];
        properties[0] = "spring.data.redis.port=" + redis.port();
        properties[1] = "dibs.instance-id=i" + (up.size() + 1);
        properties[2] = "dibs.jobs.refresh=100ms";
        System.arraycopy(extra, 0, properties, 3, extra.length);
        Contexts.runner()
                .withUserConfiguration(Service.class)
                .withPropertyValues(properties)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    List<ApplicationContext> more = new java.util.ArrayList<>(up);
                    more.add(context);
                    run(body, more, extra);
                });
    }

    private static void await(String what, long timeoutMs, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    private static DibsJobs.Job beat(ApplicationContext c) {
        return c.getBean(DibsJobs.class).expected().get("beat");
    }

    private static boolean allOverdue(List<ApplicationContext> instances, boolean overdue) {
        return instances.stream().allMatch(c -> beat(c) != null && beat(c).overdue() == overdue);
    }

    /** {@code dibs check beat --within W}: its exit code. */
    private static int check(String within) throws Exception {
        DibsCli out = DibsCli.run("redis://127.0.0.1:" + redis.port(), "check", "beat", "--within", within);
        System.out.println("dibs check beat --within " + within + ": " + out);
        return out.exitCode();
    }

    @Test
    void aJobThatStopsRunningEverywhereIsOverdueWithinOnePeriodAndRecoversWhenItRunsAgain() {
        RUNNING.set(true);
        withInstances(instances -> {
            // The period comes from the @Scheduled method, on every instance.
            await(
                    "every instance expects the job and sees it run",
                    15_000,
                    () -> instances.stream()
                            .allMatch(c ->
                                    beat(c) != null && beat(c).lastSuccess().isPresent()));
            for (ApplicationContext c : instances) {
                DibsExpectations.Expectation e =
                        c.getBean(DibsExpectations.class).all().get("beat");
                assertThat(e.every()).isEqualTo(Duration.ofMillis(PERIOD_MS));
                assertThat(e.source()).isEqualTo("@Scheduled");
            }
            // A few ticks: each tick ran once, fleet-wide, and the history says where.
            Thread.sleep(3 * PERIOD_MS);
            assertThat(allOverdue(instances, false)).isTrue();
            DibsClient client = instances.get(0).getBean(DibsClient.class);
            List<DibsRun> runs = client.history("beat", 100);
            assertThat(runs.size()).isGreaterThanOrEqualTo(3);
            Set<String> ticks = runs.stream().map(DibsRun::lockName).collect(Collectors.toSet());
            assertThat(ticks).as("one run per tick").hasSize(runs.size());
            assertThat(runs)
                    .allMatch(r ->
                            r.succeeded() && r.ownedToTheEnd() && r.instanceId().isPresent());
            assertThat(runs.stream().map(r -> r.instanceId().get())).allMatch(Set.of("i1", "i2", "i3")::contains);
            DibsEndpoint.JobView view = instances.get(1).getBean(DibsEndpoint.class).locks().jobs().stream()
                    .filter(j -> j.name().equals("beat"))
                    .findFirst()
                    .orElseThrow();
            assertThat(view.overdue()).isFalse();
            assertThat(view.expectEveryMs()).isEqualTo(PERIOD_MS);
            assertThat(view.runs().get(0).lockName()).isEqualTo(runs.get(0).lockName());
            assertThat(view.runs().get(0).instanceId())
                    .isEqualTo(runs.get(0).instanceId().get());
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            instances.get(2).getBean(DibsJobsMeters.class).bindTo(meters);
            assertThat(meters.get("dibs.job.overdue")
                            .tag("lock", "beat")
                            .gauge()
                            .value())
                    .isZero();
            assertThat(meters.get("dibs.job.last.run.age")
                            .tag("lock", "beat")
                            .gauge()
                            .value())
                    .isBetween(0.0, PERIOD_MS / 1000.0 + 1);
            assertThat(instances
                            .get(0)
                            .getBean(DibsJobsHealthCheck.class)
                            .check()
                            .status())
                    .isEqualTo("UP");
            assertThat(check("10s")).isZero();

            // Every instance stops running it.
            RUNNING.set(false);
            await("overdue on every instance", 10_000, () -> allOverdue(instances, true));
            // Read once overdue: a tick that saw RUNNING just before the flip may record its run
            // after the flip, and that run, not the one before it, is the last.
            Instant lastRun = client.history("beat", 1).get(0).recordedAt();
            Duration late = Duration.between(lastRun.plusMillis(PERIOD_MS), Instant.now());
            System.out.println("overdue " + late.toMillis() + " ms after the first missed tick (period " + PERIOD_MS
                    + " ms, grace " + PERIOD_MS / 2 + " ms, refresh 100 ms)");
            assertThat(late)
                    .as("flagged within one period of the first missed tick")
                    .isLessThanOrEqualTo(Duration.ofMillis(PERIOD_MS));
            assertThat(meters.get("dibs.job.overdue")
                            .tag("lock", "beat")
                            .gauge()
                            .value())
                    .isEqualTo(1.0);
            // Overdue proves more than period + grace (1.5 periods) since the last run; the gauge
            // counts whole milliseconds (3.0004 s reads 3.0), so it shows at least that.
            assertThat(meters.get("dibs.job.last.run.age")
                            .tag("lock", "beat")
                            .gauge()
                            .value())
                    .isGreaterThanOrEqualTo(PERIOD_MS * 1.5 / 1000);
            DibsJobsHealthCheck.Result health =
                    instances.get(0).getBean(DibsJobsHealthCheck.class).check();
            assertThat(health.status()).isEqualTo("OUT_OF_SERVICE");
            assertThat(health.details().get("overdue")).isEqualTo(List.of("beat"));
            assertThat(check("3s")).isEqualTo(1);

            // It runs again: no longer overdue.
            RUNNING.set(true);
            await("no longer overdue on any instance", 10_000, () -> allOverdue(instances, false));
            assertThat(meters.get("dibs.job.overdue")
                            .tag("lock", "beat")
                            .gauge()
                            .value())
                    .isZero();
            assertThat(instances
                            .get(0)
                            .getBean(DibsJobsHealthCheck.class)
                            .check()
                            .status())
                    .isEqualTo("UP");
            assertThat(check("3s")).isZero();
        });
    }

    @Test
    void theReadNeverShowsATokenAndTheReleaseEndpointExistsOnlyWhenEnabled() {
        RUNNING.set(false);
        Contexts.runner()
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    // The health contributor exists (a condition on a bean made later once hid it).
                    assertThat(context).hasBean("dibsJobsHealthIndicator").hasSingleBean(DibsJobsMeters.class);
                    assertThat(context).doesNotHaveBean(DibsReleaseEndpoint.class);
                    DibsClient client = context.getBean(DibsClient.class);
                    DibsEndpoint endpoint = context.getBean(DibsEndpoint.class);
                    var lease = client.tryLock("stuck-report", Duration.ofMinutes(1), Duration.ZERO)
                            .orElseThrow();
                    String token = client.heldLock("stuck-report")
                            .orElseThrow()
                            .token()
                            .orElseThrow();
                    DibsEndpoint.LockHolder holder = endpoint.holder("stuck-report");
                    assertThat(holder.held()).isTrue();
                    assertThat(holder.pid()).isEqualTo(ProcessHandle.current().pid());
                    assertThat(holder.toString()).doesNotContain(token);
                    assertThat(endpoint.locks().toString()).doesNotContain(token);
                    assertThat(DibsEndpoint.LockHolder.class.getRecordComponents())
                            .extracting(java.lang.reflect.RecordComponent::getName)
                            .doesNotContain("token");
                    lease.release();
                });
        Contexts.runner()
                .withPropertyValues("spring.data.redis.port=" + redis.port(), "dibs.actuator.force-release=true")
                .run(context -> {
                    DibsClient client = context.getBean(DibsClient.class);
                    DibsEndpoint endpoint = context.getBean(DibsEndpoint.class);
                    DibsReleaseEndpoint release = context.getBean(DibsReleaseEndpoint.class);
                    var first = client.tryLock("stuck-report", Duration.ofMinutes(1), Duration.ZERO)
                            .orElseThrow();
                    DibsEndpoint.LockHolder seen = endpoint.holder("stuck-report");
                    // Released and taken again by the same process since: another holder.
                    first.release();
                    var second = client.tryLock("stuck-report", Duration.ofMinutes(1), Duration.ZERO)
                            .orElseThrow();
                    DibsEndpoint.LockHolder now = endpoint.holder("stuck-report");
                    assertThat(now.holderId()).hasSize(16).isNotEqualTo(seen.holderId());
                    var stale = release.release("stuck-report", seen.holderId(), SecurityContext.NONE);
                    assertThat(stale.released()).isFalse();
                    assertThat(stale.message()).contains("not touched");
                    assertThat(endpoint.holder("stuck-report").held()).isTrue();

                    var done = release.release("stuck-report", now.holderId(), SecurityContext.NONE);
                    assertThat(done.released()).isTrue();
                    assertThat(endpoint.holder("stuck-report").held()).isFalse();
                    assertThat(second.release()).isFalse();
                    List<DibsRun> runs = client.history("stuck-report", 5);
                    // Newest first: the holder's own release, which found the lock no longer its.
                    assertThat(runs.get(0).ended()).isEqualTo("no-longer-ours");
                    assertThat(runs.get(1).ended()).isEqualTo("forced");
                    assertThat(runs.get(1).forcedBy().orElseThrow()).startsWith("actuator@");
                });
    }

    /**
     * A job locked by its own name whose atLeast (3 s) exceeds its period (1 s), tried every
     * 300 ms: it runs every 3 s, as its atLeast allows, and is never overdue while it does (its
     * lock is held, or freed less than a period ago); stopped, it is overdue once its lock has
     * been free for its period plus the grace.
     */
    @Test
    void aJobWhoseAtLeastOutlastsItsPeriodIsNotOverdueWhileItRuns() {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "dibs.jobs.refresh=100ms",
                        "dibs.jobs.expect-every.steady=1s")
                .run(context -> {
                    DibsClient client = context.getBean(DibsClient.class);
                    DibsJobs jobs = context.getBean(DibsJobs.class);
                    AtomicBoolean trying = new AtomicBoolean(true);
                    Thread scheduler = new Thread(() -> {
                        while (trying.get()) {
                            client.execute("steady", Duration.ofSeconds(10), Duration.ofSeconds(3), () -> {});
                            try {
                                Thread.sleep(300);
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    });
                    scheduler.start();
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(7);
                    int reads = 0;
                    while (System.nanoTime() < end) {
                        DibsJobs.Job job = jobs.expected().get("steady");
                        if (job != null) {
                            assertThat(job.overdue())
                                    .as("overdue while it runs as its atLeast allows: " + job)
                                    .isFalse();
                            reads++;
                        }
                        Thread.sleep(50);
                    }
                    assertThat(reads).isGreaterThan(50);
                    assertThat(client.history("steady", 10)).hasSizeBetween(2, 4);
                    trying.set(false);
                    scheduler.join(5_000);
                    Instant stopped = Instant.now();
                    await(
                            "overdue once stopped",
                            10_000,
                            () -> jobs.expected().get("steady").overdue());
                    System.out.println("steady: overdue "
                            + Duration.between(stopped, Instant.now()).toMillis()
                            + " ms after its last try (atLeast 3 s, period 1 s, grace 0.5 s)");
                });
    }
}
