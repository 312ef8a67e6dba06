package bench;

import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import redis.clients.jedis.Jedis;

/**
 * Redisson's lock as a service would use it for a scheduled job: {@code lock.tryLock(0, 10 s)},
 * the no-op task, {@code lock.unlock()}. Not the same protocol as the others: the lock is a hash
 * (field {@code <client id>:<thread id>} holding a re-entry count) taken by a Lua script, and the
 * release is a Lua script that also PUBLISHes an unlock message for waiters. A lease time is
 * given, so no watchdog runs; a wait time of 0 means a skipped call never subscribes.
 */
final class RedissonContender implements Contender {
    static final String NAME = "Redisson";
    private static final Runnable NO_OP = () -> {};

    private final RedissonClient client;

    RedissonContender(String host, int port, int maxThreads) {
        Config config = new Config();
        config.useSingleServer()
                .setAddress("redis://" + host + ":" + port)
                // Sized for the thread count, as the JedisPools are; Redisson multiplexes over it.
                .setConnectionPoolSize(Math.max(maxThreads, 1))
                .setConnectionMinimumIdleSize(Math.min(maxThreads, 24));
        client = Redisson.create(config);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String key(String lockName) {
        return "redisson:" + lockName;
    }

    /** A Redisson lock is a hash: a plain string there would make its script fail with WRONGTYPE. */
    @Override
    public void holdElsewhere(Jedis jedis, String lockName, long millis) {
        String key = key(lockName);
        jedis.hset(key, "someone-else:1", "1");
        jedis.pexpire(key, millis);
    }

    @Override
    public Caller caller(String lockName) {
        RLock lock = client.getLock(key(lockName));
        return () -> {
            if (!lock.tryLock(0, AT_MOST_MS, TimeUnit.MILLISECONDS)) {
                return false;
            }
            try {
                NO_OP.run();
            } finally {
                lock.unlock();
            }
            return true;
        };
    }

    @Override
    public void close() {
        client.shutdown();
    }
}
