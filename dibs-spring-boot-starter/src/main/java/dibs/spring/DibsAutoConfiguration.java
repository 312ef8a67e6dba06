package dibs.spring;

import dibs.Dibs;
import dibs.DibsClient;
import dibs.DibsListener;
import dibs.DibsOptions;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * One {@link DibsClient} bean from {@code spring.data.redis.*} and {@code dibs.*}, unless the
 * application declares its own; off with {@code dibs.enabled=false}. Every {@link DibsListener}
 * bean hears the client's locked calls (the Micrometer meters and the held-locks view of the
 * actuator endpoint are such beans). A property that cannot be used fails the startup with a
 * {@link DibsStartupException} naming it. The client is closed with the context.
 *
 * <p>The properties are bound here with Spring's {@link Binder} rather than through Boot's
 * {@code RedisProperties} (Boot 3) or {@code DataRedisProperties} (Boot 4), so this one class
 * serves both, and no Spring Data Redis is needed.
 */
@AutoConfiguration
@ConditionalOnClass(DibsClient.class)
@ConditionalOnProperty(prefix = "dibs", name = "enabled", havingValue = "true", matchIfMissing = true)
public class DibsAutoConfiguration {
    private static final System.Logger LOG = System.getLogger("dibs.spring");

    /** Made by Spring. */
    public DibsAutoConfiguration() {}

    /**
     * @param environment the properties
     * @return the {@code dibs.*} properties
     */
    @Bean
    @ConditionalOnMissingBean
    public DibsProperties dibsProperties(Environment environment) {
        return DibsProperties.bind(Binder.get(environment));
    }

    /** @return the locks whose tasks run on this instance now */
    @Bean
    @ConditionalOnMissingBean
    public DibsHeldLocks dibsHeldLocks() {
        return new DibsHeldLocks();
    }

    /**
     * @param environment the properties
     * @param properties the {@code dibs.*} properties
     * @param listeners every {@link DibsListener} bean, in their order
     * @return the client; Spring closes it with the context
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public DibsClient dibsClient(Environment environment, DibsProperties properties,
            ObjectProvider<DibsListener> listeners) {
        RedisSettings redis = RedisSettings.bind(Binder.get(environment));
        DibsOptions.Builder options = redis.toOptions();
        if (properties.keyPrefix() != null) {
            options.keyPrefix(properties.keyPrefix());
        }
        options.keepAlive(properties.keepAlive());
        List<DibsListener> all = listeners.orderedStream().toList();
        if (!all.isEmpty()) {
            options.listener(all.size() == 1 ? all.get(0) : new CompositeListener(all));
        }
        DibsClient client;
        try {
            // Parses and checks the options now (no I/O): a bad property fails the startup.
            client = Dibs.client(options.build());
        } catch (IllegalArgumentException e) {
            throw DibsStartupException.fromDibs(e, redis.describe());
        }
        LOG.log(System.Logger.Level.INFO, () -> "dibs: DibsClient on " + redis.describe() + ", " + properties);
        return client;
    }

    /** Where the client's Redis is, without credentials; for the health indicator. */
    @Bean
    @ConditionalOnMissingBean
    DibsTarget dibsTarget(Environment environment) {
        return new DibsTarget(RedisSettings.bind(Binder.get(environment)).describe());
    }
}
