package dibs.spring;

import dibs.Dibs;
import dibs.DibsArgumentException;
import dibs.DibsClient;
import dibs.DibsListener;
import dibs.DibsOptions;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

/**
 * One {@link DibsClient} bean, on the Redis of the application's {@code RedisConnectionDetails}
 * bean when it has one of its own ({@code @ServiceConnection}, Testcontainers), of
 * {@code spring.data.redis.*} otherwise, with {@code dibs.*}; unless the application declares its
 * own client. Off with {@code dibs.enabled=false}. Every {@link DibsListener} bean hears the
 * client's locked calls (the Micrometer meters and the held-locks view of the actuator endpoint
 * are such beans). A property that cannot be used fails the startup with a
 * {@link DibsStartupException} naming it. The client is closed with the context.
 *
 * <p>{@code spring.data.redis.*} is bound here with Spring's {@link Binder} rather than through
 * Boot's {@code RedisProperties} (Boot 3) or {@code DataRedisProperties} (Boot 4), so this one
 * class serves both, and no Spring Data Redis is needed.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
            "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration"
        })
@ConditionalOnClass(DibsClient.class)
@ConditionalOnProperty(prefix = "dibs", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(DibsProperties.class)
@Import({RedisDetailsBoot3.class, RedisDetailsBoot4.class})
public class DibsAutoConfiguration {
    private static final System.Logger LOG = System.getLogger("dibs.spring");

    /** Made by Spring. */
    public DibsAutoConfiguration() {}

    /** @return the locks whose tasks run on this instance now */
    @Bean
    @ConditionalOnMissingBean
    public DibsHeldLocks dibsHeldLocks() {
        return new DibsHeldLocks();
    }

    /** Where Redis is: the application's RedisConnectionDetails, or spring.data.redis.*. */
    @Bean
    RedisSettings dibsRedisSettings(
            Environment environment,
            ObjectProvider<RedisDetailsSource> sources,
            ObjectProvider<SslBundles> sslBundles) {
        Binder binder = Binder.get(environment);
        // The crons of @Scheduled methods may be placeholders: DibsScheduledTick resolves them here.
        DibsScheduledTick.resolvePlaceholdersWith(environment::resolveRequiredPlaceholders);
        RedisDetailsSource source = sources.getIfAvailable();
        RedisSettings.Details details = source == null ? null : source.details();
        return details == null
                ? RedisSettings.bind(binder, sslBundles.getIfAvailable())
                : RedisSettings.of(details, binder);
    }

    /**
     * @param redis where Redis is
     * @param properties the {@code dibs.*} properties
     * @param listeners every {@link DibsListener} bean, in their order
     * @return the client; Spring closes it with the context
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public DibsClient dibsClient(
            RedisSettings redis, DibsProperties properties, ObjectProvider<DibsListener> listeners) {
        DibsOptions.Builder options = redis.toOptions();
        if (properties.keyPrefix() != null) {
            options.keyPrefix(properties.keyPrefix());
        }
        options.keepAlive(properties.keepAlive());
        if (properties.durable() != null) {
            options.durable(properties.durable());
        }
        options.interruptOnLost(properties.interruptOnLost());
        if (properties.history() != null) {
            options.history(properties.history());
        }
        if (properties.instanceId() != null) {
            options.instanceId(properties.instanceId());
        }
        options.retryFailedTicks(properties.retryFailedTicks());
        options.retryUnendedTicks(properties.retryUnendedTicks());
        List<DibsListener> all = listeners.orderedStream().toList();
        if (!all.isEmpty()) {
            options.listener(all.size() == 1 ? all.get(0) : new CompositeListener(all));
        }
        DibsOptions built = options.build();
        DibsClient client;
        String address;
        try {
            // Parses and checks the options now (no I/O): a bad property fails the startup.
            address = built.describe();
            client = Dibs.client(built);
        } catch (DibsArgumentException e) {
            throw redis.refused(e);
        }
        LOG.log(
                System.Logger.Level.INFO,
                () -> "dibs: DibsClient on " + address + " (from " + redis.source() + "), " + properties);
        return client;
    }

    /**
     * @param properties {@code dibs.jobs.expect-every}
     * @return how often each job must run; a listener that finds the periods of
     *     {@code @Scheduled} jobs
     */
    @Bean
    @ConditionalOnMissingBean
    public DibsExpectations dibsExpectations(DibsProperties properties) {
        StartupChecks.check(properties.jobs());
        return new DibsExpectations(properties.jobs().expectEvery());
    }

    /**
     * @param client the client
     * @param expectations how often each job must run
     * @param properties {@code dibs.jobs.*}
     * @return the fleet view, read from the run history every {@code dibs.jobs.refresh}
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public DibsJobs dibsJobs(DibsClient client, DibsExpectations expectations, DibsProperties properties) {
        StartupChecks.check(properties.jobs());
        return new DibsJobs(client, expectations, properties.jobs(), java.time.Clock.systemUTC());
    }

    /** @return the check that a misspelt {@code dibs.*} property fails the start-up */
    @Bean
    static StartupChecks.Names dibsPropertyNames() {
        return new StartupChecks.Names();
    }

    /** @return what expects the jobs named by {@link DibsJob} from start-up on */
    @Bean
    static ExpectedAtStart dibsExpectedAtStart() {
        return new ExpectedAtStart();
    }

    /** @return the catch-up, at start-up, of the {@link CatchUp} methods' past ticks */
    @Bean
    static CatchUpAtStart dibsCatchUpAtStart() {
        return new CatchUpAtStart();
    }

    /**
     * @return what makes each run of a cron {@code @Scheduled} method know the fire time its
     *     trigger computed for it ({@link DibsScheduledTick})
     */
    @Bean
    static org.springframework.scheduling.annotation.SchedulingConfigurer dibsTickScheduler() {
        return new DibsTickScheduler.Configurer();
    }

    /** Where the client's Redis is, without credentials; for the health indicator. */
    @Bean
    @ConditionalOnMissingBean
    DibsTarget dibsTarget(RedisSettings redis) {
        return new DibsTarget(redis.describe());
    }

    /** The fleet view's gauges, where Micrometer is: bound by Boot to every registry. */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
    @ConditionalOnProperty(prefix = "dibs.metrics", name = "enabled", havingValue = "true", matchIfMissing = true)
    static class JobMeters {
        @Bean
        @ConditionalOnMissingBean
        DibsJobsMeters dibsJobsMeters(DibsJobs jobs) {
            return new DibsJobsMeters(jobs);
        }
    }
}
