package dibs.spring;

import static dibs.spring.FleetViews.await;
import static dibs.spring.FleetViews.check;
import static dibs.spring.FleetViews.job;
import static dibs.spring.FleetViews.view;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dibs.Dibs;
import dibs.DibsClient;
import dibs.DibsLease;
import dibs.HeldLock;
import dibs.testsupport.DibsCli;
import dibs.testsupport.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fleet view says only what the history proves, where it meets the lock's other features,
 * each case with every signal a user reads (the {@code dibsJobs} health and its details, the
 * gauges, {@code /actuator/dibs}) and, where the same question can be put to it, {@code dibs
 * check}'s exit code. Against a real redis-server.
 */
class JobTruthTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    @SuppressWarnings("unchecked")
    private static Map<String, Object> healthOf(DibsJobsHealthCheck.Result result, String name) {
        return (Map<String, Object>) ((Map<String, Object>) result.details().get("jobs")).get(name);
    }

    /**
     * A failed run keeps its lock for the rest of its atLeast: no run holds it, so it neither
     * excuses the late job nor shows as running. The job is overdue in every signal, as {@code
     * dibs check} says. Before, the kept lock read as a run in progress: UP, {@code running}.
     * And a short success older than the window is not judged suspect while a run of a later
     * tick has its grace after start: {@code dibs check} says running (0); before, the starter
     * said suspect (OUT_OF_SERVICE).
     */
    @Test
    void aKeptLockIsNoRunAndAStaleSuccessIsNotSuspect() {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "dibs.jobs.refresh=100ms",
                        "dibs.jobs.grace=1s",
                        "dibs.jobs.expect-every.nightly=100ms",
                        "dibs.jobs.expect-every.report=2s",
                        "dibs.jobs.min-duration.report=300ms",
                        "dibs.jobs.grace-after-start.report=1h")
                .run(context -> {
                    DibsClient dibs = context.getBean(DibsClient.class);
                    assertThat(dibs.keepsHistory()).isTrue();
                    DibsJobsHealthCheck health = context.getBean(DibsJobsHealthCheck.class);
                    SimpleMeterRegistry meters = new SimpleMeterRegistry();
                    context.getBean(DibsJobsMeters.class).bindTo(meters);

                    // The only run of nightly fails; its lock is kept for 60 s more.
                    boolean[] ranAsRunning = {false};
                    IllegalStateException boom = new IllegalStateException("boom");
                    assertThatThrownBy(() -> dibs.execute("nightly", 120, 60, () -> {
                                ranAsRunning[0] = dibs.heldLock("nightly")
                                        .map(HeldLock::running)
                                        .orElse(false);
                                throw boom;
                            }))
                            .isSameAs(boom);
                    assertThat(ranAsRunning[0])
                            .as("the lock reads as running while its run runs")
                            .isTrue();
                    HeldLock kept = dibs.heldLock("nightly").orElseThrow();
                    assertThat(kept.running()).as("%s", kept).isFalse();
                    assertThat(kept.remaining())
                            .hasValueSatisfying(r -> assertThat(r).isPositive());

                    await(
                            "nightly is overdue",
                            () -> job(context, "nightly") != null
                                    && job(context, "nightly").overdue());
                    assertThat(job(context, "nightly").held()).isEmpty();
                    assertThat(meters.get("dibs.job.overdue")
                                    .tag("lock", "nightly")
                                    .gauge()
                                    .value())
                            .isEqualTo(1);
                    DibsJobsHealthCheck.Result result = health.check();
                    assertThat(result.status()).isEqualTo("OUT_OF_SERVICE");
                    // report may be overdue too by now, on a slow machine: it has not run yet.
                    assertThat(result.details().get("overdue"))
                            .asInstanceOf(InstanceOfAssertFactories.LIST)
                            .contains("nightly");
                    assertThat(healthOf(result, "nightly").get("running")).isEqualTo(false);
                    assertThat(view(context, "nightly").overdue()).isTrue();
                    assertThat(view(context, "nightly").runningOn()).isNull();
                    assertThat(check(redis, "check", "nightly", "--within", "1100ms"))
                            .isEqualTo(1);

                    // report: a success of a few ms, below its 300 ms minimum, is suspect while
                    // it is the window's.
                    assertThat(dibs.execute("report", 10, 0, () -> {})).isTrue();
                    await(
                            "report is suspect",
                            () -> job(context, "report") != null
                                    && job(context, "report").suspect());
                    // A tick of report starts, within its hour of grace after start.
                    try (DibsLease tick = dibs.tryLock("report@2026-12-06T02:00", Duration.ofMinutes(1), Duration.ZERO)
                            .orElseThrow()) {
                        // 2 s of period and 1 s of grace after the success, a read sees it stale.
                        await(
                                "report's success is older than its window",
                                () -> job(context, "report")
                                                .lastSuccessAge()
                                                .map(age -> age.compareTo(Duration.ofMillis(3_000)) > 0)
                                                .orElse(false)
                                        && job(context, "report").running().size() == 1);
                        DibsJobs.Job report = job(context, "report");
                        assertThat(report.suspect()).as("%s", report).isFalse();
                        assertThat(report.overdue()).as("%s", report).isFalse();
                        assertThat(meters.get("dibs.job.suspect")
                                        .tag("lock", "report")
                                        .gauge()
                                        .value())
                                .isZero();
                        assertThat(health.check().details().get("suspect")).isNull();
                        assertThat(view(context, "report").suspect()).isFalse();
                        assertThat(check(
                                        redis,
                                        "check",
                                        "report",
                                        "--within",
                                        "3s",
                                        "--min-duration",
                                        "300ms",
                                        "--grace-after-start",
                                        "1h"))
                                .isZero();
                    }
                });
    }

    /**
     * With {@code dibs.history=false}, this instance's runs are not recorded, so what the history
     * lacks proves nothing: a late job is {@code unknown} (UP, with why), never overdue; and a
     * short success that another instance recorded is not suspect, since a later one of this
     * instance would be missing. Before, every expected job went OUT_OF_SERVICE once its period
     * and grace passed, however often it ran.
     */
    @Test
    void withTheHistoryOffALateJobIsUnknownNotOverdue() {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "dibs.history=false",
                        "dibs.jobs.refresh=100ms",
                        "dibs.jobs.grace=50ms",
                        "dibs.jobs.expect-every.quiet=100ms",
                        "dibs.jobs.min-duration.mixed=1h")
                .run(context -> {
                    DibsClient dibs = context.getBean(DibsClient.class);
                    assertThat(dibs.keepsHistory()).isFalse();
                    SimpleMeterRegistry meters = new SimpleMeterRegistry();
                    context.getBean(DibsJobsMeters.class).bindTo(meters);
                    assertThat(dibs.execute("quiet", 10, 0, () -> {})).isTrue();
                    assertThat(dibs.history("quiet", 5).size())
                            .as("nothing recorded")
                            .isZero();
                    // Another instance, which records, ran mixed briefly.
                    assertThat(Dibs.client(redis.uri()).execute("mixed", 10, 0, () -> {}))
                            .isTrue();

                    await(
                            "quiet and mixed are unknown",
                            () -> job(context, "quiet") != null
                                    && job(context, "quiet").unknown().isPresent()
                                    && job(context, "mixed") != null
                                    && job(context, "mixed").unknown().isPresent());
                    DibsJobs.Job quiet = job(context, "quiet");
                    assertThat(quiet.overdue()).isFalse();
                    assertThat(quiet.unknown().orElseThrow()).contains("history is false");
                    DibsJobs.Job mixed = job(context, "mixed");
                    assertThat(mixed.lastSuccess()).as("%s", mixed).isPresent();
                    assertThat(mixed.suspect()).as("%s", mixed).isFalse();
                    assertThat(meters.get("dibs.job.overdue")
                                    .tag("lock", "quiet")
                                    .gauge()
                                    .value())
                            .isZero();
                    assertThat(meters.get("dibs.job.suspect")
                                    .tag("lock", "mixed")
                                    .gauge()
                                    .value())
                            .isZero();
                    for (String name : List.of("quiet", "mixed")) {
                        assertThat(meters.get("dibs.job.unknown")
                                        .tag("lock", name)
                                        .gauge()
                                        .value())
                                .isEqualTo(1);
                    }
                    DibsJobsHealthCheck.Result result =
                            context.getBean(DibsJobsHealthCheck.class).check();
                    assertThat(result.status()).isEqualTo("UNKNOWN");
                    assertThat(result.details().get("unknown"))
                            .asInstanceOf(InstanceOfAssertFactories.LIST)
                            .containsExactlyInAnyOrder("quiet", "mixed");
                    assertThat(view(context, "quiet").overdue()).isFalse();
                    assertThat(view(context, "quiet").unknown()).contains("history is false");
                    assertThat(view(context, "mixed").suspect()).isFalse();
                });
    }

    /**
     * Issue 42: a tick's run whose end was never recorded (its {@code dibs run} killed with
     * SIGKILL, its lock then lapsed) may have succeeded: while it is within the window the job is
     * {@code unknown} (UP, the unknown gauge 1, {@code /actuator/dibs} says why), not overdue, as
     * {@code dibs check} says (3). Before, it was overdue: its start was not recorded at all, and
     * the starter's rule asked for no success ever recorded.
     */
    @Test
    void aRunWhoseEndWasNeverRecordedLeavesALateJobUnknown() throws Exception {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "dibs.jobs.refresh=100ms",
                        "dibs.jobs.grace=1s",
                        "dibs.jobs.expect-every.settle=4s")
                .run(context -> {
                    DibsClient dibs = context.getBean(DibsClient.class);
                    SimpleMeterRegistry meters = new SimpleMeterRegistry();
                    context.getBean(DibsJobsMeters.class).bindTo(meters);
                    assertThat(dibs.execute("settle", 60, 0, () -> {})).isTrue();
                    long succeeded = System.nanoTime();
                    // A tick of it starts 3 s later on a cron host, whose dibs is SIGKILLed.
                    Thread.sleep(3_000); // the schedule being tested: when the tick starts
                    Process cron = new ProcessBuilder(
                                    DibsCli.path().toString(),
                                    "run",
                                    "--redis",
                                    redis.uri(),
                                    "--lock",
                                    "settle",
                                    "--tick",
                                    "2026-12-06T02:00",
                                    "--at-most",
                                    "500ms",
                                    "--",
                                    "sleep",
                                    "60")
                            .redirectErrorStream(true)
                            .start();
                    await(
                            "the tick's run holds its lock",
                            () -> dibs.heldLock("settle@2026-12-06T02:00")
                                    .map(HeldLock::running)
                                    .orElse(false));
                    cron.destroyForcibly().waitFor();
                    await(
                            "the tick's lock lapsed",
                            () -> dibs.heldLock("settle@2026-12-06T02:00").isEmpty());
                    // Late (4 s + 1 s after the success), with the unended run inside the window.
                    await(
                            "settle is late",
                            () -> System.nanoTime() - succeeded > 5_200_000_000L
                                    && job(context, "settle") != null
                                    && job(context, "settle").unknown().isPresent());
                    DibsJobs.Job settle = job(context, "settle");
                    assertThat(settle.overdue()).as("%s", settle).isFalse();
                    assertThat(settle.unknown().orElseThrow()).contains("never recorded");
                    assertThat(meters.get("dibs.job.unknown")
                                    .tag("lock", "settle")
                                    .gauge()
                                    .value())
                            .isEqualTo(1);
                    assertThat(meters.get("dibs.job.overdue")
                                    .tag("lock", "settle")
                                    .gauge()
                                    .value())
                            .isZero();
                    assertThat(context.getBean(DibsJobsHealthCheck.class)
                                    .check()
                                    .status())
                            .isEqualTo("UNKNOWN");
                    assertThat(view(context, "settle").unknown()).contains("never recorded");
                    assertThat(dibs.history("settle", 5).get(0).ended()).isEqualTo("unended");
                    assertThat(check(redis, "check", "settle", "--within", "5s"))
                            .isEqualTo(3);
                });
    }

    /**
     * Issue 44's harness, finding 7: while the fleet view cannot be read (Redis down), every job
     * is {@code unknown} with why, in each signal: the health UNKNOWN (not UP), the overdue gauge
     * 0 and the unknown gauge 1, the age NaN. Before, the view of the last read was kept: a job
     * that could not run while Redis was down read as on time. A read that works again ends it.
     */
    @Test
    void aViewThatCannotBeReadIsUnknownNotOnTime() throws Exception {
        try (RedisServer own = RedisServer.launch()) {
            Contexts.runner()
                    .withPropertyValues(
                            "spring.data.redis.port=" + own.port(),
                            "dibs.jobs.refresh=100ms",
                            "dibs.jobs.expect-every.beat=1h")
                    .run(context -> {
                        DibsClient dibs = context.getBean(DibsClient.class);
                        DibsJobsHealthCheck health = context.getBean(DibsJobsHealthCheck.class);
                        SimpleMeterRegistry meters = new SimpleMeterRegistry();
                        context.getBean(DibsJobsMeters.class).bindTo(meters);
                        assertThat(dibs.execute("beat", 10, 0, () -> {})).isTrue();
                        await(
                                "beat's success is read",
                                () -> job(context, "beat") != null
                                        && job(context, "beat").lastSuccess().isPresent());
                        assertThat(health.check().status()).isEqualTo("UP");

                        own.stop();
                        await(
                                "beat is unknown",
                                () -> job(context, "beat").unknown().isPresent());
                        DibsJobs.Job beat = job(context, "beat");
                        assertThat(beat.overdue()).as("%s", beat).isFalse();
                        assertThat(beat.unknown().orElseThrow()).contains("could not be read");
                        DibsJobsHealthCheck.Result result = health.check();
                        assertThat(result.status()).isEqualTo("UNKNOWN");
                        assertThat(result.details().get("unknown"))
                                .asInstanceOf(InstanceOfAssertFactories.LIST)
                                .containsExactly("beat");
                        assertThat(result.details()).containsKey("readFailure");
                        assertThat(gauge(meters, "dibs.job.unknown", "beat")).isEqualTo(1);
                        assertThat(gauge(meters, "dibs.job.overdue", "beat")).isZero();
                        assertThat(gauge(meters, "dibs.job.last.run.age", "beat"))
                                .isNaN();

                        own.start();
                        await(
                                "the view is read again",
                                () -> context.getBean(DibsJobs.class).failure() == null);
                        assertThat(health.check().details()).doesNotContainKey("readFailure");
                        assertThat(job(context, "beat").unknown().orElse("")).doesNotContain("could not be read");
                    });
        }
    }

    /**
     * The attack on finding 7's fix: a view that cannot be read from the start (Redis down when
     * the instance starts) calls every expected job unknown, gauges included; before, the health
     * was UP with no job at all. And one job that cannot be read (here a name the core refuses,
     * over 512 bytes) is unknown alone: the others are judged; before, it blinded the whole view.
     */
    @Test
    void aJobThatCannotBeReadIsUnknownFromTheStartAndAlone() throws Exception {
        String tooLong = "x".repeat(600);
        RedisServer down = RedisServer.launch();
        down.stop();
        try (down) {
            Contexts.runner()
                    .withPropertyValues(
                            "spring.data.redis.port=" + down.port(),
                            "dibs.jobs.refresh=100ms",
                            "dibs.jobs.expect-every.alpha=1h")
                    .run(context -> {
                        SimpleMeterRegistry meters = new SimpleMeterRegistry();
                        context.getBean(DibsJobsMeters.class).bindTo(meters);
                        await(
                                "alpha is unknown",
                                () -> job(context, "alpha") != null
                                        && job(context, "alpha").unknown().isPresent());
                        DibsJobsHealthCheck.Result result =
                                context.getBean(DibsJobsHealthCheck.class).check();
                        assertThat(result.status()).isEqualTo("UNKNOWN");
                        assertThat(result.details().get("unknown"))
                                .asInstanceOf(InstanceOfAssertFactories.LIST)
                                .containsExactly("alpha");
                        await(
                                "the gauges of alpha",
                                () -> meters.find("dibs.job.unknown")
                                                .tag("lock", "alpha")
                                                .gauge()
                                        != null);
                        assertThat(gauge(meters, "dibs.job.unknown", "alpha")).isEqualTo(1);
                    });
        }
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "dibs.jobs.refresh=100ms",
                        "dibs.jobs.grace=50ms",
                        "dibs.jobs.expect-every.never-ran=100ms",
                        "dibs.jobs.expect-every." + tooLong + "=1h")
                .run(context -> {
                    await(
                            "never-ran is overdue",
                            () -> job(context, "never-ran") != null
                                    && job(context, "never-ran").overdue());
                    DibsJobs.Job refused = job(context, tooLong);
                    assertThat(refused.unknown().orElseThrow()).contains("could not be read");
                    DibsJobsHealthCheck.Result result =
                            context.getBean(DibsJobsHealthCheck.class).check();
                    assertThat(result.status()).isEqualTo("OUT_OF_SERVICE");
                    assertThat(result.details().get("overdue"))
                            .asInstanceOf(InstanceOfAssertFactories.LIST)
                            .containsExactly("never-ran");
                    assertThat(result.details().get("unknown"))
                            .asInstanceOf(InstanceOfAssertFactories.LIST)
                            .containsExactly(tooLong);
                    assertThat((String) result.details().get("readFailure")).startsWith("1 of 2 jobs: ");
                });
    }

    private static double gauge(SimpleMeterRegistry meters, String name, String job) {
        return meters.get(name).tag("lock", job).gauge().value();
    }
}
