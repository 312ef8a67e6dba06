package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
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
import org.springframework.core.env.Environment;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.SimpleAsyncTaskScheduler;

/**
 * The tick of a cron run that its scheduler hands to a thread of its own: Spring's
 * SimpleAsyncTaskScheduler, which Boot picks with {@code spring.threads.virtual.enabled=true}. It
 * computes the next fire right after the hand-off, so on a loaded machine the run's thread starts
 * after that. Here the fault is made: each run's thread starts 300 ms after its hand-off. Two
 * instances run a cron of every second through {@code executeOnce(job, DibsScheduledTick.current(),
 * 900 ms)}; every run names its own fire (never one still to come), each tick runs once and none is
 * missed. Before, the run named the next fire: the spring-boot-check's virtual-threads run missed a
 * tick in CI when each instance's run started late.
 */
@Timeout(60)
class HandedOffTickTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    static final String JOB = "handed-off-tick";
    static final Duration LATE_START = Duration.ofMillis(300);
    /** Per tick, which instances ran it. */
    static final Map<String, List<String>> RUNS = new ConcurrentHashMap<>();
    /** Runs that named a tick after the moment they ran. */
    static final List<String> AHEAD = new CopyOnWriteArrayList<>();

    static class Job {
        private final DibsClient dibs;
        private final String instance;

        Job(DibsClient dibs, String instance) {
            this.dibs = dibs;
            this.instance = instance;
        }

        @Scheduled(cron = "* * * * * *")
        void everySecond() {
            LocalDateTime now = LocalDateTime.now(ZoneId.systemDefault());
            String tick = DibsScheduledTick.current().orElseThrow();
            if (LocalDateTime.parse(tick).isAfter(now)) {
                AHEAD.add(instance + " ran at " + now + " as " + tick);
            }
            dibs.executeOnce(
                    JOB,
                    tick,
                    Duration.ofMillis(900),
                    () -> RUNS.computeIfAbsent(tick, t -> new CopyOnWriteArrayList<>())
                            .add(instance));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class Instance {
        @Bean
        Job job(DibsClient dibs, Environment env) {
            return new Job(dibs, env.getProperty("test.instance"));
        }

        /** Boot's scheduler for virtual threads, on platform threads: the hand-off is the same. */
        @Bean
        SimpleAsyncTaskScheduler taskScheduler() {
            SimpleAsyncTaskScheduler scheduler = new SimpleAsyncTaskScheduler();
            scheduler.setTaskDecorator(run -> () -> {
                try {
                    Thread.sleep(LATE_START.toMillis()); // the fault: the run's thread starts late
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                run.run();
            });
            return scheduler;
        }
    }

    private static ApplicationContextRunner instance(String name) {
        return Contexts.runner()
                .withUserConfiguration(Instance.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port(), "test.instance=" + name);
    }

    @Test
    void aRunHandedToALateThreadNamesItsOwnFire() {
        RUNS.clear();
        AHEAD.clear();
        instance("one").run(one -> {
            assertThat(one).hasNotFailed();
            instance("two").run(two -> {
                assertThat(two).hasNotFailed();
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (RUNS.size() < 8) { // the first and last ticks may see an instance starting
                    assertThat(System.nanoTime()).as("8 ticks run").isLessThan(deadline);
                    Thread.sleep(50);
                }
            });
        });
        Map<LocalDateTime, List<String>> byTick = new TreeMap<>();
        RUNS.forEach((tick, who) -> byTick.put(LocalDateTime.parse(tick), who));
        System.out.println("ticks and who ran them: " + byTick);
        assertThat(AHEAD).as("runs that named a fire still to come").isEmpty();
        byTick.forEach(
                (tick, who) -> assertThat(who).as("tick " + tick + " ran once").hasSize(1));
        List<LocalDateTime> ticks = new ArrayList<>(byTick.keySet());
        for (int i = 1; i < ticks.size(); i++) {
            assertThat(Duration.between(ticks.get(i - 1), ticks.get(i)))
                    .as("no tick missed")
                    .isEqualTo(Duration.ofSeconds(1));
        }
    }
}
