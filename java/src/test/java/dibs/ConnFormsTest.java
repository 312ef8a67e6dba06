package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import clojure.lang.Keyword;
import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Every form of conn reaches the same server (the lock key shows up there during the task). */
@Timeout(60)
class ConnFormsTest extends RedisTestBase {
    /** Runs a task through conn and returns what the lock key held on our server meanwhile. */
    private static String keySeenDuringTask(Object conn, String key, String name) {
        AtomicReference<String> seen = new AtomicReference<>();
        assertTrue(
                Dibs.execute(conn, name, 10, 0, () -> {
                    try {
                        seen.set(redis.command("EXISTS", key));
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }),
                "won the lock through " + conn);
        return seen.get();
    }

    private static void assertReaches(Object conn) {
        String name = uniqueName("form");
        assertEquals("1", keySeenDuringTask(conn, lockKey(name), name), "lock key on our server via " + conn);
    }

    private static Keyword kw(String name) {
        return Keyword.intern(name);
    }

    @Test
    void uriString() {
        assertReaches(redis.uri());
        assertReaches("redis://127.0.0.1:" + redis.port() + "/0");
    }

    @Test
    void mapWithUri() {
        assertReaches(Map.of("uri", redis.uri()));
    }

    @Test
    void mapWithHostAndPortOfEveryNumberType() {
        assertReaches(Map.of("host", "127.0.0.1", "port", redis.port()));
        assertReaches(Map.of("host", "127.0.0.1", "port", (long) redis.port()));
        assertReaches(Map.of("host", "127.0.0.1", "port", Integer.toString(redis.port())));
    }

    @Test
    void carmineConnMap() {
        assertReaches(Map.of("spec", Map.of("uri", redis.uri()), "pool", Map.of("max-total", 4)));
        assertReaches(Map.of("spec", Map.of("host", "127.0.0.1", "port", redis.port()), "pool", Map.of()));
    }

    @Test
    void clojureMapsWithKeywordKeys() {
        assertReaches(Map.of(kw("host"), "127.0.0.1", kw("port"), (long) redis.port()));
        assertReaches(Map.of(kw("uri"), redis.uri()));
        assertReaches(Map.of(
                kw("pool"), Map.of(kw("max-total-per-key"), 8L),
                kw("spec"), Map.of(kw("host"), "127.0.0.1", kw("port"), (long) redis.port())));
    }

    @Test
    void keyPrefixNamesTheKey() {
        String name = uniqueName("prefix");
        Map<String, Object> conn = Map.of("uri", redis.uri(), "key-prefix", "app:locks:");
        assertEquals("1", keySeenDuringTask(conn, "app:locks:" + name, name));
    }

    @Test
    void equalMapsAreResolvedOnce() {
        assertReaches(new HashMap<>(Map.of("uri", redis.uri(), "timeout-ms", 1234)));
        int cached = ConnCache.cachedCount();
        for (int i = 0; i < 5; i++) {
            assertReaches(new LinkedHashMap<>(Map.of("uri", redis.uri(), "timeout-ms", 1234)));
        }
        assertEquals(cached, ConnCache.cachedCount(), "an equal Map conn hits the cache");
    }

    @Test
    void aMapChangedAfterUseIsReadAfresh() throws IOException {
        Map<String, Object> conn = new HashMap<>();
        conn.put("host", "127.0.0.1");
        conn.put("port", RedisServer.freePort());
        assertThrows(DibsConnectionException.class, () -> Dibs.execute(conn, uniqueName("mut"), 10, 0, () -> {}));
        conn.put("port", redis.port());
        assertReaches(conn);
        // A nested map too.
        Map<String, Object> spec = new HashMap<>(Map.of("uri", redis.uri()));
        Map<String, Object> connMap = Map.of("spec", spec);
        assertReaches(connMap);
        spec.put("uri", "redis://127.0.0.1:" + RedisServer.freePort());
        assertThrows(DibsConnectionException.class, () -> Dibs.execute(connMap, uniqueName("mut"), 10, 0, () -> {}));
    }

    @Test
    void theCacheStaysBounded() {
        for (int i = 0; i < ConnCache.MAX_CACHED + 20; i++) {
            assertReaches(Map.of("uri", redis.uri(), "key-prefix", "dibs:", "timeout-ms", 1000 + i));
            assertTrue(ConnCache.cachedCount() <= ConnCache.MAX_CACHED, "cache size " + ConnCache.cachedCount());
        }
    }
}
