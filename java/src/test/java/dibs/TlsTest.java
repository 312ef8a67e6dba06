package dibs;

import static dibs.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real TLS connection from the JVM: {@code rediss://} to a redis-server that serves TLS with a
 * certificate from a throwaway CA that {@code openssl} makes here, verified against that CA.
 */
class TlsTest {
    @TempDir
    static Path pki;
    private static TlsServer tls;
    private static RedisServer redis;

    @BeforeAll
    static void startTlsServer() throws Exception {
        tls = TlsServer.start(pki);
        redis = tls.redis();
    }

    @AfterAll
    static void stopTlsServer() {
        if (tls != null) {
            tls.close();
        }
    }

    private static Map<String, Object> conn(String caFile) {
        return Map.of("uri", "rediss://127.0.0.1:" + tls.tlsPort(), "ca-cert", tls.file(caFile).toString(),
                "timeout-ms", 5000);
    }

    @Test
    void locksOverTlsVerifiedAgainstTheGivenCa() throws IOException {
        String name = uniqueName("tls");
        AtomicBoolean ran = new AtomicBoolean();
        assertTrue(Dibs.execute(conn("ca.pem"), name, 30, 5, () -> {
            ran.set(true);
            try {
                assertEquals("1", redis.command("EXISTS", RedisServer.lockKey(name)), "held while the task runs");
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }));
        assertTrue(ran.get());
        assertEquals(Optional.of("v"), Dibs.executeWithResult(conn("ca.pem"), uniqueName("tls"), 30, 0, () -> "v"));
        assertTrue(Dibs.inspect(conn("ca.pem"), name).held(), "kept for atLeast, seen over TLS");
    }

    @Test
    void aServerTheCaDidNotSignIsRefused() {
        AtomicBoolean ran = new AtomicBoolean();
        DibsException e = assertThrows(DibsException.class,
                () -> Dibs.execute(conn("other-ca.pem"), uniqueName("tls-bad-ca"), 30, 0, () -> ran.set(true)));
        assertFalse(ran.get());
        assertTrue(e instanceof DibsConnectionException, e.toString());
    }
}
