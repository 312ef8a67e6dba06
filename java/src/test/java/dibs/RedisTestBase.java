package dibs;

import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A test class that needs one plain redis-server for all its tests: {@link #redis}. */
abstract class RedisTestBase {
    /** Started before each subclass's first test, stopped after its last. */
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    /** Every command's calls, except INFO (each reading's own INFO is counted by the next one). */
    static long totalCallsButInfo() throws IOException {
        long total = 0;
        for (Map.Entry<String, Map<String, Long>> e : redis.commandStats().entrySet()) {
            if (!e.getKey().equals("info")) {
                total += e.getValue().getOrDefault("calls", 0L);
            }
        }
        return total;
    }

    /** Options for {@link #redis}, to add to. */
    static DibsOptions.Builder local() {
        return DibsOptions.builder().host("127.0.0.1").port(redis.port());
    }

    /** Whether {@code key} (a whole key, prefix included) exists on {@link #redis}. */
    static boolean keyExists(String key) throws IOException {
        return redis.command("EXISTS", key).equals("1");
    }
}
