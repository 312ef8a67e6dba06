package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dibs.DibsClient;
import dibs.DibsException;
import dibs.TlsServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
    private static TlsServer tls;
    private static int tlsPort;

    @BeforeAll
    static void start() throws Exception {
        tls = TlsServer.start(pki, "--port", "0"); // TLS only
        tlsPort = tls.tlsPort();
    }

    @AfterAll
    static void stop() {
        if (tls != null) {
            tls.close();
        }
    }

    private static boolean lockOnce(DibsClient client) {
        return client.execute("tls-job", Duration.ofSeconds(5), Duration.ZERO, () -> {});
    }

    @Test
    void aPemBundleFileIsTheCa() {
        Contexts.runner()
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.bundle=redis",
                        "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + tls.file("ca.pem"))
                .run(context -> assertThat(lockOnce(context.getBean(DibsClient.class))).isTrue());
    }

    @Test
    void aPemBundleGivenInlineIsTheCaToo() throws IOException {
        String pem = Files.readString(tls.file("ca.pem"));
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
                        "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + tls.file("ca.pem"))
                .run(context -> assertThat(lockOnce(context.getBean(DibsClient.class))).isTrue());
    }

    @Test
    void anotherCaOrNoneIsRefusedByTheServerCheck() {
        Contexts.runner()
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.bundle=redis", "spring.data.redis.timeout=2s",
                        "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + tls.file("other-ca.pem"))
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
