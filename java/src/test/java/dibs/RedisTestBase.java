package dibs;

import java.io.IOException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A test class that needs one plain redis-server for all its tests: {@link #redis}. */
abstract class RedisTestBase {
    /** Started before the class's first test, stopped after its last. */
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
