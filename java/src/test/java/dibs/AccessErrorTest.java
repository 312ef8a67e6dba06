package dibs;

import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.RedisServer;
import dibs.testsupport.TestSupport;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Unreachable, silent, unauthenticated and unauthorized servers. Faults of a server dibs was
 * already talking to (killed mid-task, frozen, restarted, scripts flushed, clients killed) are
 * in {@link ServerFaultTest}.
 */
@Timeout(60)
class AccessErrorTest {
    private static final String PASSWORD = "s3cret-hunter2";

    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass("--requirepass", PASSWORD);

    private static String authUri() {
        return "redis://:" + PASSWORD + "@127.0.0.1:" + redis.port();
    }

    private static <T extends Throwable> T failsWithoutRunning(Class<T> type, Object conn) {
        AtomicBoolean ran = new AtomicBoolean();
        T e = assertThrows(type, () -> Dibs.execute(conn, uniqueName("fail"), 10, 0, () -> ran.set(true)));
        assertFalse(ran.get(), "the task must not run");
        assertFalse(String.valueOf(e.getMessage()).contains(PASSWORD), "password in: " + e.getMessage());
        return e;
    }

    @Test
    void unreachableServerIsAConnectionError() throws IOException {
        failsWithoutRunning(DibsConnectionException.class, TestSupport.closedPortUri());
        failsWithoutRunning(
                DibsConnectionException.class,
                Map.of("host", "127.0.0.1", "port", RedisServer.freePort(), "password", PASSWORD));
    }

    @Test
    void rightPasswordWorks() {
        assertTrue(Dibs.execute(authUri(), uniqueName("auth"), 10, 0, () -> {}));
        assertTrue(Dibs.execute(Map.of("uri", redis.uri(), "password", PASSWORD), uniqueName("auth"), 10, 0, () -> {}));
    }

    @Test
    void wrongOrMissingPasswordIsAnAuthenticationError() {
        String wrong = "wrong-secret-42";
        DibsAuthenticationException e = failsWithoutRunning(
                DibsAuthenticationException.class, "redis://:" + wrong + "@127.0.0.1:" + redis.port());
        assertFalse(e.getMessage().contains(wrong), "the wrong password in: " + e.getMessage());
        assertTrue(e.getMessage().contains("127.0.0.1:" + redis.port()), "names the server: " + e.getMessage());
        e = failsWithoutRunning(
                DibsAuthenticationException.class,
                Map.of("host", "127.0.0.1", "port", redis.port(), "password", wrong));
        assertFalse(e.getMessage().contains(wrong), "the wrong password in: " + e.getMessage());
        failsWithoutRunning(DibsAuthenticationException.class, redis.uri());
    }

    @Test
    void aUserWithoutAccessToTheKeyIsAPermissionError() throws IOException {
        assertEquals("OK", redis.command("ACL", "SETUSER", "limited", "on", ">nobody-pw", "~other:*", "+@all"));
        DibsPermissionException e = failsWithoutRunning(
                DibsPermissionException.class, "redis://limited:nobody-pw@127.0.0.1:" + redis.port());
        assertFalse(e.getMessage().contains("nobody-pw"), e.getMessage());
    }
}
