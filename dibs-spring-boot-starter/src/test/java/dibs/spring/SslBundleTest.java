package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dibs.DibsClient;
import dibs.DibsConnectionException;
import dibs.DibsException;
import dibs.testsupport.TlsServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * spring.data.redis.ssl.* with SSL bundles (PEM, JKS, PKCS#12) against a redis-server that speaks
 * TLS only and, as Redis does by default, requires a client certificate; its certificates come
 * from a throwaway CA that openssl makes here. The bundle's trust store is the CA, its key
 * store's key the client certificate.
 */
class SslBundleTest {
    private static final String PASSWORD = "changeit";

    @TempDir
    static Path pki;

    private static TlsServer tls;
    private static int tlsPort;

    @BeforeAll
    static void start() throws Exception {
        tls = TlsServer.start(pki, "--port", "0"); // TLS only
        tlsPort = tls.tlsPort();
        for (String type : new String[] {"PKCS12", "JKS"}) {
            KeyStore keys = emptyStore(type);
            keys.setKeyEntry(
                    "client", key("client.key"), PASSWORD.toCharArray(), new Certificate[] {cert("client.pem")});
            save(keys, "keys." + type);
            KeyStore trust = emptyStore(type);
            trust.setCertificateEntry("ca", cert("ca.pem"));
            save(trust, "trust." + type);
        }
        // An EC client key, its PKCS#8 without the public key (as the JDK itself encodes one).
        openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ec.sec1");
        openssl("ec", "-in", "ec.sec1", "-no_public", "-out", "ec-no-public.sec1");
        openssl("pkcs8", "-topk8", "-nocrypt", "-in", "ec-no-public.sec1", "-out", "ec.key");
        openssl("req", "-new", "-key", "ec.sec1", "-subj", "/CN=dibs test ec client", "-out", "ec.csr");
        openssl(
                "x509",
                "-req",
                "-in",
                "ec.csr",
                "-CA",
                tls.file("ca.pem").toString(),
                "-CAkey",
                tls.file("ca.key").toString(),
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                tls.file("client.ext").toString(),
                "-out",
                "ec.pem");
        KeyStore ec = emptyStore("PKCS12");
        String ecKey = Files.readString(pki.resolve("ec.key"), StandardCharsets.US_ASCII)
                .replaceAll("-----[A-Z ]+-----", "")
                .replaceAll("\\s", "");
        ec.setKeyEntry(
                "client",
                KeyFactory.getInstance("EC")
                        .generatePrivate(
                                new PKCS8EncodedKeySpec(Base64.getDecoder().decode(ecKey))),
                PASSWORD.toCharArray(),
                new Certificate[] {certificateFile(pki.resolve("ec.pem"))});
        save(ec, "keys-ec.PKCS12");
        KeyStore two = emptyStore("PKCS12");
        two.setKeyEntry("client", key("client.key"), PASSWORD.toCharArray(), new Certificate[] {cert("client.pem")});
        two.setKeyEntry(
                "other", key("other-client.key"), PASSWORD.toCharArray(), new Certificate[] {cert("other-client.pem")});
        save(two, "two-keys.PKCS12");
    }

    @AfterAll
    static void stop() {
        if (tls != null) {
            tls.close();
        }
    }

    private static KeyStore emptyStore(String type) throws Exception {
        KeyStore store = KeyStore.getInstance(type);
        store.load(null, null);
        return store;
    }

    private static Certificate cert(String file) throws Exception {
        return certificateFile(tls.file(file));
    }

    private static Certificate certificateFile(Path file) throws Exception {
        try (var in = Files.newInputStream(file)) {
            return CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    private static void openssl(String... args) throws Exception {
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of("openssl"));
        command.addAll(java.util.List.of(args));
        Process p = new ProcessBuilder(command)
                .directory(pki.toFile())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException(command + ": " + out);
        }
    }

    /** An unencrypted PKCS#8 PEM key, as openssl 3 writes them. */
    private static PrivateKey key(String file) throws Exception {
        String pem = Files.readString(tls.file(file), StandardCharsets.US_ASCII);
        String base64 = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return KeyFactory.getInstance("RSA")
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
    }

    private static void save(KeyStore store, String name) throws Exception {
        try (OutputStream out = Files.newOutputStream(pki.resolve(name))) {
            store.store(out, PASSWORD.toCharArray());
        }
    }

    private static ApplicationContextRunner runner() {
        return Contexts.runner();
    }

    private static boolean lockOnce(DibsClient client) {
        return client.execute("tls-job", Duration.ofSeconds(5), Duration.ZERO, () -> {});
    }

    private static String[] pemClient(String client) {
        return new String[] {
            "spring.ssl.bundle.pem.redis.keystore.certificate=file:" + tls.file(client + ".pem"),
            "spring.ssl.bundle.pem.redis.keystore.private-key=file:" + tls.file(client + ".key")
        };
    }

    @Test
    void aPemBundleGivesTheCaAndTheClientCertificate() {
        runner().withPropertyValues(
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.bundle=redis",
                        "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + tls.file("ca.pem"))
                .withPropertyValues(pemClient("client"))
                .run(context ->
                        assertThat(lockOnce(context.getBean(DibsClient.class))).isTrue());
    }

    @Test
    void aPemBundleGivenInlineWorksToo() throws IOException {
        runner().withPropertyValues(
                        "spring.data.redis.url=rediss://127.0.0.1:" + tlsPort,
                        "spring.data.redis.ssl.enabled=true",
                        "spring.data.redis.ssl.bundle=redis",
                        "spring.ssl.bundle.pem.redis.truststore.certificate=" + Files.readString(tls.file("ca.pem")),
                        "spring.ssl.bundle.pem.redis.keystore.certificate=" + Files.readString(tls.file("client.pem")),
                        "spring.ssl.bundle.pem.redis.keystore.private-key=" + Files.readString(tls.file("client.key")))
                .run(context ->
                        assertThat(lockOnce(context.getBean(DibsClient.class))).isTrue());
    }

    @Test
    void jksAndPkcs12BundlesGiveTheirStores() {
        for (String type : new String[] {"JKS", "PKCS12"}) {
            String base = "spring.ssl.bundle.jks.redis.";
            runner().withPropertyValues(
                            "spring.data.redis.host=127.0.0.1",
                            "spring.data.redis.port=" + tlsPort,
                            "spring.data.redis.ssl.bundle=redis",
                            base + "keystore.location=file:" + pki.resolve("keys." + type),
                            base + "keystore.password=" + PASSWORD,
                            base + "keystore.type=" + type,
                            base + "truststore.location=file:" + pki.resolve("trust." + type),
                            base + "truststore.password=" + PASSWORD,
                            base + "truststore.type=" + type)
                    .run(context -> assertThat(lockOnce(context.getBean(DibsClient.class)))
                            .as(type)
                            .isTrue());
        }
    }

    /**
     * Issue 30 (3): a password-protected PKCS#12 bundle's key goes to dibs in memory. A service
     * of its own (a JVM with its own temp directory) starts with the bundle, takes a lock over
     * TLS and is killed with SIGKILL; then no file under its temp directory holds the key, in
     * PEM or in DER. Before, the decrypted key was a temporary file left behind by the kill.
     */
    @Test
    void aBundlesKeyNeverTouchesTheDiskEvenAfterSigkill(@TempDir Path temp) throws Exception {
        String base = "spring.ssl.bundle.jks.redis.";
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djava.io.tmpdir=" + temp,
                "-cp",
                System.getProperty("java.class.path"),
                LockAndWait.class.getName(),
                "spring.data.redis.host=127.0.0.1",
                "spring.data.redis.port=" + tlsPort,
                "spring.data.redis.ssl.bundle=redis",
                base + "keystore.location=file:" + pki.resolve("keys.PKCS12"),
                base + "keystore.password=" + PASSWORD,
                base + "keystore.type=PKCS12",
                base + "truststore.location=file:" + pki.resolve("trust.PKCS12"),
                base + "truststore.password=" + PASSWORD,
                base + "truststore.type=PKCS12"));
        Process service = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            BufferedReader out =
                    new BufferedReader(new InputStreamReader(service.getInputStream(), StandardCharsets.UTF_8));
            List<String> said = new ArrayList<>();
            for (String line; (line = out.readLine()) != null && !line.equals(LockAndWait.LOCKED); ) {
                said.add(line);
            }
            assertThat(service.isAlive())
                    .as("locked over TLS, then waits: %s", said)
                    .isTrue();
        } finally {
            service.destroyForcibly(); // SIGKILL: no shutdown hook, no deleteOnExit
            service.waitFor();
        }
        String keyBody = Files.readString(tls.file("client.key"), StandardCharsets.US_ASCII)
                .lines()
                .skip(1)
                .findFirst()
                .orElseThrow();
        byte[] der = key("client.key").getEncoded();
        List<Path> holding = new ArrayList<>();
        try (var files = Files.walk(temp)) {
            for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                byte[] bytes = Files.readAllBytes(file);
                String text = new String(bytes, StandardCharsets.ISO_8859_1);
                // Its PEM's first line of base64, or its DER's first 64 bytes (some of the modulus).
                if (text.contains(keyBody)
                        || text.contains(
                                new String(java.util.Arrays.copyOfRange(der, 0, 64), StandardCharsets.ISO_8859_1))) {
                    holding.add(file);
                }
            }
        }
        assertThat(holding)
                .as("files under the service's temp directory holding the key")
                .isEmpty();
    }

    /** A service with the bundle of its arguments: takes one lock, says so, and waits to be killed. */
    static final class LockAndWait {
        static final String LOCKED = "locked over TLS";

        public static void main(String[] properties) {
            runner().withPropertyValues(properties).run(context -> {
                if (lockOnce(context.getBean(DibsClient.class))) {
                    System.out.println(LOCKED);
                    System.out.flush();
                    Thread.sleep(Long.MAX_VALUE);
                }
            });
        }
    }

    /** The JDK encodes an EC key without its public key, which rustls (ring) needs: dibs adds it. */
    @Test
    void anEcClientKeyFromAJavaKeyStoreWorks() {
        String base = "spring.ssl.bundle.jks.redis.";
        runner().withPropertyValues(
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.bundle=redis",
                        base + "keystore.location=file:" + pki.resolve("keys-ec.PKCS12"),
                        base + "keystore.password=" + PASSWORD,
                        base + "keystore.type=PKCS12",
                        base + "truststore.location=file:" + pki.resolve("trust.PKCS12"),
                        base + "truststore.password=" + PASSWORD,
                        base + "truststore.type=PKCS12")
                .run(context ->
                        assertThat(lockOnce(context.getBean(DibsClient.class))).isTrue());
    }

    @Test
    void aKeyStoreWithTwoKeysNeedsItsAliasAtStartup() {
        String base = "spring.ssl.bundle.jks.redis.";
        String[] properties = {
            "spring.data.redis.host=127.0.0.1",
            "spring.data.redis.port=" + tlsPort,
            "spring.data.redis.ssl.bundle=redis",
            base + "keystore.location=file:" + pki.resolve("two-keys.PKCS12"),
            base + "keystore.password=" + PASSWORD,
            base + "keystore.type=PKCS12",
            base + "truststore.location=file:" + pki.resolve("trust.PKCS12"),
            base + "truststore.password=" + PASSWORD,
            base + "truststore.type=PKCS12"
        };
        runner().withPropertyValues(properties).run(context -> {
            assertThat(context).hasFailed();
            DibsStartupException e = Contexts.startupException(context.getStartupFailure());
            assertThat(e.property()).isEqualTo("spring.data.redis.ssl.bundle");
            assertThat(e.getMessage()).contains("2 private keys").contains("key.alias");
        });
        runner().withPropertyValues(properties)
                .withPropertyValues(base + "key.alias=client")
                .run(context ->
                        assertThat(lockOnce(context.getBean(DibsClient.class))).isTrue());
        // The other key's certificate comes from another CA: the server refuses it.
        runner().withPropertyValues(properties)
                .withPropertyValues(base + "key.alias=other")
                .run(context -> assertThatThrownBy(() -> lockOnce(context.getBean(DibsClient.class)))
                        .isInstanceOf(DibsConnectionException.class)
                        .hasMessageContaining("refused the client certificate"));
    }

    @Test
    void aKeyPasswordThatDoesNotOpenTheKeyFailsTheStartup() {
        String base = "spring.ssl.bundle.jks.redis.";
        runner().withPropertyValues(
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.bundle=redis",
                        base + "keystore.location=file:" + pki.resolve("keys.JKS"),
                        base + "keystore.password=" + PASSWORD,
                        base + "keystore.type=JKS",
                        base + "key.password=wrong-key-pw")
                .run(context -> {
                    assertThat(context).hasFailed();
                    DibsStartupException e = Contexts.startupException(context.getStartupFailure());
                    assertThat(e.property()).isEqualTo("spring.data.redis.ssl.bundle");
                    assertThat(e.getMessage()).contains("key.password");
                    assertThat(Contexts.messages(context.getStartupFailure())).doesNotContain("wrong-key-pw");
                });
    }

    @Test
    void aBundleWithoutAClientCertificateIsToldWhatTheServerWants() {
        runner().withPropertyValues(
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.bundle=redis",
                        "spring.data.redis.timeout=2s",
                        "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + tls.file("ca.pem"))
                .run(context -> assertThatThrownBy(() -> lockOnce(context.getBean(DibsClient.class)))
                        .isInstanceOf(DibsConnectionException.class)
                        .hasMessageContaining("requires a client certificate"));
    }

    @Test
    void sslEnabledTurnsAPlainRedisUrlIntoTls() {
        runner().withPropertyValues(
                        "spring.data.redis.url=redis://127.0.0.1:" + tlsPort,
                        "spring.data.redis.ssl.enabled=true",
                        "spring.data.redis.ssl.bundle=redis",
                        "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + tls.file("ca.pem"))
                .withPropertyValues(pemClient("client"))
                .run(context ->
                        assertThat(lockOnce(context.getBean(DibsClient.class))).isTrue());
    }

    @Test
    void anotherCaOrNoneIsRefusedByTheServerCheck() {
        runner().withPropertyValues(
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.bundle=redis",
                        "spring.data.redis.timeout=2s",
                        "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + tls.file("other-ca.pem"))
                .withPropertyValues(pemClient("client"))
                .run(context -> assertThatThrownBy(() -> lockOnce(context.getBean(DibsClient.class)))
                        .isInstanceOf(DibsException.class));
        // ssl.enabled without a bundle: the system's CAs, which do not know this throwaway CA.
        runner().withPropertyValues(
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + tlsPort,
                        "spring.data.redis.ssl.enabled=true",
                        "spring.data.redis.timeout=2s")
                .run(context -> assertThatThrownBy(() -> lockOnce(context.getBean(DibsClient.class)))
                        .isInstanceOf(DibsException.class));
    }
}
