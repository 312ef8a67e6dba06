package dibs;

import static dibs.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
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
    private static RedisServer redis;
    private static int tlsPort;

    @BeforeAll
    static void startTlsServer() throws Exception {
        for (String ca : List.of("ca", "other-ca")) {
            openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=dibs test " + ca,
                    "-keyout", ca + ".key", "-out", ca + ".pem");
        }
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "server.key",
                "-out", "server.csr");
        Files.write(pki.resolve("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n".getBytes(StandardCharsets.UTF_8));
        openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", "san.ext", "-out", "server.pem");
        tlsPort = RedisServer.freePort();
        redis = RedisServer.launch("--tls-port", Integer.toString(tlsPort),
                "--tls-cert-file", pki.resolve("server.pem").toString(),
                "--tls-key-file", pki.resolve("server.key").toString(),
                "--tls-ca-cert-file", pki.resolve("ca.pem").toString(),
                "--tls-auth-clients", "no");
    }

    @AfterAll
    static void stopTlsServer() {
        if (redis != null) {
            redis.close();
        }
    }

    private static void openssl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(pki.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "openssl " + cmd + ": " + out);
    }

    private static Map<String, Object> conn(String caFile) {
        return Map.of("uri", "rediss://127.0.0.1:" + tlsPort, "ca-cert", pki.resolve(caFile).toString(),
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
