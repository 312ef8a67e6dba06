package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.time.zone.ZoneRulesProvider;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ConcurrentTaskScheduler;

/**
 * Issue 42 (3): one tick per fire instant through both DST transitions. Spring's own cron
 * ({@code 0 *}{@code /15 * * * *}) runs on a scheduler whose clock is virtual: each fire happens
 * at once, at its fire time. At a fall-back it fires the repeated hour twice; each of the 8
 * fires runs, under names of their own, with an {@code atMost} of 2 h (which kept the second
 * pass's plain names done) and with {@code @CatchUp}. America/New_York's own transitions serve
 * the plain {@code executeOnce}; catch-up looks at most 30 days back, so its test runs in a
 * zone with New York's offsets whose transitions were in the last days ({@code Dibs/NewYorkRecent},
 * which {@code java.time} knows and {@code TimeZone} does not: it is the scheduler clock's zone,
 * in which Spring fires a cron without a {@code zone}). In the past, not the future: the ticks
 * of the window before the first fire are then due before the job's first run by the server's
 * clock, as they are in life, and catch-up {@code all} (which looks at every tick of its window)
 * owes none of them.
 */
class DstTickTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
    static final ZoneOffset EDT = ZoneOffset.ofHours(-4);
    static final ZoneOffset EST = ZoneOffset.ofHours(-5);
    /** The day of the fall-back in {@code Dibs/NewYorkRecent}, four days ago; its spring-forward, two. */
    static final LocalDate RECENT = LocalDate.now(ZoneOffset.UTC).minusDays(4);

    static {
        LocalDateTime back = RECENT.atTime(2, 0);
        LocalDateTime forward = RECENT.plusDays(2).atTime(2, 0);
        ZoneRules rules = ZoneRules.of(
                EST,
                EDT,
                List.of(),
                List.of(ZoneOffsetTransition.of(back, EDT, EST), ZoneOffsetTransition.of(forward, EST, EDT)),
                List.of());
        ZoneRulesProvider.registerProvider(new ZoneRulesProvider() {
            @Override
            protected Set<String> provideZoneIds() {
                return Set.of("Dibs/NewYorkRecent");
            }

            @Override
            protected ZoneRules provideRules(String zoneId, boolean forCaching) {
                return rules;
            }

            @Override
            protected NavigableMap<String, ZoneRules> provideVersions(String zoneId) {
                return new TreeMap<>(Map.of("1", rules));
            }
        });
    }

    /** The ticks run, in order. */
    static final List<String> RAN = new CopyOnWriteArrayList<>();

    static class PlainJob {
        private final DibsClient dibs;
        private final String job;

        PlainJob(DibsClient dibs, String job) {
            this.dibs = dibs;
            this.job = job;
        }

        @Scheduled(cron = "0 */15 * * * *", zone = "${test.zone}")
        void quarterly() {
            String tick = DibsScheduledTick.current().orElseThrow();
            dibs.executeOnce(job, tick, Duration.ofHours(2), () -> RAN.add(tick));
        }
    }

    static class CatchUpJob {
        private final DibsClient dibs;
        private final String job;

        CatchUpJob(DibsClient dibs, String job) {
            this.dibs = dibs;
            this.job = job;
        }

        @Scheduled(cron = "0 */15 * * * *") // the scheduler's clock's zone, as Spring's CronTrigger
        @CatchUp(policy = "all", window = "PT3H")
        void quarterly() {
            dibs.executeOnce(job, DibsScheduledTick.catchUp(), Duration.ofHours(2), RAN::add);
        }
    }

    /**
     * A scheduler of virtual time: each task is run at once, with the clock set to the time it
     * was due; none due after {@code test.end} (epoch ms) runs, and the latch then opens.
     */
    static final class VirtualTime extends ScheduledThreadPoolExecutor {
        final MutableClock clock;
        final Instant end;
        final CountDownLatch done = new CountDownLatch(1);

        VirtualTime(Instant start, Instant end, ZoneId zone) {
            super(1);
            this.clock = new MutableClock(start, zone);
            this.end = end;
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            Instant due = clock.instant().plusNanos(unit.toNanos(delay));
            if (due.isAfter(end)) {
                done.countDown();
                return super.schedule(() -> {}, 1, TimeUnit.DAYS);
            }
            return super.schedule(
                    () -> {
                        clock.now = due;
                        command.run();
                    },
                    0,
                    TimeUnit.NANOSECONDS);
        }
    }

    static final class MutableClock extends Clock {
        volatile Instant now;
        final ZoneId zone;

        MutableClock(Instant now, ZoneId zone) {
            this.now = now;
            this.zone = zone;
        }

        @Override
        public ZoneId getZone() {
            return zone;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class Instance {
        @Bean
        VirtualTime virtualTime(Environment env) {
            return new VirtualTime(
                    Instant.parse(env.getProperty("test.start")),
                    Instant.parse(env.getProperty("test.end")),
                    ZoneId.of(env.getProperty("test.zone")));
        }

        @Bean
        ConcurrentTaskScheduler taskScheduler(VirtualTime time) {
            ConcurrentTaskScheduler scheduler = new ConcurrentTaskScheduler(time);
            scheduler.setClock(time.clock);
            return scheduler;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Plain {
        @Bean
        PlainJob job(DibsClient dibs, Environment env) {
            return new PlainJob(dibs, env.getProperty("test.job"));
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class WithCatchUp {
        @Bean
        CatchUpJob job(DibsClient dibs, Environment env) {
            return new CatchUpJob(dibs, env.getProperty("test.job"));
        }
    }

    /** The ticks run by fires from {@code start} to {@code end}, in order. */
    private static List<String> run(Class<?> job, String name, String zone, ZonedDateTime start, ZonedDateTime end) {
        RAN.clear();
        Contexts.runner()
                .withUserConfiguration(Instance.class, job)
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "test.job=" + name,
                        "test.zone=" + zone,
                        "test.start=" + start.toInstant(),
                        "test.end=" + end.toInstant())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(VirtualTime.class).done.await(30, TimeUnit.SECONDS))
                            .as("the fires reached the end")
                            .isTrue();
                });
        return List.copyOf(RAN);
    }

    private static List<String> fallBack(LocalDate day) {
        String d = day.toString();
        return List.of(
                d + "T01:00",
                d + "T01:15",
                d + "T01:30",
                d + "T01:45",
                d + "T01:00-05:00",
                d + "T01:15-05:00",
                d + "T01:30-05:00",
                d + "T01:45-05:00",
                d + "T02:00",
                d + "T02:15");
    }

    private static List<String> springForward(LocalDate day) {
        String d = day.toString();
        return List.of(d + "T01:30", d + "T01:45", d + "T03:00", d + "T03:15", d + "T03:30");
    }

    private static ZonedDateTime at(LocalDate day, int hour, int minute, ZoneOffset offset, ZoneId zone) {
        return ZonedDateTime.ofStrict(LocalDateTime.of(day, LocalTime.of(hour, minute)), offset, zone);
    }

    @Test
    void eachFireOfTheRepeatedHourRunsItsOwnTick() {
        LocalDate back = LocalDate.of(2026, 11, 1);
        assertThat(run(
                        Plain.class,
                        "dst-plain-back",
                        "America/New_York",
                        at(back, 0, 50, EDT, NEW_YORK),
                        at(back, 2, 20, EST, NEW_YORK)))
                .isEqualTo(fallBack(back));
        LocalDate forward = LocalDate.of(2026, 3, 8);
        assertThat(run(
                        Plain.class,
                        "dst-plain-forward",
                        "America/New_York",
                        at(forward, 1, 20, EST, NEW_YORK),
                        at(forward, 3, 40, EDT, NEW_YORK)))
                .isEqualTo(springForward(forward));
    }

    @Test
    void withCatchUpEachFireOfTheRepeatedHourRunsItsOwnTick() {
        ZoneId recent = ZoneId.of("Dibs/NewYorkRecent");
        assertThat(run(
                        WithCatchUp.class,
                        "dst-catch-up-back",
                        recent.getId(),
                        at(RECENT, 0, 50, EDT, recent),
                        at(RECENT, 2, 20, EST, recent)))
                .isEqualTo(fallBack(RECENT));
        LocalDate forward = RECENT.plusDays(2);
        assertThat(run(
                        WithCatchUp.class,
                        "dst-catch-up-forward",
                        recent.getId(),
                        at(forward, 1, 20, EST, recent),
                        at(forward, 3, 40, EDT, recent)))
                .isEqualTo(springForward(forward));
    }
}
