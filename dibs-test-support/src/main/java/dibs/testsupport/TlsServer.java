package dibs.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A redis-server serving TLS on a free loopback port, with a certificate (for 127.0.0.1 and
 * localhost) from a throwaway CA that {@code openssl} makes in a folder of the test's; an
 * unrelated CA ({@code other-ca.pem}) beside it. As Redis does by default
 * ({@code tls-auth-clients yes}), a client must present a certificate the CA signed:
 * {@code client.pem} and {@code client.key} are one, {@code other-client.*} one from the unrelated
 * CA. Public for the modules whose tests use it.
 */
public final class TlsServer implements AutoCloseable {
    private final Path pki;
    private final RedisServer redis;
    private final int tlsPort;

    private TlsServer(Path pki, RedisServer redis, int tlsPort) {
        this.pki = pki;
        this.redis = redis;
        this.tlsPort = tlsPort;
    }

    /** Makes the PKI in {@code pki}, then starts the server; {@code extraArgs} go to redis-server. */
    public static TlsServer start(Path pki, String... extraArgs) throws IOException, InterruptedException {
        for (String ca : List.of("ca", "other-ca")) {
            openssl(
                    pki,
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-days",
                    "2",
                    "-subj",
                    "/CN=dibs test " + ca,
                    "-keyout",
                    ca + ".key",
                    "-out",
                    ca + ".pem");
        }
        openssl(
                pki,
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                "/CN=localhost",
                "-keyout",
                "server.key",
                "-out",
                "server.csr");
        Files.writeString(pki.resolve("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
        openssl(
                pki,
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "san.ext",
                "-out",
                "server.pem");
        // Extensions make an X.509 v3 certificate: rustls refuses v1, which is what none gives.
        Files.writeString(pki.resolve("client.ext"), "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n");
        for (String[] client : new String[][] {{"client", "ca"}, {"other-client", "other-ca"}}) {
            String name = client[0];
            openssl(
                    pki,
                    "req",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-subj",
                    "/CN=dibs test " + name,
                    "-keyout",
                    name + ".key",
                    "-out",
                    name + ".csr");
            openssl(
                    pki,
                    "x509",
                    "-req",
                    "-in",
                    name + ".csr",
                    "-CA",
                    client[1] + ".pem",
                    "-CAkey",
                    client[1] + ".key",
                    "-CAcreateserial",
                    "-days",
                    "2",
                    "-extfile",
                    "client.ext",
                    "-out",
                    name + ".pem");
        }
        int tlsPort = RedisServer.freePort();
        List<String> args = new ArrayList<>(List.of(extraArgs));
        args.addAll(List.of(
                "--tls-port",
                Integer.toString(tlsPort),
                "--tls-cert-file",
                pki.resolve("server.pem").toString(),
                "--tls-key-file",
                pki.resolve("server.key").toString(),
                "--tls-ca-cert-file",
                pki.resolve("ca.pem").toString()));
        return new TlsServer(pki, RedisServer.launch(args.toArray(new String[0])), tlsPort);
    }

    private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("openssl " + cmd + ": " + out);
        }
    }

    /** The port that speaks TLS. */
    public int tlsPort() {
        return tlsPort;
    }

    /** A file of the PKI: {@code ca.pem}, {@code other-ca.pem}, {@code server.pem}, ... */
    public Path file(String name) {
        return pki.resolve(name);
    }

    /**
     * The conn keys that trust the CA and present {@code client}'s certificate ({@code "client"}
     * or {@code "other-client"}).
     */
    public java.util.Map<String, Object> connKeys(String client) {
        return java.util.Map.of(
                "ca-cert",
                file("ca.pem").toString(),
                "client-cert",
                file(client + ".pem").toString(),
                "client-key",
                file(client + ".key").toString());
    }

    /** The server, for commands on its plain port (when it has one). */
    public RedisServer redis() {
        return redis;
    }

    @Override
    public void close() {
        redis.close();
    }
}
