package dibs;

import static dibs.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Unreachable, slow, unauthenticated and unauthorized servers, and failed releases. */
@Timeout(60)
class FailureTest {
    private static final String PASSWORD = "s3cret-hunter2";
    private static RedisServer redis;

    @BeforeAll
    static void startRedis() throws IOException {
        redis = RedisServer.launch("--requirepass", PASSWORD);
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

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
        failsWithoutRunning(DibsConnectionException.class,
                Map.of("host", "127.0.0.1", "port", RedisServer.freePort(), "password", PASSWORD));
    }

    @Test
    void aServerThatNeverAnswersIsATimeout() throws IOException {
        List<Socket> accepted = new ArrayList<>();
        try (ServerSocket silent = new ServerSocket()) {
            silent.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept()); // accept, then never answer
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            long start = System.nanoTime();
            failsWithoutRunning(DibsTimeoutException.class,
                    Map.of("host", "127.0.0.1", "port", silent.getLocalPort(), "timeout-ms", 300));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms < 5000, "timed out after " + ms + " ms, with timeout-ms 300");
        } finally {
            for (Socket s : accepted) {
                s.close();
            }
        }
    }

    @Test
    void rightPasswordWorks() {
        assertTrue(Dibs.execute(authUri(), uniqueName("auth"), 10, 0, () -> {}));
        assertTrue(Dibs.execute(Map.of("uri", redis.uri(), "password", PASSWORD), uniqueName("auth"), 10, 0, () -> {}));
    }

    @Test
    void wrongOrMissingPasswordIsAnAuthenticationError() {
        failsWithoutRunning(DibsAuthenticationException.class, "redis://:wrong-password@127.0.0.1:" + redis.port());
        failsWithoutRunning(DibsAuthenticationException.class, redis.uri());
    }

    @Test
    void aUserWithoutAccessToTheKeyIsAPermissionError() throws IOException {
        assertEquals("OK", redis.command("ACL", "SETUSER", "limited", "on", ">limited-pw", "~other:*", "+@all"));
        DibsPermissionException e = failsWithoutRunning(DibsPermissionException.class,
                "redis://limited:limited-pw@127.0.0.1:" + redis.port());
        assertFalse(e.getMessage().contains("limited-pw"), e.getMessage());
    }

    @Test
    void aFailedReleaseIsLoggedAndNeverMasksTheResult() throws IOException {
        String name = uniqueName("release-fails");
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            Optional<Integer> result = Dibs.executeWithResult(authUri(), name, 10, 0, () -> {
                redis.stop();
                return 7;
            });
            assertEquals(Optional.of(7), result);
            assertReleaseFailureLogged(log, name);
        } finally {
            redis.start();
        }
    }

    @Test
    void aFailedReleaseNeverMasksTheTasksException() throws IOException {
        String name = uniqueName("release-fails-throw");
        IllegalStateException boom = new IllegalStateException("task failed");
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            IllegalStateException caught = assertThrows(IllegalStateException.class,
                    () -> Dibs.execute(authUri(), name, 10, 0, () -> {
                        redis.stop();
                        throw boom;
                    }));
            assertSame(boom, caught);
            assertEquals(0, caught.getSuppressed().length, "the task's exception is not decorated");
            assertReleaseFailureLogged(log, name);
        } finally {
            redis.start();
        }
    }

    private static void assertReleaseFailureLogged(TestSupport.LogCapture log, String name) {
        List<String> warnings = log.warnings();
        assertEquals(1, warnings.size(), "one warning: " + log.messages());
        String w = warnings.get(0);
        assertTrue(w.startsWith("release of lock '" + name + "' failed: "), w);
        assertFalse(w.contains(PASSWORD), "password in the log: " + w);
        assertFalse(w.endsWith("failed: null"), "Rust should say why: " + w);
    }
}
