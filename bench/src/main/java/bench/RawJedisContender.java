package bench;

import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;
import redis.clients.jedis.params.SetParams;

/**
 * The raw limit: the two round trips of a lock cycle and nothing else. Each thread holds one
 * Jedis connection for its whole run: {@code SET key value NX PX 10000}, then EVALSHA of dibs's
 * release script. No token, no bookkeeping, no pool traffic per call.
 */
// JedisPool is deprecated in Jedis 7 for RedisClient; it is what ShedLock and most services use.
@SuppressWarnings("deprecation")
final class RawJedisContender implements Contender {
    static final String NAME = "raw Jedis";

    /** dibs's release script, as in src/lock.rs (RELEASE_SCRIPT); the text must match byte for byte. */
    static final String RELEASE_SCRIPT = "\n"
            + "if redis.call('GET', KEYS[1]) ~= ARGV[1] then\n"
            + "  return 0\n"
            + "end\n"
            + "local remaining = tonumber(ARGV[2])\n"
            + "if remaining > 0 then\n"
            + "  redis.call('PEXPIRE', KEYS[1], remaining)\n"
            + "  return 1\n"
            + "end\n"
            + "redis.call('DEL', KEYS[1])\n"
            + "return 2\n";

    private final JedisPool pool;
    private final String sha;

    RawJedisContender(String host, int port, int maxThreads) {
        JedisPoolConfig config = new JedisPoolConfig();
        config.setMaxTotal(maxThreads);
        config.setMaxIdle(maxThreads);
        pool = new JedisPool(config, host, port);
        try (Jedis jedis = pool.getResource()) {
            sha = jedis.scriptLoad(RELEASE_SCRIPT);
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String key(String lockName) {
        return "raw:" + lockName;
    }

    @Override
    public Caller caller(String lockName) {
        Jedis jedis = pool.getResource();
        String key = key(lockName);
        // One value per thread: the floor does not pay for a fresh token.
        String value = "raw;" + Thread.currentThread().getId();
        SetParams nxPx = SetParams.setParams().nx().px(AT_MOST_MS);
        return new Caller() {
            @Override
            public boolean call() {
                if (!"OK".equals(jedis.set(key, value, nxPx))) {
                    return false;
                }
                Object released = jedis.evalsha(sha, 1, key, value, "0");
                if (!Long.valueOf(2).equals(released)) {
                    throw new IllegalStateException("release of " + key + " returned " + released);
                }
                return true;
            }

            @Override
            public void close() {
                jedis.close();
            }
        };
    }

    @Override
    public void close() {
        pool.close();
    }
}
