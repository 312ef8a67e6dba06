package dibs;

import dibs.testsupport.LockContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/** {@link DibsClient#execute} passes the lock contract. */
@Tag("jvm")
class DibsClientContractTest extends LockContract {
    private static DibsClient client;

    @BeforeAll
    static void open() {
        client = Dibs.client(redis.uri()); // after LockContract started the server
    }

    @AfterAll
    static void close() {
        client.close();
    }

    @Override
    protected boolean runLocked(String name, Duration atMost, Duration atLeast, Runnable task) {
        return client.execute(name, atMost, atLeast, task);
    }

    @Override
    protected String frontEnd() {
        return "DibsClient.execute";
    }
}
