package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;

/**
 * The tick of a {@code @Scheduled} cron method (issue 18): derived from its trigger, the same on
 * every instance, so that {@code executeOnce} runs each tick once. Two application contexts
 * (two instances) with one cron job race on the same redis-server.
 */
class DibsScheduledTickTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    /** Per tick, which instances ran it. */
    static final Map<String, List<String>> RUNS = new ConcurrentHashMap<>();

    static final AtomicInteger FIRED = new AtomicInteger();

    static class Job {
        private final DibsClient dibs;
        private final String instance;

        Job(DibsClient dibs, String instance) {
            this.dibs = dibs;
            this.instance = instance;
        }

        @Scheduled(cron = "${test.cron}")
        void everySecond() {
            FIRED.incrementAndGet();
            String tick = DibsScheduledTick.current().orElseThrow();
            dibs.executeOnce(
                    "scheduled-tick-test",
                    tick,
                    Duration.ofSeconds(10),
                    () -> RUNS.computeIfAbsent(tick, t -> new CopyOnWriteArrayList<>())
                            .add(instance));
        }

        @Scheduled(fixedRate = 60_000, initialDelay = 3_600_000)
        void fixedRate() {}
    }

    @Configuration
    @EnableScheduling
    static class Instance {
        @Bean
        Job job(DibsClient dibs, org.springframework.core.env.Environment env) {
            return new Job(dibs, env.getProperty("test.instance"));
        }
    }

    @Test
    void twoInstancesRunEachTickOfACronJobOnce() throws Exception {
        RUNS.clear();
        var a = Contexts.runner()
                .withUserConfiguration(Instance.class)
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(), "test.instance=a", "test.cron=* * * * * *");
        var b = Contexts.runner()
                .withUserConfiguration(Instance.class)
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(), "test.instance=b", "test.cron=* * * * * *");
        a.run(ca -> b.run(cb -> Thread.sleep(4_500)));
        assertThat(FIRED.get()).as("both schedulers fired").isGreaterThanOrEqualTo(6);
        assertThat(RUNS).as("ticks run").hasSizeGreaterThanOrEqualTo(3);
        RUNS.forEach((tick, who) -> {
            assertThat(who).as("tick " + tick + " ran once").hasSize(1);
            assertThat(LocalDateTime.parse(tick).getNano()).isZero();
        });
    }

    @Test
    void noTickOutsideACronMethodOrForAFixedRate() {
        assertThat(DibsScheduledTick.current()).isEmpty();
        AtomicReference<Optional<String>> seen = new AtomicReference<>();
        new Object() {
            @Scheduled(fixedRate = 1000)
            void run() {
                seen.set(DibsScheduledTick.current());
            }
        }.run();
        assertThat(seen.get()).isEmpty();
    }

    @Test
    void theLatestFireTimeAtOrBeforeNow() {
        ZoneId utc = ZoneId.of("UTC");
        ZonedDateTime now = ZonedDateTime.of(2026, 12, 2, 10, 0, 3, 500_000_000, utc);
        assertThat(DibsScheduledTick.latestFire(CronExpression.parse("*/2 * * * * *"), now))
                .contains(ZonedDateTime.of(2026, 12, 2, 10, 0, 2, 0, utc));
        assertThat(DibsScheduledTick.latestFire(CronExpression.parse("0 0 2 * * *"), now))
                .contains(ZonedDateTime.of(2026, 12, 2, 2, 0, 0, 0, utc));
        // Weekdays at 9: on a Wednesday at 10, today's; found through a window that doubles.
        assertThat(DibsScheduledTick.latestFire(CronExpression.parse("0 0 9 * * MON-FRI"), now))
                .contains(ZonedDateTime.of(2026, 12, 2, 9, 0, 0, 0, utc));
        // Exactly at a fire time: that one.
        assertThat(DibsScheduledTick.latestFire(
                        CronExpression.parse("0 0 2 * * *"), ZonedDateTime.of(2026, 12, 2, 2, 0, 0, 0, utc)))
                .contains(ZonedDateTime.of(2026, 12, 2, 2, 0, 0, 0, utc));
    }
}
