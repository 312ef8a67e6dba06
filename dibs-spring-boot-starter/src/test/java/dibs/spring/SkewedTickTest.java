package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.springframework.scheduling.support.CronExpression;

/**
 * Issue 29 (5): the tick of a cron {@code @Scheduled} method is its trigger's fire time, not the
 * wall clock's latest fire. Four instances whose schedulers' clocks run 5 ms and 500 ms ahead
 * (they fire early) and behind (late) run a cron of every 2 s through
 * {@code executeOnce(job, DibsScheduledTick.current(), 1.5 s)}: an atMost shorter than the period,
 * and longer than the 1 s between the earliest and the latest scheduler (executeOnce's bound).
 * Each tick runs once, and none is missed. Before, an instance that fired early named the
 * previous tick, whose lock had lapsed, and ran it a second time.
 */
@Timeout(90)
class SkewedTickTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    static final String JOB = "skewed-tick";
    /** Per tick, which instances ran it. */
    static final Map<String, List<String>> RUNS = new ConcurrentHashMap<>();
    /** Runs whose tick no trigger recorded (named from the wall clock). */
    static final List<String> UNRECORDED = new CopyOnWriteArrayList<>();

    static class Job {
        private final DibsClient dibs;
        private final String instance;

        Job(DibsClient dibs, String instance) {
            this.dibs = dibs;
            this.instance = instance;
        }

        @Scheduled(cron = "*/2 * * * * *")
        void everyTwoSeconds() {
            String tick = DibsScheduledTick.current().orElseThrow();
            if (DibsScheduledTick.recordedFire().isEmpty()) {
                UNRECORDED.add(instance + " " + tick);
            }
            dibs.executeOnce(
                    JOB,
                    tick,
                    Duration.ofMillis(1500),
                    () -> RUNS.computeIfAbsent(tick, t -> new CopyOnWriteArrayList<>())
                            .add(instance));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class Instance {
        @Bean
        Job job(DibsClient dibs, org.springframework.core.env.Environment env) {
            return new Job(dibs, env.getProperty("test.instance"));
        }

        /** The application's scheduler, its clock skewed by test.skew-ms. */
        @Bean
        ThreadPoolTaskScheduler taskScheduler(org.springframework.core.env.Environment env) {
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.setClock(Clock.offset(
                    Clock.systemDefaultZone(), Duration.ofMillis(Long.parseLong(env.getProperty("test.skew-ms")))));
            return scheduler;
        }
    }

    private static ApplicationContextRunner instance(long skewMs) {
        return Contexts.runner()
                .withUserConfiguration(Instance.class)
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "test.instance=skew" + skewMs,
                        "test.skew-ms=" + skewMs);
    }

    interface Body {
        void run() throws Exception;
    }

    private static void withInstances(List<Long> skews, Body body) {
        if (skews.isEmpty()) {
            try {
                body.run();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            return;
        }
        instance(skews.get(0)).run(c -> {
            assertThat(c).hasNotFailed();
            withInstances(skews.subList(1, skews.size()), body);
        });
    }

    @Test
    void schedulersThatFireEarlyOrLateNameTheirOwnTick() {
        RUNS.clear();
        UNRECORDED.clear();
        List<Long> skews = List.of(500L, 5L, -5L, -500L);
        withInstances(skews, () -> {
            long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
            while (RUNS.size() < 8) { // the first and last ticks may see instances still starting
                assertThat(System.nanoTime()).as("8 ticks run").isLessThan(deadline);
                Thread.sleep(50);
            }
        });
        Map<LocalDateTime, List<String>> byTick = new TreeMap<>();
        RUNS.forEach((tick, who) -> byTick.put(LocalDateTime.parse(tick), who));
        List<LocalDateTime> ticks = new ArrayList<>(byTick.keySet());
        System.out.println("ticks and who ran them: " + byTick);
        assertThat(UNRECORDED).as("every fire's tick came from its trigger").isEmpty();
        byTick.forEach((tick, who) -> {
            assertThat(who).as("tick " + tick + " ran once").hasSize(1);
            assertThat(tick.getSecond() % 2).as(tick + " is a fire time").isZero();
        });
        for (int i = 1; i < ticks.size(); i++) {
            assertThat(Duration.between(ticks.get(i - 1), ticks.get(i)))
                    .as("no tick missed")
                    .isEqualTo(Duration.ofSeconds(2));
        }
    }

    /**
     * Where no trigger recorded the fire (a method called directly), the fire nearest to now: 5 ms
     * and 500 ms early or late still name their own tick.
     */
    @Test
    void withoutATriggerTheFireNearestToNowWithinOneSecondEarly() {
        CronExpression everyTwo = CronExpression.parse("*/2 * * * * *");
        CronExpression nightly = CronExpression.parse("0 0 2 * * *");
        ZoneId utc = ZoneId.of("UTC");
        ZonedDateTime tick = ZonedDateTime.of(2026, 12, 4, 2, 0, 0, 0, utc);
        for (long offsetMs : new long[] {-500, -5, 0, 5, 500}) {
            ZonedDateTime now = tick.plus(Duration.ofMillis(offsetMs));
            assertThat(DibsScheduledTick.nearestFire(everyTwo, now))
                    .as("%d ms", offsetMs)
                    .contains(tick);
            assertThat(DibsScheduledTick.nearestFire(nightly, now))
                    .as("%d ms", offsetMs)
                    .contains(tick);
        }
        // Nightly: up to 1 s early is tonight's tick; 1.5 s early is still last night's run, late.
        assertThat(DibsScheduledTick.nearestFire(nightly, tick.minusSeconds(1))).contains(tick);
        assertThat(DibsScheduledTick.nearestFire(nightly, tick.minus(Duration.ofMillis(1500))))
                .contains(tick.minusDays(1));
        assertThat(DibsScheduledTick.nearestFire(nightly, tick.plusHours(3))).contains(tick);
        // Every 2 s: 900 ms late is this tick's; 1.1 s late is 0.9 s early for the next.
        assertThat(DibsScheduledTick.nearestFire(everyTwo, tick.plus(Duration.ofMillis(900))))
                .contains(tick);
        assertThat(DibsScheduledTick.nearestFire(everyTwo, tick.plus(Duration.ofMillis(1100)))
                        .map(DibsScheduledTick::name))
                .contains("2026-12-04T02:00:02");
    }
}
