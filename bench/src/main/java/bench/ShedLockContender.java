package bench;

import java.time.Duration;
import java.util.List;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockingTaskExecutor.TaskWithResult;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import net.javacrumbs.shedlock.provider.redis.support.InternalRedisLockProvider;
import net.javacrumbs.shedlock.provider.redis.support.InternalRedisLockTemplate;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;
import redis.clients.jedis.params.SetParams;

/**
 * ShedLock's {@link DefaultLockingTaskExecutor} over one of its Redis lock providers, with
 * {@code safeUpdate} on: the release checks the lock's value in a Lua script, as dibs does.
 */
// JedisPool is deprecated in Jedis 7 for RedisClient; ShedLock's Jedis provider takes one.
@SuppressWarnings("deprecation")
final class ShedLockContender implements Contender {
    static final String JEDIS = "ShedLock-Jedis";
    static final String LETTUCE = "ShedLock-Lettuce";

    private static final Duration AT_MOST = Duration.ofSeconds(AT_MOST_SEC);
    private static final TaskWithResult<Boolean> NO_OP = () -> Boolean.TRUE;

    private final String name;
    private final String environment;
    private final LockingTaskExecutor executor;
    private final AutoCloseable resources;

    private ShedLockContender(String name, String environment, LockProvider provider, AutoCloseable resources) {
        this.name = name;
        this.environment = environment;
        this.executor = new DefaultLockingTaskExecutor(provider);
        this.resources = resources;
    }

    /**
     * ShedLock's Redis lock logic (shedlock-support-redis) on a JedisPool of {@code maxThreads}
     * connections, plugged in exactly as ShedLock's own Jedis provider does it: the 6.x/7.x
     * shedlock-provider-redis-jedis4 jar is that class plus the template below, and it is not
     * served by the registry this project builds from.
     */
    static ShedLockContender jedis(String host, int port, int maxThreads) {
        JedisPoolConfig config = new JedisPoolConfig();
        config.setMaxTotal(maxThreads);
        config.setMaxIdle(maxThreads);
        JedisPool pool = new JedisPool(config, host, port);
        String env = "jedis";
        LockProvider provider = new InternalRedisLockProvider(
                new JedisPoolTemplate(pool), env, InternalRedisLockProvider.DEFAULT_KEY_PREFIX, true);
        return new ShedLockContender(JEDIS, env, provider, pool::close);
    }

    /** ShedLock's Spring Data Redis provider on a LettuceConnectionFactory (one shared connection, its default). */
    static ShedLockContender lettuce(String host, int port) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port));
        factory.afterPropertiesSet();
        factory.start();
        String env = "lettuce";
        LockProvider provider = new RedisLockProvider.Builder(factory)
                .environment(env)
                .safeUpdate(true)
                .build();
        return new ShedLockContender(LETTUCE, env, provider, factory::destroy);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String key(String lockName) {
        return InternalRedisLockProvider.DEFAULT_KEY_PREFIX + ":" + environment + ":" + lockName;
    }

    @Override
    public Caller caller(String lockName) {
        // A configuration per call, as ShedLock's scheduler integration makes one per run.
        return () -> {
            try {
                return executor.executeWithLock(
                                NO_OP, new LockConfiguration(ClockProvider.now(), lockName, AT_MOST, Duration.ZERO))
                        .wasExecuted();
            } catch (Exception | Error e) {
                throw e;
            } catch (Throwable t) { // executeWithLock declares Throwable; a no-op task throws nothing else
                throw new IllegalStateException(t);
            }
        };
    }

    @Override
    public void close() {
        try {
            resources.close();
        } catch (Exception e) {
            throw new IllegalStateException("closing " + name, e);
        }
    }

    /** The four Redis calls ShedLock's lock logic needs, each on a connection borrowed from the pool. */
    private static final class JedisPoolTemplate implements InternalRedisLockTemplate {
        private final JedisPool pool;

        JedisPoolTemplate(JedisPool pool) {
            this.pool = pool;
        }

        @Override
        public boolean setIfAbsent(String key, String value, long expirationMs) {
            return set(key, value, SetParams.setParams().nx().px(expirationMs));
        }

        @Override
        public boolean setIfPresent(String key, String value, long expirationMs) {
            return set(key, value, SetParams.setParams().xx().px(expirationMs));
        }

        private boolean set(String key, String value, SetParams params) {
            try (Jedis jedis = pool.getResource()) {
                return "OK".equals(jedis.set(key, value, params));
            }
        }

        @Override
        public Object eval(String script, String key, String... values) {
            try (Jedis jedis = pool.getResource()) {
                return jedis.eval(script, List.of(key), List.of(values));
            }
        }

        @Override
        public void delete(String key) {
            try (Jedis jedis = pool.getResource()) {
                jedis.del(key);
            }
        }
    }
}
