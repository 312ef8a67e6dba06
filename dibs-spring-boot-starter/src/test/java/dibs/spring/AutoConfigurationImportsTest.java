package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/**
 * The starter as an application meets it: nothing named, only @EnableAutoConfiguration, so the
 * auto-configurations must be found through META-INF/spring/...AutoConfiguration.imports.
 */
class AutoConfigurationImportsTest {
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class App {}

    @Test
    void anApplicationGetsTheClientMetersAndActuatorFromTheClasspathAlone() throws IOException {
        try (RedisServer redis = RedisServer.launch();
                ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=redis://127.0.0.1:" + redis.port(),
                                "spring.main.banner-mode=off")
                        .run()) {
            DibsClient client = context.getBean(DibsClient.class);
            assertThat(client.execute("imports", Duration.ofSeconds(5), Duration.ZERO, () -> {}))
                    .isTrue();
            assertThat(context.getBeansOfType(DibsEndpoint.class)).hasSize(1);
            assertThat(context.containsBean("dibsHealthIndicator")).isTrue();
        }
    }
}
