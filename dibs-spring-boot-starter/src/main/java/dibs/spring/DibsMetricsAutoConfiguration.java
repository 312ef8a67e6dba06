package dibs.spring;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * dibs's Micrometer meters ({@link DibsMetrics}), when Micrometer is on the classpath and the
 * application has a {@link MeterRegistry}, and its observations ({@link DibsObservations}) when it
 * has an {@code ObservationRegistry} too; nothing otherwise. Off with
 * {@code dibs.metrics.enabled=false}. Runs after Boot's registry auto-configurations, named for
 * Boot 3 and Boot 4 (their packages differ; a name that is absent is ignored).
 */
@AutoConfiguration(
        before = DibsAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"
        })
@ConditionalOnClass({MeterRegistry.class, dibs.DibsClient.class})
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnProperty(
        prefix = "dibs",
        name = {"enabled", "metrics.enabled"},
        havingValue = "true",
        matchIfMissing = true)
public class DibsMetricsAutoConfiguration {
    /** Made by Spring. */
    public DibsMetricsAutoConfiguration() {}

    /** @return the default tag function, {@link DibsLockTag#DEFAULT} */
    @Bean
    @ConditionalOnMissingBean
    public DibsLockTag dibsLockTag() {
        return DibsLockTag.DEFAULT;
    }

    /**
     * @param registry the application's registry
     * @param tag lock name to tag value
     * @return the listener that feeds the meters
     */
    @Bean
    @ConditionalOnMissingBean
    public DibsMetrics dibsMetrics(MeterRegistry registry, DibsLockTag tag, TagLimit limit) {
        return new DibsMetrics(registry, tag, limit);
    }

    /** The bound on the lock tag's values, one for the meters and the observations alike. */
    @Bean
    TagLimit dibsTagLimit(DibsProperties properties) {
        StartupChecks.check(properties.metrics());
        return new TagLimit(properties.metrics().maxTags());
    }

    /**
     * Each locked call as an Observation ({@link DibsObservations}), on the application's
     * {@code ObservationRegistry}: a trace shows the lock's span inside the scheduled task's.
     */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.observation.ObservationRegistry")
    @ConditionalOnBean(type = "io.micrometer.observation.ObservationRegistry")
    static class Observations {
        @Bean
        @ConditionalOnMissingBean
        DibsObservations dibsObservations(
                io.micrometer.observation.ObservationRegistry registry, DibsLockTag tag, TagLimit limit) {
            return new DibsObservations(registry, tag, limit);
        }
    }
}
