package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.testsupport.RedisServer;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;

/**
 * These tests run twice, on Boot 3.5 (this module) and on Boot 4.0 (boot4/): each build names
 * the Boot it means in starter.test.expected-boot (not under dibs.*, which the starter checks),
 * so that a classpath that quietly kept the other Boot fails here, and the health indicator must
 * be that Boot's.
 */
class BootVersionTest {
    @Test
    void theBootOnTheClasspathIsTheOneThisBuildTestsAndItsHealthApiIsUsed() throws IOException {
        String expected = System.getProperty("starter.test.expected-boot");
        assertThat(expected)
                .as("-Dstarter.test.expected-boot, set by the build")
                .isNotNull();
        assertThat(SpringBootVersion.getVersion()).startsWith(expected + ".");
        Class<?> indicator = expected.startsWith("3") ? DibsHealthIndicatorBoot3.class : DibsHealthIndicatorBoot4.class;
        try (RedisServer redis = RedisServer.launch()) {
            Contexts.runner()
                    .withPropertyValues("spring.data.redis.port=" + redis.port())
                    .run(context ->
                            assertThat(context.getBean("dibsHealthIndicator")).isInstanceOf(indicator));
        }
    }
}
