package dibs.spring;

import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Boot 4's {@code DataRedisConnectionDetails} (spring-boot-data-redis, org.springframework.boot.data.redis.autoconfigure). */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails")
// Never both: Boot 3's type wins where a stray Boot 4 jar sits beside it.
@ConditionalOnMissingClass("org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails")
class RedisDetailsBoot4 {
    /** Boot's own, from spring.data.redis.*: the properties are read instead. */
    private static final String FROM_PROPERTIES =
            "org.springframework.boot.data.redis.autoconfigure.PropertiesDataRedisConnectionDetails";

    @Bean
    RedisDetailsSource dibsRedisDetailsSource(ObjectProvider<DataRedisConnectionDetails> beans) {
        return () -> {
            DataRedisConnectionDetails d = beans.getIfAvailable();
            return d == null || d.getClass().getName().equals(FROM_PROPERTIES) ? null : read(d);
        };
    }

    /** Boot's order: Sentinel, then Cluster, then master/replica (refused), then standalone. */
    static RedisSettings.Details read(DataRedisConnectionDetails d) {
        DataRedisConnectionDetails.Sentinel sentinel = d.getSentinel();
        if (sentinel != null) {
            return new RedisSettings.Details(
                    d.getUsername(),
                    d.getPassword(),
                    null,
                    null,
                    sentinel.getDatabase(),
                    sentinel.getMaster(),
                    nodes(sentinel.getNodes()),
                    sentinel.getUsername(),
                    sentinel.getPassword(),
                    null,
                    d.getSslBundle());
        }
        DataRedisConnectionDetails.Cluster cluster = d.getCluster();
        if (cluster != null) {
            return new RedisSettings.Details(
                    d.getUsername(),
                    d.getPassword(),
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    nodes(cluster.getNodes()),
                    d.getSslBundle());
        }
        if (d.getMasterReplica() != null) {
            throw new DibsStartupException(
                    RedisSettings.DETAILS + ".master-replica",
                    "is not supported: dibs locks on one master (give standalone, sentinel or cluster)");
        }
        DataRedisConnectionDetails.Standalone standalone = d.getStandalone();
        return new RedisSettings.Details(
                d.getUsername(),
                d.getPassword(),
                standalone.getHost(),
                standalone.getPort(),
                standalone.getDatabase(),
                null,
                null,
                null,
                null,
                null,
                d.getSslBundle());
    }

    private static List<String> nodes(List<DataRedisConnectionDetails.Node> nodes) {
        return nodes.stream()
                .map(n -> RedisSettings.Details.node(n.host(), n.port()))
                .toList();
    }
}
