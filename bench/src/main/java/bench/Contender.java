package bench;

import java.util.List;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.SetParams;

/**
 * One way of running a lock cycle: SET NX PX, a no-op task, a token-checked release. Every
 * contender uses the same lock parameters ({@link #AT_MOST_SEC} s at most, 0 at least, so that
 * every cycle that wins also deletes its key).
 */
interface Contender extends AutoCloseable {
    long AT_MOST_SEC = 10;
    long AT_MOST_MS = AT_MOST_SEC * 1000;

    /** The contenders, in the order of the tables. */
    List<String> NAMES = List.of(
            DibsContender.NAME,
            DibsContender.HISTORY_OFF,
            ShedLockContender.JEDIS,
            ShedLockContender.LETTUCE,
            RawJedisContender.NAME,
            RedissonContender.NAME);

    /**
     * Builds a contender by name. It may connect lazily; {@link #close()} frees what it made.
     *
     * @param maxThreads the most threads that will call it at once, to size connection pools
     */
    static Contender create(String name, String host, int port, int maxThreads) {
        switch (name) {
            case DibsContender.NAME:
                return new DibsContender(host, port);
            case DibsContender.HISTORY_OFF:
                return new DibsContender(host, port, false, DibsContender.HISTORY_OFF);
            case ShedLockContender.JEDIS:
                return ShedLockContender.jedis(host, port, maxThreads);
            case ShedLockContender.LETTUCE:
                return ShedLockContender.lettuce(host, port);
            case RawJedisContender.NAME:
                return new RawJedisContender(host, port, maxThreads);
            case RedissonContender.NAME:
                return new RedissonContender(host, port, maxThreads);
            default:
                throw new IllegalArgumentException("unknown contender " + name + "; known: " + NAMES);
        }
    }

    String name();

    /** The Redis key this contender uses for lock {@code lockName}. */
    String key(String lockName);

    /** Makes lock {@code lockName} held by another holder for {@code millis}, for the skip path. */
    default void holdElsewhere(Jedis jedis, String lockName, long millis) {
        jedis.set(key(lockName), "someone-else", SetParams.setParams().px(millis));
    }

    /**
     * A caller of lock {@code lockName} for the current thread; make it on the thread that uses
     * it, and close it there.
     */
    Caller caller(String lockName) throws Exception;

    @Override
    void close();

    /** One thread's handle on one lock name. */
    interface Caller extends AutoCloseable {
        /** One full call; true if the lock was won (and the task ran), false if skipped. */
        boolean call() throws Exception;

        @Override
        default void close() {}
    }
}
