package dibs.spring;

import static dibs.spring.FleetViews.await;
import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsCatchUp;
import dibs.testsupport.RedisServer;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * A cron without a {@code zone} fires in the zone of its scheduler's clock (Spring's
 * {@code CronTrigger}); the starter's catch-up at start-up names its ticks in that zone too, as
 * the fires do. Found by the robustness harness (issue 44, finding 10): a Spring instance whose
 * scheduler's clock was in another zone than the system's, restarted, named the start-up's ticks
 * in the system's zone, other names for the same instants, and ran ticks that had run already.
 * A method on a second scheduler ({@code scheduler = ...}) with its own clock's zone names its
 * ticks in that one.
 */
class ClockZoneCatchUpTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    /** Another zone than the JVM's, without DST: each instant has one local name. */
    static final ZoneId CLOCK_ZONE = ZoneId.systemDefault().equals(ZoneId.of("Asia/Kolkata"))
            ? ZoneId.of("Asia/Tokyo")
            : ZoneId.of("Asia/Kolkata");

    /** A second scheduler's clock's zone, for the methods that name it. */
    static final ZoneId OTHER_ZONE = ZoneId.of("Pacific/Chatham");

    /** The ticks each call listed: at start-up, then the fires'. */
    static final List<Map<Instant, String>> CALLS = new CopyOnWriteArrayList<>();

    /** The same, of the method on the second scheduler. */
    static final List<Map<Instant, String>> OTHER_CALLS = new CopyOnWriteArrayList<>();

    static final class Job {
        @Scheduled(cron = "* * * * * *")
        @CatchUp(policy = "all", window = "PT10S")
        void everySecond() {
            DibsCatchUp ticks = DibsScheduledTick.catchUp();
            CALLS.add(Map.copyOf(ticks.ticks()));
        }

        @Scheduled(cron = "* * * * * *", scheduler = "otherScheduler")
        @CatchUp(policy = "all", window = "PT10S")
        void onTheOtherScheduler() {
            OTHER_CALLS.add(Map.copyOf(DibsScheduledTick.catchUp().ticks()));
        }
    }

    @Configuration
    @EnableScheduling
    @ImportAutoConfiguration(DibsAutoConfiguration.class)
    static class App {
        @Bean
        ThreadPoolTaskScheduler taskScheduler() {
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.setClock(Clock.system(CLOCK_ZONE));
            return scheduler;
        }

        @Bean
        ThreadPoolTaskScheduler otherScheduler() {
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.setClock(Clock.system(OTHER_ZONE));
            return scheduler;
        }

        @Bean
        Job job() {
            return new Job();
        }
    }

    @Test
    void theStartUpsTicksAreNamedInTheSchedulersZoneAsTheFiresAre() throws Exception {
        CALLS.clear();
        OTHER_CALLS.clear();
        // A whole application: the start-up's catch-up runs when it is ready.
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties("spring.data.redis.port=" + redis.port(), "spring.main.banner-mode=off")
                .run()) {
            await(
                    "the start-up's call and two fires on each scheduler",
                    () -> CALLS.size() >= 3 && OTHER_CALLS.size() >= 3);
            namedIn(CLOCK_ZONE, CALLS);
            namedIn(OTHER_ZONE, OTHER_CALLS);
        }
    }

    private static void namedIn(ZoneId zone, List<Map<Instant, String>> calls) {
        for (Map<Instant, String> call : calls) {
            call.forEach((due, name) -> assertThat(
                            LocalDateTime.parse(name).atZone(zone).toInstant())
                    .as("tick %s, due %s, named in %s", name, due, zone)
                    .isEqualTo(due));
        }
    }
}
