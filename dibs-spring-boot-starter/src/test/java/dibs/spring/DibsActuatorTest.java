package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationContext;

/**
 * The health indicator and the /actuator/dibs endpoint. The indicator is Boot 3's or Boot 4's
 * type depending on the Boot these tests run on, so it is called by reflection here: the test
 * is the same on both.
 */
class DibsActuatorTest {
    private static final String PASSWORD = "pw-Never-Shown";

    /** The status code and details of the "dibsHealthIndicator" bean, whatever Boot's health API. */
    private static Map<String, Object> health(ApplicationContext context, String[] status) throws Exception {
        Object indicator = context.getBean("dibsHealthIndicator");
        Method health = indicator.getClass().getMethod("health");
        Object h = health.invoke(indicator);
        Object s = h.getClass().getMethod("getStatus").invoke(h);
        status[0] = (String) s.getClass().getMethod("getCode").invoke(s);
        @SuppressWarnings("unchecked")
        Map<String, Object> details =
                (Map<String, Object>) h.getClass().getMethod("getDetails").invoke(h);
        return details;
    }

    @Test
    void healthIsUpWhileRedisAnswersAndDownWithTheReasonWhenItDoesNot() throws IOException {
        try (RedisServer redis = RedisServer.launch("--requirepass", PASSWORD)) {
            Contexts.runner()
                    .withPropertyValues(
                            "spring.data.redis.port=" + redis.port(),
                            "spring.data.redis.password=" + PASSWORD,
                            "spring.data.redis.timeout=500ms",
                            "spring.data.redis.connect-timeout=500ms")
                    .run(context -> {
                        String[] status = new String[1];
                        Map<String, Object> details = health(context, status);
                        assertThat(status[0]).isEqualTo("UP");
                        assertThat(details)
                                .containsEntry("nativeLibrary", "loaded")
                                .containsEntry("redis", "127.0.0.1:" + redis.port());

                        redis.stop();
                        details = health(context, status);
                        assertThat(status[0]).isEqualTo("DOWN");
                        assertThat(String.valueOf(details.get("reason"))).startsWith("Redis did not answer");
                        assertThat(details.toString()).doesNotContain(PASSWORD);
                    });
        }
    }

    @Test
    void healthIndicatorCanBeTurnedOff() throws IOException {
        try (RedisServer redis = RedisServer.launch()) {
            Contexts.runner()
                    .withPropertyValues(
                            "spring.data.redis.port=" + redis.port(), "management.health.dibs.enabled=false")
                    .run(context -> assertThat(context)
                            .doesNotHaveBean("dibsHealthIndicator")
                            .hasSingleBean(DibsEndpoint.class));
        }
    }

    @Test
    void endpointListsTheLockHeldNowWithItsTtlAndNothingAfter() throws IOException {
        try (RedisServer redis = RedisServer.launch()) {
            Contexts.runner()
                    .withPropertyValues("spring.data.redis.port=" + redis.port(), "dibs.keep-alive=true")
                    .run(context -> {
                        DibsClient client = context.getBean(DibsClient.class);
                        DibsEndpoint endpoint = context.getBean(DibsEndpoint.class);
                        assertThat(endpoint.locks().count()).isZero();
                        CountDownLatch running = new CountDownLatch(1);
                        CountDownLatch done = new CountDownLatch(1);
                        Thread t = new Thread(
                                () -> client.execute("export-2026-12-01", Duration.ofSeconds(30), Duration.ZERO, () -> {
                                    running.countDown();
                                    DibsMetricsTest.await(done);
                                }));
                        t.start();
                        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
                        Thread.sleep(100);
                        DibsEndpoint.Locks locks = endpoint.locks();
                        done.countDown();
                        t.join(10_000);

                        assertThat(locks.count()).isEqualTo(1);
                        DibsEndpoint.HeldLock held = locks.locks().get(0);
                        assertThat(held.name()).isEqualTo("export-2026-12-01");
                        assertThat(held.heldForMs()).isBetween(100L, 10_000L);
                        assertThat(held.remainingTtlMs()).isBetween(1L, 30_000L);
                        assertThat(held.keepAlive()).isTrue();
                        assertThat(held.fencingToken()).isPositive();
                        assertThat(endpoint.locks().count()).isZero();
                    });
        }
    }
}
