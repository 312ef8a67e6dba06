package dibs.shedlock;

import dibs.Dibs;
import dibs.DibsClient;
import dibs.RedisServer;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A real redis-server per test class, a client on it and the provider under test. */
abstract class ProviderFixture {
    private static final AtomicInteger NAMES = new AtomicInteger();

    static RedisServer redis;
    static DibsClient client;
    static DibsLockProvider provider;

    @BeforeAll
    static void startRedis() throws IOException {
        redis = RedisServer.launch();
        client = Dibs.client(redis.uri());
        provider = new DibsLockProvider(client);
    }

    @AfterAll
    static void stopRedis() {
        if (client != null) {
            client.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    /** A lock name no other test of this JVM or another uses. */
    static String uniqueName(String prefix, String base) {
        return prefix + "-" + base + "-" + ProcessHandle.current().pid() + "-" + NAMES.incrementAndGet();
    }
}
