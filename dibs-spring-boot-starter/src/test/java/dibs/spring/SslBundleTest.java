package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dibs.DibsClient;
import dibs.DibsException;
import dibs.RedisServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * spring.data.redis.ssl.* with a PEM SSL bundle as the CA, against a redis-server that speaks
 * TLS only, with a certificate from a throwaway CA that openssl makes here.
 */
class SslBundleTest {
    @TempDir
    static Path pki;
    private static RedisServer redis;
    private static int tlsPort;

    @BeforeAll
    static void start() throws Exception {
        for (String ca : List.of("ca", "other-ca")) {
            openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=dibs starter " + ca,
                    "-keyout", ca + ".key", "-out", ca + ".pem");
        }
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "server.key",
                "-out", "server.csr");
        Files.writeString(pki.resolve("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
        openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", "san.ext", "-out", "server.pem");
        tlsPort = RedisServer.freePort();
        redis = RedisServer.launch("--port", "0", "--tls-port", Integer.toString(tlsPort),
                "--tls-cert-file", pki.resolve("server.pem").toString(),
                "--tls-key-file", pki.resolve("server.key").toString(),
                "--tls-ca-cert-file", pki.resolve("ca.pem").toString(), "--tls-auth-clients", "no");
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
    }

    private static void openssl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(pki.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0).as("openssl " + cmd + ": " + out).isTrue();
    }

    private static boolean lockOnce(DibsClient client) {
        return client.execute("tls-job", Duration.ofSeconds(5), Duration.ZERO, () -> {});
    }

    @Test
    void aPemBundleFileIsTheCa() {
        Contexts.runner()
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.bundle=redis",
                        "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + pki.resolve("ca.pem"))
                .run(context -> assertThat(lockOnce(context.getBean(DibsClient.class))).isTrue());
    }

    @Test
    void aPemBundleGivenInlineIsTheCaToo() throws IOException {
        String pem = Files.readString(pki.resolve("ca.pem"));
        Contexts.runner()
                .withPropertyValues("spring.data.redis.url=rediss://127.0.0.1:" + tlsPort,
                        "spring.data.redis.ssl.enabled=true", "spring.data.redis.ssl.bundle=redis",
                        "spring.ssl.bundle.pem.redis.truststore.certificate=" + pem)
                .run(context -> assertThat(lockOnce(context.getBean(DibsClient.class))).isTrue());
    }

    @Test
    void sslEnabledTurnsAPlainRedisUrlIntoTls() {
        Contexts.runner()
                .withPropertyValues("spring.data.redis.url=redis://127.0.0.1:" + tlsPort,
                        "spring.data.redis.ssl.enabled=true", "spring.data.redis.ssl.bundle=redis",
                        "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + pki.resolve("ca.pem"))
                .run(context -> assertThat(lockOnce(context.getBean(DibsClient.class))).isTrue());
    }

    @Test
    void anotherCaOrNoneIsRefusedByTheServerCheck() {
        Contexts.runner()
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.bundle=redis", "spring.data.redis.timeout=2s",
                        "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + pki.resolve("other-ca.pem"))
                .run(context -> assertThatThrownBy(() -> lockOnce(context.getBean(DibsClient.class)))
                        .isInstanceOf(DibsException.class));
        // ssl.enabled without a bundle: the system's CAs, which do not know this throwaway CA.
        Contexts.runner()
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.enabled=true", "spring.data.redis.timeout=2s")
                .run(context -> assertThatThrownBy(() -> lockOnce(context.getBean(DibsClient.class)))
                        .isInstanceOf(DibsException.class));
    }
}
