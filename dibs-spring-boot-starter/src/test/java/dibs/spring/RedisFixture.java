package dibs.spring;

import dibs.RedisServer;
import java.io.IOException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A real redis-server, started by the test class itself on a free loopback port. */
abstract class RedisFixture {
    static RedisServer redis;

    @BeforeAll
    static void startRedis() throws IOException {
        redis = RedisServer.launch();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }
}
