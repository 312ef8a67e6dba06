package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A property dibs cannot use fails the startup, with a message that names the property, and
 * never shows a password. No Redis is needed: nothing here gets as far as I/O.
 */
class StartupFailureTest {
    private static final String PASSWORD = "hunter2-Secret";

    private static String failure(String... properties) {
        String[] message = new String[1];
        Contexts.runner().withPropertyValues(properties).run(context -> {
            assertThat(context).hasFailed();
            message[0] = Contexts.messages(context.getStartupFailure());
        });
        assertThat(message[0]).doesNotContain(PASSWORD);
        return message[0];
    }

    private static DibsStartupException startupFailure(String... properties) {
        DibsStartupException[] found = new DibsStartupException[1];
        Contexts.runner().withPropertyValues(properties).run(context -> {
            assertThat(context).hasFailed();
            found[0] = Contexts.startupException(context.getStartupFailure());
        });
        assertThat(found[0].getMessage()).doesNotContain(PASSWORD);
        return found[0];
    }

    @Test
    void unparsableValuesNameTheirProperty() {
        assertThat(failure("spring.data.redis.port=six", "spring.data.redis.password=" + PASSWORD))
                .contains("spring.data.redis.port");
        assertThat(failure("spring.data.redis.timeout=soon")).contains("spring.data.redis.timeout");
        assertThat(failure("spring.data.redis.database=x")).contains("spring.data.redis.database");
        assertThat(failure("spring.data.redis.ssl.enabled=perhaps")).contains("spring.data.redis.ssl.enabled");
        assertThat(failure("dibs.keep-alive=sometimes")).contains("dibs.keep-alive");
    }

    @Test
    void valuesDibsRejectsNameTheSpringProperty() {
        assertThat(startupFailure("spring.data.redis.port=70000").property()).isEqualTo("spring.data.redis.port");
        assertThat(startupFailure("spring.data.redis.timeout=0s").property()).isEqualTo("spring.data.redis.timeout");
        assertThat(startupFailure("spring.data.redis.connect-timeout=-1s").property())
                .isEqualTo("spring.data.redis.connect-timeout");
        assertThat(startupFailure("spring.data.redis.timeout=100us").property()).isEqualTo("spring.data.redis.timeout");
        // A node written as a URI, credentials and all: dibs refuses it without echoing it.
        assertThat(startupFailure("spring.data.redis.cluster.nodes=redis://u:" + PASSWORD + "@127.0.0.1:7000")
                        .property())
                .isEqualTo("spring.data.redis.cluster.nodes");
        DibsStartupException refused =
                startupFailure("spring.data.redis.port=0", "spring.data.redis.password=" + PASSWORD);
        assertThat(refused.property()).isEqualTo("spring.data.redis.port");
        // By the argument dibs names, never its message: the cause carries it.
        assertThat(refused.getCause()).isInstanceOf(dibs.DibsArgumentException.class);
        assertThat(((dibs.DibsArgumentException) refused.getCause()).argument()).isEqualTo("port");
        assertThat(startupFailure("spring.data.redis.cluster.nodes=127.0.0.1:7000", "spring.data.redis.database=2")
                        .property())
                .isEqualTo("spring.data.redis.database");
    }

    @Test
    void aUrlThatIsNotRedisIsNamedButNotEchoed() {
        DibsStartupException e = startupFailure("spring.data.redis.url=http://user:" + PASSWORD + "@host:6379");
        assertThat(e.property()).isEqualTo("spring.data.redis.url");
    }

    @Test
    void aUrlWhosePasswordLacksItsAtIsNamedButNotEchoed() {
        // A forgotten '@' puts the password where the port would be: no '@' to strip it at.
        DibsStartupException e = startupFailure("spring.data.redis.url=redis://:" + PASSWORD);
        assertThat(e.property()).isEqualTo("spring.data.redis.url");
        assertThat(failure("spring.data.redis.url=redis://:" + PASSWORD)).doesNotContain(PASSWORD);
    }

    @Test
    void sentinelNeedsBothMasterAndNodes() {
        assertThat(startupFailure("spring.data.redis.sentinel.nodes=127.0.0.1:26379")
                        .property())
                .isEqualTo("spring.data.redis.sentinel.master");
        assertThat(startupFailure("spring.data.redis.sentinel.master=mymaster").property())
                .isEqualTo("spring.data.redis.sentinel.nodes");
    }

    @Test
    void aSentinelUsernameWithoutItsPasswordIsRefused() {
        DibsStartupException e = startupFailure(
                "spring.data.redis.sentinel.master=mymaster",
                "spring.data.redis.sentinel.nodes=127.0.0.1:26379",
                "spring.data.redis.sentinel.username=watcher");
        assertThat(e.property()).isEqualTo("spring.data.redis.sentinel.password");
    }

    @Test
    void aSentinelPasswordWithoutSentinelsOrEmptyIsIgnoredAsInSpringBoot() {
        for (String[] properties : new String[][] {
            {"spring.data.redis.host=127.0.0.1", "spring.data.redis.sentinel.password=" + PASSWORD},
            {
                "spring.data.redis.sentinel.master=mymaster",
                "spring.data.redis.sentinel.nodes=127.0.0.1:26379",
                "spring.data.redis.sentinel.password="
            }
        }) {
            Contexts.runner()
                    .withPropertyValues(properties)
                    .run(context -> assertThat(context).hasNotFailed().hasSingleBean(dibs.DibsClient.class));
        }
    }

    @Test
    void sentinelAndClusterTogetherAreRefused() {
        assertThat(startupFailure(
                                "spring.data.redis.sentinel.master=m",
                                "spring.data.redis.sentinel.nodes=h:1",
                                "spring.data.redis.cluster.nodes=h:2")
                        .property())
                .isEqualTo("spring.data.redis.cluster.nodes");
    }

    @Test
    void aMissingSslBundleIsNamed() {
        DibsStartupException e = startupFailure("spring.data.redis.ssl.bundle=redis-ca");
        assertThat(e.property()).isEqualTo("spring.data.redis.ssl.bundle");
        assertThat(e.getMessage()).contains("spring.ssl.bundle.pem.redis-ca");
        // A bundle whose file is missing: the startup fails, on Spring's word or dibs's, naming it.
        assertThat(failure(
                        "spring.data.redis.ssl.bundle=redis-ca",
                        "spring.ssl.bundle.pem.redis-ca.truststore.certificate=file:/nonexistent/ca.pem"))
                .contains("/nonexistent/ca.pem");
    }
}
