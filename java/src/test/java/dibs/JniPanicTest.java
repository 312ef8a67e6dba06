package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.RedisServer;
import dibs.testsupport.TestSupport;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A Rust panic surfaces in Java as a {@link DibsException}, and the JVM keeps running. Runs in
 * its own surefire execution, against the library built with the test-hooks feature.
 */
@Timeout(60)
class JniPanicTest extends RedisTestBase {
    @Test
    void aPanicBecomesADibsExceptionAndTheJvmGoesOn() {
        for (int i = 0; i < 100; i++) {
            String message = "boom " + i;
            DibsException e = assertThrows(DibsException.class, () -> TestHooks.panic(message));
            assertTrue(e.getMessage().contains("panic in dibs native code: " + message), e.getMessage());
        }
        // The JVM and the library still work after the panics.
        assertTrue(Dibs.execute(redis.uri(), TestSupport.uniqueName("after-panic"), 10, 0, () -> {}));
    }

    @Test
    void aPanicHoldingALeaseStillReleasesTheLock() throws IOException {
        String name = TestSupport.uniqueName("panic-locked");
        long handle = ConnCache.handle(redis.uri());
        DibsException e = assertThrows(DibsException.class, () -> TestHooks.panicHoldingALease(handle, name));
        assertTrue(e.getMessage().contains("panic holding the lease of lock '" + name + "'"), e.getMessage());
        assertEquals("0", redis.command("EXISTS", RedisServer.lockKey(name)), "released despite the panic");
        assertTrue(Dibs.execute(redis.uri(), name, 10, 0, () -> {}), "immediately re-acquirable");
    }
}
