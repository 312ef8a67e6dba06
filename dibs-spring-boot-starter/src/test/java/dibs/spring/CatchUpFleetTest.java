package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsCatchUp;
import dibs.DibsClient;
import dibs.DibsRun;
import dibs.testsupport.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;

/**
 * Catch-up as a fleet meets it (issue 33): 3 instances of an application with a 2-second cron
 * job, {@code @CatchUp} with each policy. A tick runs; then every instance stops (a deploy) and
 * stays down for 3 ticks; they come back. "latest" runs exactly 1 catch-up (the newest missed
 * tick), "all" exactly 3, "skip" none; then the normal ticks; no tick ever runs twice. The
 * history marks the catch-up's runs, and only those.
 */
@Tag("slow")
class CatchUpFleetTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    private static final String CRON = "*/2 * * * * *";
    private static final int INSTANCES = 3;

    /** Per tick, the instances that ran it. */
    static final Map<String, List<String>> RUNS = new ConcurrentHashMap<>();

    /** The start-up catch-ups that finished. */
    static final AtomicInteger STARTS = new AtomicInteger();

    static class Job {
        private final DibsClient dibs;
        private final String instance;
        private final String name;

        Job(DibsClient dibs, String instance, String name) {
            this.dibs = dibs;
            this.instance = instance;
            this.name = name;
        }

        @Scheduled(cron = CRON, zone = "UTC")
        @CatchUp(policy = "${test.policy}", window = "PT30S")
        void everyTwoSeconds() {
            DibsCatchUp ticks = DibsScheduledTick.catchUp();
            dibs.executeOnce(
                    name,
                    ticks,
                    Duration.ofSeconds(30),
                    tick -> RUNS.computeIfAbsent(tick, t -> new CopyOnWriteArrayList<>())
                            .add(instance));
            if (!ticks.lastIsDueNow()) {
                STARTS.incrementAndGet();
            }
        }
    }

    @Configuration
    @EnableScheduling
    @ImportAutoConfiguration({DibsAutoConfiguration.class, DibsActuatorAutoConfiguration.class})
    static class Instance {
        @Bean
        Job job(DibsClient dibs, Environment env) {
            return new Job(dibs, env.getProperty("test.instance"), env.getProperty("test.job"));
        }
    }

    private final List<ConfigurableApplicationContext> fleet = new ArrayList<>();

    @AfterEach
    void stopTheFleet() {
        fleet.forEach(ConfigurableApplicationContext::close);
        fleet.clear();
    }

    /** Starts the 3 instances at once (as a deploy does): returns when all are ready. */
    private void start(String job, String policy) throws Exception {
        ExecutorService starting = Executors.newFixedThreadPool(INSTANCES);
        try {
            List<Future<ConfigurableApplicationContext>> each = new ArrayList<>();
            for (int i = 0; i < INSTANCES; i++) {
                String instance = "pod-" + i;
                each.add(starting.submit(() -> new SpringApplicationBuilder(Instance.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.port=" + redis.port(),
                                "spring.main.banner-mode=off",
                                "test.instance=" + instance,
                                "test.job=" + job,
                                "test.policy=" + policy)
                        .run()));
            }
            for (Future<ConfigurableApplicationContext> f : each) {
                fleet.add(f.get());
            }
        } finally {
            starting.shutdown();
        }
    }

    private static void await(String what, Duration bound, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited " + bound + " for " + what).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    private static Instant dueOf(String tick) {
        return java.time.LocalDateTime.parse(tick).toInstant(ZoneOffset.UTC);
    }

    @ParameterizedTest
    @CsvSource({"latest, 1", "all, 3", "skip, 0"})
    void afterAllInstancesStoppedFor3TicksThePolicyRunsTheMissedTicksOnce(String policy, int expected)
            throws Exception {
        RUNS.clear();
        STARTS.set(0);
        String job = "fleet-catch-up-" + policy;
        CronExpression cron = CronExpression.parse(CRON);

        // Up, until a tick ran: t0.
        start(job, policy);
        await("a first tick", Duration.ofSeconds(10), () -> !RUNS.isEmpty());
        stopTheFleet();
        String t0 = new TreeSet<>(RUNS.keySet()).last();
        STARTS.set(0);
        // Down for 3 ticks: back after the third is due, before the fourth.
        ZonedDateTime third = ZonedDateTime.ofInstant(dueOf(t0), ZoneOffset.UTC);
        for (int i = 0; i < 3; i++) {
            third = cron.next(third);
        }
        Duration toThird = Duration.between(Instant.now(), third.toInstant());
        Thread.sleep(Math.max(0, toThird.toMillis()) + 50); // the clock is the event: the third tick's due time
        Instant back = Instant.now();
        start(job, policy);
        Duration restart = Duration.between(back, Instant.now());
        int starts = policy.equals("skip") ? 0 : INSTANCES; // skip: no run at start-up
        await("the start-up catch-up of every instance", Duration.ofSeconds(20), () -> STARTS.get() == starts);
        // Then 2 normal ticks.
        await(
                "2 ticks after the restart",
                Duration.ofSeconds(20),
                () -> RUNS.keySet().stream().filter(t -> dueOf(t).isAfter(back)).count() >= 2);

        SortedSet<String> missed = new TreeSet<>();
        for (ZonedDateTime t = cron.next(ZonedDateTime.ofInstant(dueOf(t0), ZoneOffset.UTC));
                !t.toInstant().isAfter(back);
                t = cron.next(t)) {
            missed.add(DibsScheduledTick.name(t));
        }
        assertThat(missed)
                .as("down for 3 ticks (restart took " + restart.toMillis() + " ms)")
                .hasSize(3);
        RUNS.forEach(
                (tick, who) -> assertThat(who).as("tick " + tick + " ran once").hasSize(1));

        List<DibsRun> history;
        try (DibsClient reader =
                dibs.Dibs.client(dibs.DibsOptions.builder().port(redis.port()).build())) {
            history = reader.history(job, 50);
        }
        SortedSet<String> caughtUp = history.stream()
                .filter(DibsRun::catchUp)
                .map(r -> r.lockName().substring(job.length() + 1))
                .collect(Collectors.toCollection(TreeSet::new));
        SortedSet<String> expectedRuns = switch (policy) {
            case "latest" -> new TreeSet<>(List.of(missed.last()));
            case "all" -> missed;
            default -> new TreeSet<>();
        };
        System.out.printf(
                "policy %s: missed %s, caught up %s, restart %d ms, ticks run %s%n",
                policy, missed, caughtUp, restart.toMillis(), new TreeSet<>(RUNS.keySet()));
        assertThat(caughtUp)
                .as("the catch-up's runs in the history")
                .isEqualTo(expectedRuns)
                .hasSize(expected);
        SortedSet<String> ranMissed = new TreeSet<>(RUNS.keySet());
        ranMissed.retainAll(missed);
        assertThat(ranMissed).as("the missed ticks that ran").isEqualTo(expectedRuns);
        assertThat(history).as("one run recorded per tick run").hasSize(RUNS.size());
        // /actuator/dibs says the same of the job's runs.
        DibsEndpoint.JobView view = fleet.get(0).getBean(DibsEndpoint.class).locks().jobs().stream()
                .filter(j -> j.name().equals(job))
                .findFirst()
                .orElseThrow();
        SortedSet<String> shown = new TreeSet<>();
        view.runs().stream()
                .filter(DibsEndpoint.RunView::catchUp)
                .forEach(r -> shown.add(r.lockName().substring(job.length() + 1)));
        assertThat(shown).as("the actuator's catch-up runs").isEqualTo(expectedRuns);
    }
}
