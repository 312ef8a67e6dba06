package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;

/**
 * Micrometer, Actuator and ShedLock are optional: without them the client is made and nothing of
 * theirs is; with Boot's own metrics auto-configuration (not a registry the test declares), the meters
 * are registered in Boot's registry.
 */
class OptionalDependenciesTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    @Test
    void withoutMicrometerOrActuatorTheClientStillWorks() {
        Contexts.runner()
                .withClassLoader(new FilteredClassLoader(
                        "io.micrometer",
                        "org.springframework.boot.actuate",
                        "org.springframework.boot.health",
                        "net.javacrumbs.shedlock",
                        "dibs.shedlock"))
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    assertThat(context)
                            .hasNotFailed()
                            .hasSingleBean(DibsClient.class)
                            .doesNotHaveBean(DibsMetrics.class)
                            .doesNotHaveBean(DibsEndpoint.class)
                            .doesNotHaveBean("dibsHealthIndicator");
                    assertThat(context.getBean(DibsClient.class)
                                    .execute("plain", Duration.ofSeconds(5), Duration.ZERO, () -> {}))
                            .isTrue();
                });
    }

    /** Boot's metrics auto-configurations, by their Boot 3 or Boot 4 names, whichever exist. */
    private static Class<?>[] bootMetricsAutoConfigurations() {
        String[][] names = {
            {
                "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration"
            },
            {
                "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"
            },
            {
                "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"
            },
        };
        List<Class<?>> found = new ArrayList<>();
        for (String[] either : names) {
            Class<?> c = null;
            for (String name : either) {
                try {
                    c = Class.forName(name);
                    break;
                } catch (ClassNotFoundException e) {
                    // the other Boot's name
                }
            }
            assertThat(c).as("one of " + String.join(", ", either)).isNotNull();
            found.add(c);
        }
        return found.toArray(new Class<?>[0]);
    }

    @Test
    void bootsOwnRegistryGetsTheMeters() {
        // Boot's auto-configurations listed first and dibs's last: the ordering must come from
        // DibsMetricsAutoConfiguration's afterName, not from this list.
        Contexts.runner()
                .withConfiguration(AutoConfigurations.of(bootMetricsAutoConfigurations()))
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    assertThat(context).hasSingleBean(DibsMetrics.class);
                    context.getBean(DibsClient.class)
                            .execute("report-2026-12-01", Duration.ofSeconds(5), Duration.ZERO, () -> {});
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("dibs.lock.acquired")
                                    .tag("lock", "report")
                                    .counter()
                                    .count())
                            .isEqualTo(1);
                });
    }
}
