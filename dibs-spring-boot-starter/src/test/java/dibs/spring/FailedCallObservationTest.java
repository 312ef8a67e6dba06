package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsArgumentException;
import dibs.DibsClient;
import dibs.DibsConnectionException;
import dibs.testsupport.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Issue 42 (8): a locked call that throws before its lock is won still ends its
 * {@code dibs.lock.call} observation, with the exception and outcome {@code error}. A
 * {@code @Scheduled} method's calls run against a real redis-server, then against it killed (3
 * fires during the outage), then with an invalid name, then on a thread of no scheduled run
 * (dibs's {@code acquireFailed}). Every observation started is stopped, with its exception.
 */
class FailedCallObservationTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    /** Each fire's call: "ok" (a lock), "invalid" (an invalid name), or none yet. */
    static final BlockingQueue<String> NEXT = new LinkedBlockingQueue<>();
    /** One entry per fire that made its call. */
    static final BlockingQueue<String> FIRED = new LinkedBlockingQueue<>();

    static final List<Observation.Context> STARTED = new CopyOnWriteArrayList<>();
    static final List<Observation.Context> STOPPED = new CopyOnWriteArrayList<>();
    static final BlockingQueue<Observation.Context> STOPS = new LinkedBlockingQueue<>();

    static class Job {
        private final DibsClient dibs;

        Job(DibsClient dibs) {
            this.dibs = dibs;
        }

        @Scheduled(fixedDelay = 20)
        void poll() {
            String what = NEXT.poll();
            if (what == null) {
                return;
            }
            FIRED.add(what);
            dibs.execute(what.equals("invalid") ? "" : "outage-job", Duration.ofSeconds(5), Duration.ZERO, () -> {});
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class App {
        @Bean
        ObservationRegistry observationRegistry() {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(new ObservationHandler<>() {
                @Override
                public void onStart(Observation.Context context) {
                    if (context.getName().equals(DibsObservations.NAME)) {
                        STARTED.add(context);
                    }
                }

                @Override
                public void onStop(Observation.Context context) {
                    if (context.getName().equals(DibsObservations.NAME)) {
                        STOPPED.add(context);
                        STOPS.add(context);
                    }
                }

                @Override
                public boolean supportsContext(Observation.Context context) {
                    return true;
                }
            });
            return registry;
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        Job job(DibsClient dibs) {
            return new Job(dibs);
        }
    }

    private static String outcome(Observation.Context context) {
        return context.getLowCardinalityKeyValue("outcome").getValue();
    }

    /** The next fire's call, made; and the observation it stopped. */
    private static Observation.Context fire(String what) throws InterruptedException {
        NEXT.add(what);
        assertThat(FIRED.poll(10, TimeUnit.SECONDS)).as("a fire made the call").isEqualTo(what);
        // The run ends right after its call threw (within the 500 ms timeout): stopped then.
        Observation.Context stopped = STOPS.poll(10, TimeUnit.SECONDS);
        assertThat(stopped).as("the call's observation stopped").isNotNull();
        return stopped;
    }

    @Test
    void everyStartedObservationIsStoppedWithTheCallsException() {
        Contexts.runner()
                .withUserConfiguration(App.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port(), "spring.data.redis.timeout=500ms")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(outcome(fire("ok"))).isEqualTo("ran");

                    redis.kill();
                    for (int i = 0; i < 3; i++) {
                        Observation.Context failed = fire("ok");
                        assertThat(outcome(failed)).isEqualTo("error");
                        assertThat(failed.getError()).isInstanceOf(DibsConnectionException.class);
                    }

                    Observation.Context invalid = fire("invalid");
                    assertThat(outcome(invalid)).isEqualTo("error");
                    assertThat(invalid.getError()).isInstanceOf(DibsArgumentException.class);

                    // Outside a scheduled run too: dibs tells acquireFailed, and the observation
                    // stops at once with the call's exception, on any thread.
                    DibsClient dibs = context.getBean(DibsClient.class);
                    for (String name : new String[] {"", "outage-job"}) {
                        RuntimeException thrown = null;
                        try {
                            dibs.execute(name, Duration.ofSeconds(5), Duration.ZERO, () -> {});
                        } catch (DibsArgumentException | DibsConnectionException expected) {
                            thrown = expected; // the call's own exception, as the caller gets it
                        }
                        Observation.Context direct = STOPS.poll(10, TimeUnit.SECONDS);
                        assertThat(direct).as("stopped when the call threw").isNotNull();
                        assertThat(outcome(direct)).isEqualTo("error");
                        assertThat(direct.getError()).isSameAs(thrown);
                    }
                    assertThat(STARTED).hasSize(7);
                    assertThat(STOPPED).containsExactlyInAnyOrderElementsOf(STARTED);
                });
    }
}
