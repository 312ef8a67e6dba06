package dibs.shedlock;

import dibs.Dibs;
import dibs.DibsClient;
import dibs.testsupport.LockContract;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link DibsLockProvider} passes the lock contract that every front end of dibs passes. */
class DibsLockProviderContractTest extends LockContract {
    private static DibsClient client;
    private static DibsLockProvider provider;

    @BeforeAll
    static void open() {
        client = Dibs.client(redis.uri());
        provider = new DibsLockProvider(client);
    }

    @AfterAll
    static void close() {
        client.close();
    }

    @Override
    protected boolean runLocked(String name, Duration atMost, Duration atLeast, Runnable task) {
        Optional<SimpleLock> lock = provider.lock(new LockConfiguration(Instant.now(), name, atMost, atLeast));
        if (lock.isEmpty()) {
            return false;
        }
        try {
            task.run();
        } finally {
            lock.get().unlock();
        }
        return true;
    }

    @Override
    protected String frontEnd() {
        return "DibsLockProvider";
    }
}
