package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dibs.Dibs;
import dibs.DibsAuthenticationException;
import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The DibsClient bean from spring.data.redis.* and dibs.*, against a real redis-server. */
class DibsAutoConfigurationTest {
    private static final String PASSWORD = "s3cret-Pw";

    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    @RegisterExtension
    static final RedisServer secured = RedisServer.perTestClass("--requirepass", PASSWORD);

    /** Runs a task under the lock and reports what Redis held while it ran: EXISTS of {@code key}, in {@code db}. */
    static String existsWhileRunning(DibsClient client, RedisServer server, int db, String key) {
        AtomicReference<String> seen = new AtomicReference<>();
        boolean ran = client.execute("job", Duration.ofSeconds(10), Duration.ZERO, () -> {
            try {
                seen.set(server.commandInDb(db, "EXISTS", key));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        assertThat(ran).isTrue();
        return seen.get();
    }

    @Test
    void hostAndPortMakeOneClientThatLocksUnderTheDefaultPrefix() {
        Contexts.runner()
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port())
                .run(context -> {
                    assertThat(context).hasSingleBean(DibsClient.class);
                    assertThat(existsWhileRunning(context.getBean(DibsClient.class), redis, 0, "dibs:job"))
                            .isEqualTo("1");
                });
    }

    @Test
    void databaseAndKeyPrefixAreUsed() {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "spring.data.redis.database=3",
                        "dibs.key-prefix=svc:")
                .run(context -> assertThat(existsWhileRunning(context.getBean(DibsClient.class), redis, 3, "svc:job"))
                        .isEqualTo("1"));
    }

    @Test
    void theUrlsDatabaseWinsOverTheDatabasePropertyAsInSpringBoot() {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.url=redis://127.0.0.1:" + redis.port() + "/4",
                        "spring.data.redis.database=5")
                .run(context -> assertThat(existsWhileRunning(context.getBean(DibsClient.class), redis, 4, "dibs:job"))
                        .isEqualTo("1"));
    }

    @Test
    void theUrlWinsOverHostAndPortAsInSpringBoot() {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.url=redis://127.0.0.1:" + redis.port(),
                        "spring.data.redis.host=192.0.2.1",
                        "spring.data.redis.port=1")
                .run(context -> assertThat(existsWhileRunning(context.getBean(DibsClient.class), redis, 0, "dibs:job"))
                        .isEqualTo("1"));
    }

    @Test
    void passwordFromPropertiesAuthenticates() {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + secured.port(), "spring.data.redis.password=" + PASSWORD)
                .run(context -> {
                    assertThat(existsWhileRunning(context.getBean(DibsClient.class), secured, 0, "dibs:job"))
                            .isEqualTo("1");
                    assertThat(context.getBean(DibsProperties.class).toString()).doesNotContain(PASSWORD);
                });
    }

    @Test
    void aUrlWithoutCredentialsOverridesThePasswordPropertyAsInSpringBoot() {
        // Boot's documented rule: the url overrides username and password, even when it has none.
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.url=redis://127.0.0.1:" + secured.port(),
                        "spring.data.redis.password=" + PASSWORD)
                .run(context -> assertThatThrownBy(() -> context.getBean(DibsClient.class)
                                .execute("job", Duration.ofSeconds(5), Duration.ZERO, () -> {}))
                        .isInstanceOf(DibsAuthenticationException.class));
    }

    @Test
    void passwordInTheUrlAuthenticatesAndAWrongOneIsRefused() {
        Contexts.runner()
                .withPropertyValues("spring.data.redis.url=redis://:" + PASSWORD + "@127.0.0.1:" + secured.port())
                .run(context -> assertThat(
                                existsWhileRunning(context.getBean(DibsClient.class), secured, 0, "dibs:job"))
                        .isEqualTo("1"));
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + secured.port(), "spring.data.redis.password=wrong-pw-77")
                .run(context -> {
                    DibsClient client = context.getBean(DibsClient.class);
                    try {
                        client.execute("job", Duration.ofSeconds(5), Duration.ZERO, () -> {});
                        throw new AssertionError("a wrong password was accepted");
                    } catch (DibsAuthenticationException e) {
                        assertThat(e.getMessage()).doesNotContain("wrong-pw-77");
                    }
                });
    }

    @Test
    void keepAlivePropertyExtendsALockPastAtMost() {
        Contexts.runner()
                .withPropertyValues("spring.data.redis.port=" + redis.port(), "dibs.keep-alive=true")
                .run(context -> {
                    DibsClient client = context.getBean(DibsClient.class);
                    var result = client.attempt("kept", Duration.ofMillis(600), Duration.ZERO, () -> {
                        sleep(1500);
                        return "done";
                    });
                    // Without keep-alive the 600 ms lock would have expired under the 1.5 s task.
                    assertThat(result.ownedToTheEnd()).isTrue();
                    assertThat(context.getBean(DibsProperties.class).keepAlive())
                            .isTrue();
                });
    }

    @Test
    void timeoutPropertyBoundsACallToASilentServer() throws IOException {
        try (RedisServer frozen = RedisServer.launch()) {
            Contexts.runner()
                    .withPropertyValues(
                            "spring.data.redis.port=" + frozen.port(),
                            "spring.data.redis.timeout=300ms",
                            "spring.data.redis.connect-timeout=300ms")
                    .run(context -> {
                        DibsClient client = context.getBean(DibsClient.class);
                        frozen.freeze();
                        long start = System.nanoTime();
                        try {
                            client.execute("job", Duration.ofSeconds(5), Duration.ZERO, () -> {});
                            throw new AssertionError("a frozen server answered");
                        } catch (dibs.DibsConnectionException expected) {
                            long ms = (System.nanoTime() - start) / 1_000_000;
                            // 300 ms each for the connect and a retry on a fresh connection, far below dibs's 4 s
                            // default.
                            assertThat(ms).isLessThan(2500);
                        } finally {
                            frozen.thaw();
                        }
                    });
        }
    }

    @Test
    void theTargetIsDibsOwnDescriptionWithoutCredentialsOrSpringsDefaults() {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.url=redis://:" + PASSWORD + "@127.0.0.1:" + secured.port() + "/3")
                .run(context -> assertThat(context.getBean(DibsTarget.class).address())
                        .isEqualTo("127.0.0.1:" + secured.port()));
        // Nothing set: dibs's default address, not Spring's "localhost".
        Contexts.runner()
                .run(context ->
                        assertThat(context.getBean(DibsTarget.class).address()).isEqualTo("127.0.0.1:6379"));
    }

    @Test
    void anApplicationClientWinsAndDisabledMeansNoBean() {
        Contexts.runner()
                .withUserConfiguration(OwnClient.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    assertThat(context).hasSingleBean(DibsClient.class);
                    assertThat(context.getBean(DibsClient.class)).isSameAs(context.getBean("ownClient"));
                });
        Contexts.runner()
                .withPropertyValues("dibs.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(DibsClient.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnClient {
        @Bean(destroyMethod = "close")
        DibsClient ownClient() {
            return Dibs.client("redis://127.0.0.1:" + redis.port());
        }
    }

    @Test
    void sentinelPropertiesFindTheMaster() throws Exception {
        try (SentinelProcess sentinel = SentinelProcess.start(redis.port())) {
            Contexts.runner()
                    // A master without replicas: durable acquire's default would wait for one in vain.
                    .withPropertyValues(
                            "spring.data.redis.sentinel.master=mymaster",
                            "spring.data.redis.sentinel.nodes=127.0.0.1:" + sentinel.port(),
                            "dibs.durable=off")
                    .run(context -> assertThat(
                                    existsWhileRunning(context.getBean(DibsClient.class), redis, 0, "dibs:job"))
                            .isEqualTo("1"));
        }
    }

    @Test
    void sentinelUsernameAndPasswordAreTheSentinelsOwn() throws Exception {
        try (SentinelProcess sentinel = SentinelProcess.start(redis.port(), "watcher", "w@tch-pw")) {
            String[] sentinelProperties = {
                "spring.data.redis.sentinel.master=mymaster",
                "spring.data.redis.sentinel.nodes=127.0.0.1:" + sentinel.port(),
                "dibs.durable=off"
            };
            Contexts.runner()
                    .withPropertyValues(sentinelProperties)
                    .withPropertyValues(
                            "spring.data.redis.sentinel.username=watcher",
                            "spring.data.redis.sentinel.password=w@tch-pw")
                    .run(context -> assertThat(
                                    existsWhileRunning(context.getBean(DibsClient.class), redis, 0, "dibs:job"))
                            .isEqualTo("1"));
            // Without them, the Sentinel refuses to name the master: an authentication error at the call.
            Contexts.runner()
                    .withPropertyValues(sentinelProperties)
                    .run(context -> assertThatThrownBy(() -> context.getBean(DibsClient.class)
                                    .execute("job", Duration.ofSeconds(5), Duration.ZERO, () -> {}))
                            .isInstanceOf(dibs.DibsAuthenticationException.class));
        }
    }

    @Test
    void clusterNodesReachASingleNodeCluster() throws Exception {
        try (RedisServer cluster = ClusterNode.start()) {
            Contexts.runner()
                    .withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:" + cluster.port())
                    .run(context -> assertThat(
                                    existsWhileRunning(context.getBean(DibsClient.class), cluster, 0, "dibs:job"))
                            .isEqualTo("1"));
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
