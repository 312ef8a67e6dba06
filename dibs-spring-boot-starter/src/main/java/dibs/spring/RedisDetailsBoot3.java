package dibs.spring;

import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Boot 3's {@code RedisConnectionDetails} (org.springframework.boot.autoconfigure.data.redis). */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails")
class RedisDetailsBoot3 {
    /** Boot's own, from spring.data.redis.*: the properties are read instead. */
    private static final String FROM_PROPERTIES =
            "org.springframework.boot.autoconfigure.data.redis.PropertiesRedisConnectionDetails";

    @Bean
    RedisDetailsSource dibsRedisDetailsSource(ObjectProvider<RedisConnectionDetails> beans) {
        return () -> {
            RedisConnectionDetails d = beans.getIfAvailable();
            return d == null || d.getClass().getName().equals(FROM_PROPERTIES) ? null : read(d);
        };
    }

    /** Boot's order: Sentinel, then Cluster, then standalone. */
    static RedisSettings.Details read(RedisConnectionDetails d) {
        RedisConnectionDetails.Sentinel sentinel = d.getSentinel();
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
                    sentinel.getSslBundle());
        }
        RedisConnectionDetails.Cluster cluster = d.getCluster();
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
                    cluster.getSslBundle());
        }
        RedisConnectionDetails.Standalone standalone = d.getStandalone();
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
                standalone.getSslBundle());
    }

    private static List<String> nodes(List<RedisConnectionDetails.Node> nodes) {
        return nodes.stream()
                .map(n -> RedisSettings.Details.node(n.host(), n.port()))
                .toList();
    }
}
