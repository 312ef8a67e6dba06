package dibs;

import dibs.testsupport.LockContract;
import java.time.Duration;
import org.junit.jupiter.api.Tag;

/** {@link Dibs#execute(Object, String, Duration, Duration, Runnable)} passes the lock contract. */
@Tag("jvm")
class DibsContractTest extends LockContract {
    @Override
    protected boolean runLocked(String name, Duration atMost, Duration atLeast, Runnable task) {
        return Dibs.execute(redis.uri(), name, atMost, atLeast, task);
    }

    @Override
    protected String frontEnd() {
        return "Dibs.execute";
    }
}
