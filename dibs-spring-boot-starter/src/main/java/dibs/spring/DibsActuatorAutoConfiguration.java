package dibs.spring;

import dibs.DibsClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Actuator side, when Actuator is on the classpath: the {@code dibs} health indicator (Boot
 * 3's or Boot 4's health API, whichever is present; off with
 * {@code management.health.dibs.enabled=false}), the read-only {@code dibs} endpoint, and with
 * {@code dibs.actuator.force-release=true} the {@code dibsrelease} endpoint.
 */
@AutoConfiguration(after = DibsAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
@ConditionalOnBean({DibsClient.class, DibsHeldLocks.class, DibsProperties.class})
public class DibsActuatorAutoConfiguration {
    /** Made by Spring. */
    public DibsActuatorAutoConfiguration() {}

    /**
     * @param held the locks held now
     * @param client the client
     * @param properties the dibs properties
     * @return the {@code /actuator/dibs} endpoint
     */
    @Bean
    @ConditionalOnMissingBean
    public DibsEndpoint dibsEndpoint(
            DibsHeldLocks held, DibsClient client, DibsProperties properties, ObjectProvider<DibsJobs> jobs) {
        return new DibsEndpoint(held, client, properties, jobs.getIfAvailable());
    }

    /**
     * Only with {@code dibs.actuator.force-release=true}; reachable once exposed by its own id.
     *
     * @param client the client
     * @return the {@code /actuator/dibsrelease} endpoint: an operator's forced release
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(prefix = "dibs.actuator", name = "force-release", havingValue = "true")
    public DibsReleaseEndpoint dibsReleaseEndpoint(DibsClient client) {
        return new DibsReleaseEndpoint(client);
    }

    /**
     * @param jobs the fleet view
     * @param properties {@code dibs.jobs.overdue-status}
     * @return the check behind the {@code dibsJobs} health indicator
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(DibsJobs.class)
    public DibsJobsHealthCheck dibsJobsHealthCheck(DibsJobs jobs, DibsProperties properties) {
        return new DibsJobsHealthCheck(jobs, properties.jobs().overdueStatus());
    }

    /**
     * @param client the client
     * @param target where its Redis is
     * @return the check behind the health indicator
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(DibsTarget.class)
    public DibsHealthCheck dibsHealthCheck(DibsClient client, DibsTarget target) {
        return new DibsHealthCheck(client, target);
    }

    /** Boot 3: org.springframework.boot.actuate.health. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.health.AbstractHealthIndicator")
    @ConditionalOnProperty(prefix = "management.health.dibs", name = "enabled", matchIfMissing = true)
    static class Boot3Health {
        @Bean
        @ConditionalOnMissingBean(name = "dibsHealthIndicator")
        DibsHealthIndicatorBoot3 dibsHealthIndicator(DibsHealthCheck check) {
            return new DibsHealthIndicatorBoot3(check);
        }

        @Bean
        @ConditionalOnMissingBean(name = "dibsJobsHealthIndicator")
        // Not on DibsJobsHealthCheck: this nested class is read before the outer one's beans.
        @ConditionalOnBean(DibsJobs.class)
        DibsJobsHealthIndicatorBoot3 dibsJobsHealthIndicator(DibsJobsHealthCheck check) {
            return new DibsJobsHealthIndicatorBoot3(check);
        }
    }

    /** Boot 4: org.springframework.boot.health.contributor. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.AbstractHealthIndicator")
    // Never both: Boot 3's API wins where a stray Boot 4 health jar sits beside it.
    @ConditionalOnMissingClass("org.springframework.boot.actuate.health.AbstractHealthIndicator")
    @ConditionalOnProperty(prefix = "management.health.dibs", name = "enabled", matchIfMissing = true)
    static class Boot4Health {
        @Bean
        @ConditionalOnMissingBean(name = "dibsHealthIndicator")
        DibsHealthIndicatorBoot4 dibsHealthIndicator(DibsHealthCheck check) {
            return new DibsHealthIndicatorBoot4(check);
        }

        @Bean
        @ConditionalOnMissingBean(name = "dibsJobsHealthIndicator")
        @ConditionalOnBean(DibsJobs.class)
        DibsJobsHealthIndicatorBoot4 dibsJobsHealthIndicator(DibsJobsHealthCheck check) {
            return new DibsJobsHealthIndicatorBoot4(check);
        }
    }
}
