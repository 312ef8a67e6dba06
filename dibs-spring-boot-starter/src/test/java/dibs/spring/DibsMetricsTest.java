package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The Micrometer meters, fed by real locked calls against a real redis-server. */
class DibsMetricsTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    @Configuration(proxyBeanMethods = false)
    static class Registry {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    private static double count(MeterRegistry r, String name, String lock) {
        var counter = r.find(name).tag("lock", lock).counter();
        return counter == null ? 0 : counter.count();
    }

    /**
     * Issue 43, item 8: a service that locks a name per order makes a tag value per order; past
     * {@code dibs.metrics.max-tags} their calls are counted under {@code lock=_other}, in the
     * meters and in the observations' timer. Before, 30 orders made 30 series of each meter.
     */
    /**
     * Every attempt counted, a name the core refuses too (found by the attack: its tag threw, and
     * the call was lost from the meters): under {@code _other}.
     */
    @Test
    void aCallWhoseNameTheCoreRefusesIsCountedUnderOther() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DibsMetrics metrics = new DibsMetrics(registry, dibs.Dibs::jobOf);
        metrics.acquireFailed("bad\uD800-1", new IllegalArgumentException("refused"));
        metrics.acquireFailed("fine-1", new IllegalStateException("down"));
        assertThat(registry.get("dibs.lock.attempts")
                        .tag("lock", TagLimit.OTHER)
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("dibs.lock.attempts")
                        .tag("lock", "fine-1")
                        .counter()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void theLockTagHasAtMostMaxTagsValuesAndTheRestAreCountedUnderOther() {
        Contexts.runner()
                .withUserConfiguration(Registry.class)
                .withBean(io.micrometer.observation.ObservationRegistry.class, () -> {
                    io.micrometer.observation.ObservationRegistry o =
                            io.micrometer.observation.ObservationRegistry.create();
                    return o;
                })
                .withPropertyValues("spring.data.redis.port=" + redis.port(), "dibs.metrics.max-tags=10")
                .run(context -> {
                    DibsClient client = context.getBean(DibsClient.class);
                    MeterRegistry r = context.getBean(MeterRegistry.class);
                    context.getBean(io.micrometer.observation.ObservationRegistry.class)
                            .observationConfig()
                            .observationHandler(
                                    new io.micrometer.core.instrument.observation.DefaultMeterObservationHandler(r));
                    for (int i = 0; i < 30; i++) {
                        String order = "order-" + java.util.UUID.randomUUID();
                        assertThat(client.execute(order, Duration.ofSeconds(10), Duration.ZERO, () -> {}))
                                .isTrue();
                    }
                    java.util.Set<String> tags = new java.util.HashSet<>();
                    r.find("dibs.lock.attempts")
                            .counters()
                            .forEach(c -> tags.add(c.getId().getTag("lock")));
                    assertThat(tags).hasSize(11).contains("_other");
                    assertThat(count(r, "dibs.lock.attempts", "_other")).isEqualTo(20);
                    java.util.Set<String> timed = new java.util.HashSet<>();
                    r.find("dibs.lock.call")
                            .timers()
                            .forEach(t -> timed.add(t.getId().getTag("lock")));
                    assertThat(timed).hasSize(11).contains("_other");
                });
        Contexts.runner()
                .withUserConfiguration(Registry.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port(), "dibs.metrics.max-tags=0")
                .run(context -> assertThat(Contexts.startupException(context.getStartupFailure())
                                .property())
                        .isEqualTo("dibs.metrics.max-tags"));
    }

    @Test
    void attemptsAcquiredSkippedExecutionAndActiveAreCountedPerStableName() {
        Contexts.runner()
                .withUserConfiguration(Registry.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    DibsClient client = context.getBean(DibsClient.class);
                    MeterRegistry r = context.getBean(MeterRegistry.class);
                    double[] activeInside = new double[1];
                    // The same report on two days: one tag value, "report".
                    assertThat(client.execute(
                                    "report-2026-12-01",
                                    Duration.ofSeconds(10),
                                    Duration.ofSeconds(10),
                                    () -> activeInside[0] = r.get("dibs.lock.active")
                                            .tag("lock", "report")
                                            .gauge()
                                            .value()))
                            .isTrue();
                    assertThat(client.execute("report-2026-12-02", Duration.ofSeconds(10), Duration.ZERO, () -> {}))
                            .isTrue();
                    // The first day's lock is kept for atLeast: a second try is skipped.
                    assertThat(client.execute("report-2026-12-01", Duration.ofSeconds(10), Duration.ZERO, () -> {}))
                            .isFalse();

                    assertThat(activeInside[0]).isEqualTo(1.0);
                    assertThat(r.get("dibs.lock.active")
                                    .tag("lock", "report")
                                    .gauge()
                                    .value())
                            .isZero();
                    assertThat(count(r, "dibs.lock.attempts", "report")).isEqualTo(3);
                    assertThat(count(r, "dibs.lock.acquired", "report")).isEqualTo(2);
                    assertThat(count(r, "dibs.lock.skipped", "report")).isEqualTo(1);
                    assertThat(count(r, "dibs.lock.expired", "report")).isZero();
                    assertThat(r.get("dibs.lock.execution")
                                    .tag("lock", "report")
                                    .timer()
                                    .count())
                            .isEqualTo(2);
                    assertThat(r.find("dibs.lock.attempts")
                                    .tag("lock", "report-2026-12-01")
                                    .counter())
                            .isNull();
                });
    }

    @Test
    void aLockThatExpiresUnderItsTaskIsCountedExpired() {
        Contexts.runner()
                .withUserConfiguration(Registry.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    DibsClient client = context.getBean(DibsClient.class);
                    MeterRegistry r = context.getBean(MeterRegistry.class);
                    client.execute(
                            "slow", Duration.ofMillis(200), Duration.ZERO, () -> DibsAutoConfigurationTest.sleep(600));
                    assertThat(count(r, "dibs.lock.expired", "slow")).isEqualTo(1);
                    assertThat(r.get("dibs.lock.execution")
                                    .tag("lock", "slow")
                                    .timer()
                                    .totalTime(TimeUnit.MILLISECONDS))
                            .isGreaterThanOrEqualTo(600);
                });
    }

    @Test
    void aReleaseThatFailsIsCounted() throws Exception {
        // Its own server, killed while the task runs: the release then cannot be done.
        try (RedisServer doomed = RedisServer.launch()) {
            Contexts.runner()
                    .withUserConfiguration(Registry.class)
                    .withPropertyValues("spring.data.redis.port=" + doomed.port(), "spring.data.redis.timeout=500ms")
                    .run(context -> {
                        MeterRegistry r = context.getBean(MeterRegistry.class);
                        assertThat(context.getBean(DibsClient.class)
                                        .execute("report-2026-12-01", Duration.ofSeconds(10), Duration.ZERO, () -> {
                                            try {
                                                doomed.kill();
                                            } catch (IOException e) {
                                                throw new java.io.UncheckedIOException(e);
                                            }
                                        }))
                                .isTrue();
                        assertThat(count(r, "dibs.lock.release.failures", "report"))
                                .isEqualTo(1);
                        assertThat(count(r, "dibs.lock.expired", "report")).isZero();
                    });
        }
    }

    @Test
    void aReleaseNotProvenOursToTheEndIsCountedUnprovenNotReleased() throws Exception {
        // The lock lapses under its task, then the release's connection goes silent: its retry
        // finds no key, which proves nothing (issue 18).
        try (dibs.testsupport.FaultProxy proxy = dibs.testsupport.FaultProxy.start(redis.port())) {
            Contexts.runner()
                    .withUserConfiguration(Registry.class)
                    .withPropertyValues("spring.data.redis.port=" + proxy.port(), "spring.data.redis.timeout=500ms")
                    .run(context -> {
                        MeterRegistry r = context.getBean(MeterRegistry.class);
                        assertThat(context.getBean(DibsClient.class)
                                        .execute("report-2026-12-03", Duration.ofMillis(300), Duration.ZERO, () -> {
                                            DibsAutoConfigurationTest.sleep(450);
                                            proxy.blackholeExisting();
                                        }))
                                .isTrue();
                        assertThat(count(r, "dibs.lock.unproven", "report")).isEqualTo(1);
                        assertThat(count(r, "dibs.lock.expired", "report")).isZero();
                    });
        }
    }

    @Test
    void aLockTheReplicaDidNotAcknowledgeIsCountedUnconfirmedNotSkipped() throws Exception {
        // Durable acquire's default, against a master with a replica whose stream is cut (issue 18).
        try (RedisServer master = RedisServer.launch();
                dibs.testsupport.FaultProxy link = dibs.testsupport.FaultProxy.start(master.port());
                RedisServer replica = RedisServer.launch("--replicaof", "127.0.0.1", String.valueOf(link.port()))) {
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!master.info("replication", "connected_slaves").equals("1")
                    || !replica.info("replication", "master_link_status").equals("up")) {
                assertThat(System.nanoTime()).isLessThan(deadline);
                Thread.sleep(50);
            }
            link.halfOpenExisting();
            Contexts.runner()
                    .withUserConfiguration(Registry.class)
                    .withPropertyValues("spring.data.redis.port=" + master.port(), "spring.data.redis.timeout=600ms")
                    .run(context -> {
                        MeterRegistry r = context.getBean(MeterRegistry.class);
                        assertThat(context.getBean(DibsClient.class)
                                        .execute("report-2026-12-04", Duration.ofSeconds(30), Duration.ZERO, () -> {
                                            throw new AssertionError("ran unconfirmed");
                                        }))
                                .isFalse();
                        assertThat(count(r, "dibs.lock.unconfirmed", "report")).isEqualTo(1);
                        assertThat(count(r, "dibs.lock.skipped", "report")).isZero();
                        assertThat(count(r, "dibs.lock.acquired", "report")).isZero();
                    });
        }
    }

    @Test
    void aTagFunctionBeanReplacesTheDefault() {
        Contexts.runner()
                .withUserConfiguration(Registry.class)
                .withBean(DibsLockTag.class, () -> DibsLockTag.NAME)
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    context.getBean(DibsClient.class)
                            .execute("tick-42", Duration.ofSeconds(5), Duration.ZERO, () -> {});
                    assertThat(count(context.getBean(MeterRegistry.class), "dibs.lock.acquired", "tick-42"))
                            .isEqualTo(1);
                });
    }

    @Test
    void noRegistryOrMetricsOffMeansNoMeters() {
        Contexts.runner()
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context ->
                        assertThat(context).doesNotHaveBean(DibsMetrics.class).hasSingleBean(DibsClient.class));
        Contexts.runner()
                .withUserConfiguration(Registry.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port(), "dibs.metrics.enabled=false")
                .run(context -> {
                    assertThat(context).doesNotHaveBean(DibsMetrics.class);
                    context.getBean(DibsClient.class).execute("job", Duration.ofSeconds(5), Duration.ZERO, () -> {});
                    assertThat(context.getBean(MeterRegistry.class)
                                    .find("dibs.lock.attempts")
                                    .counters())
                            .isEmpty();
                });
    }

    @Test
    void activeGaugeCountsATaskRunningOnAnotherThread() {
        Contexts.runner()
                .withUserConfiguration(Registry.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    DibsClient client = context.getBean(DibsClient.class);
                    MeterRegistry r = context.getBean(MeterRegistry.class);
                    CountDownLatch running = new CountDownLatch(1);
                    CountDownLatch done = new CountDownLatch(1);
                    Thread t = new Thread(() -> client.execute("nightly", Duration.ofSeconds(10), Duration.ZERO, () -> {
                        running.countDown();
                        await(done);
                    }));
                    t.start();
                    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
                    assertThat(r.get("dibs.lock.active")
                                    .tag("lock", "nightly")
                                    .gauge()
                                    .value())
                            .isEqualTo(1.0);
                    done.countDown();
                    t.join(10_000);
                    assertThat(r.get("dibs.lock.active")
                                    .tag("lock", "nightly")
                                    .gauge()
                                    .value())
                            .isZero();
                });
    }

    static void await(CountDownLatch latch) {
        try {
            latch.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
