package dibs;

import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.RedisServer;
import dibs.testsupport.TlsServer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real TLS connection from the JVM: {@code rediss://} to a redis-server that serves TLS with a
 * certificate from a throwaway CA that {@code openssl} makes here, verified against that CA.
 */
@Tag("jvm")
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
        Map<String, Object> conn = new java.util.HashMap<>(tls.connKeys("client"));
        conn.put("uri", "rediss://127.0.0.1:" + tls.tlsPort());
        conn.put("ca-cert", tls.file(caFile).toString());
        conn.put("timeout-ms", 5000);
        return conn;
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

    /** Issue 30 (3): the PEM texts in memory in place of the files; never shown. */
    @Test
    void pemTextsInMemoryTakeThePlaceOfTheFiles() throws IOException {
        String key = java.nio.file.Files.readString(tls.file("client.key"));
        DibsOptions options = DibsOptions.builder()
                .uri("rediss://127.0.0.1:" + tls.tlsPort())
                .caCertPem(java.nio.file.Files.readString(tls.file("ca.pem")))
                .clientCertPem(java.nio.file.Files.readString(tls.file("client.pem")), key)
                .build();
        String keyLine = key.lines().skip(1).findFirst().orElseThrow();
        assertFalse(options.toString().contains(keyLine), options.toString());
        try (DibsClient client = Dibs.client(options)) {
            assertTrue(client.execute(
                    uniqueName("tls-pem"), java.time.Duration.ofSeconds(5), java.time.Duration.ZERO, () -> {}));
        }
        DibsArgumentException wrong = assertThrows(
                DibsArgumentException.class,
                () -> Dibs.client(DibsOptions.builder()
                                .uri("rediss://127.0.0.1:" + tls.tlsPort())
                                .clientCertPem(
                                        java.nio.file.Files.readString(tls.file("client.pem")),
                                        tls.file("client.key").toString())
                                .build())
                        .close());
        assertEquals("client-key-pem", wrong.argument(), wrong.getMessage());
    }

    @Test
    void aServerTheCaDidNotSignIsRefused() {
        AtomicBoolean ran = new AtomicBoolean();
        DibsException e = assertThrows(
                DibsException.class,
                () -> Dibs.execute(conn("other-ca.pem"), uniqueName("tls-bad-ca"), 30, 0, () -> ran.set(true)));
        assertFalse(ran.get());
        assertTrue(e instanceof DibsConnectionException, e.toString());
    }

    @Test
    void withoutAClientCertificateTheErrorSaysTheServerRequiresOne() {
        Map<String, Object> conn = new java.util.HashMap<>(conn("ca.pem"));
        conn.remove("client-cert");
        conn.remove("client-key");
        AtomicBoolean ran = new AtomicBoolean();
        DibsException e = assertThrows(
                DibsConnectionException.class,
                () -> Dibs.execute(conn, uniqueName("tls-no-cert"), 30, 0, () -> ran.set(true)));
        assertFalse(ran.get());
        assertTrue(
                e.getMessage().contains("requires a client certificate")
                        && e.getMessage().contains("'client-cert'"),
                e.getMessage());
    }

    @Test
    void aClientCertificateFileThatCannotBeReadNamesItsKey() {
        Map<String, Object> conn = new java.util.HashMap<>(conn("ca.pem"));
        conn.put("client-key", tls.file("missing.key").toString());
        DibsArgumentException e = assertThrows(
                DibsArgumentException.class, () -> Dibs.execute(conn, uniqueName("tls-bad-key"), 30, 0, () -> {}));
        assertEquals("client-key", e.argument());
    }
}
