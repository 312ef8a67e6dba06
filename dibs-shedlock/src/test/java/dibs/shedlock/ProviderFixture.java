package dibs.shedlock;

import dibs.Dibs;
import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A real redis-server per test class, a client on it and the provider under test. */
abstract class ProviderFixture {
    private static final AtomicInteger NAMES = new AtomicInteger();

    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    static DibsClient client;
    static DibsLockProvider provider;

    /** After the extension started {@link #redis}. */
    @BeforeAll
    static void openClient() {
        client = Dibs.client(redis.uri());
        provider = new DibsLockProvider(client);
    }

    /** Before the extension stops {@link #redis}. */
    @AfterAll
    static void closeClient() {
        if (client != null) {
            client.close();
        }
    }

    /** A lock name no other test of this JVM or another uses. */
    static String uniqueName(String prefix, String base) {
        return prefix + "-" + base + "-p" + ProcessHandle.current().pid() + "-" + NAMES.incrementAndGet();
    }
}
