package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/** {@link DibsOptions}: each option reaches the connection, and bad ones are refused without I/O. */
@Timeout(90)
class DibsOptionsTest extends RedisTestBase {
    private static final String PASSWORD = "opt-s3cret";

    @Test
    void hostAndPortChooseTheServer() throws IOException {
        String name = uniqueName("opt-hostport");
        assertTrue(Dibs.execute(local().build(), name, 10, 5, () -> {}));
        assertTrue(keyExists(lockKey(name)), "the key lands on the server of host/port");

        AtomicBoolean ran = new AtomicBoolean();
        DibsOptions nowhere = DibsOptions.builder()
                .host("127.0.0.1")
                .port(RedisServer.freePort())
                .connectTimeout(Duration.ofMillis(500))
                .build();
        assertThrows(DibsConnectionException.class, () -> Dibs.execute(nowhere, name, 10, 0, () -> ran.set(true)));
        assertFalse(ran.get());

        // DibsOptions.of(uri) is the builder with that uri.
        assertEquals(DibsOptions.builder().uri(redis.uri()).build(), DibsOptions.of(redis.uri()));
        assertFalse(Dibs.execute(DibsOptions.of(redis.uri()), name, 10, 0, () -> ran.set(true)), "held (atLeast 5 s)");
        assertFalse(ran.get());
    }

    @Test
    void keyPrefixAndDbChooseWhereTheKeyLands() throws IOException {
        String name = uniqueName("opt-prefix");
        assertTrue(Dibs.execute(local().keyPrefix("app:").build(), name, 10, 5, () -> {}));
        assertTrue(keyExists("app:" + name), "key under the prefix");
        assertFalse(keyExists(lockKey(name)), "nothing under the default prefix");

        String inDb = uniqueName("opt-db");
        assertTrue(Dibs.execute(local().db(2).build(), inDb, 10, 5, () -> {}));
        assertEquals("1", redis.commandInDb(2, "EXISTS", lockKey(inDb)), "key in db 2");
        assertFalse(keyExists(lockKey(inDb)), "nothing in db 0");
        LockInfo info = Dibs.inspect(local().db(2).build(), inDb);
        assertTrue(info.held(), "inspect reads db 2 too");
        assertFalse(Dibs.inspect(local().build(), inDb).held(), "db 0 has no such lock");

        // Both, from a URI plus the typed prefix.
        String both = uniqueName("opt-both");
        DibsOptions options =
                DibsOptions.builder().uri(redis.uri() + "/3").keyPrefix("x:").build();
        assertTrue(Dibs.execute(options, both, 10, 5, () -> {}));
        assertEquals("1", redis.commandInDb(3, "EXISTS", "x:" + both));
    }

    @Test
    void optionsAreAcceptedWhereverAConnIs() throws IOException {
        DibsOptions options = local().keyPrefix("app:").build();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            names.add(uniqueName("opt-everywhere"));
        }
        Runnable noop = () -> {};
        Duration ten = Duration.ofSeconds(10);
        Duration five = Duration.ofSeconds(5);
        assertTrue(Dibs.execute(options, names.get(0), 10, 5, noop));
        assertTrue(Dibs.execute(options, names.get(1), ten, five, noop));
        assertEquals(Optional.of(1), Dibs.executeWithResult(options, names.get(2), 10, 5, () -> 1));
        assertEquals(Optional.of(2), Dibs.executeWithResult(options, names.get(3), ten, five, () -> 2));
        assertEquals(3, Dibs.attempt(options, names.get(4), 10, 5, () -> 3).value());
        assertEquals(4, Dibs.attempt(options, names.get(5), ten, five, () -> 4).value());
        try (DibsClient client = Dibs.client(options)) {
            assertTrue(client.execute(names.get(6), 10, 5, noop));
            assertTrue(client.inspect(names.get(6)).held());
        }
        for (String name : names) {
            assertTrue(keyExists("app:" + name), "app:" + name);
            assertFalse(keyExists(lockKey(name)), lockKey(name));
            assertTrue(Dibs.inspect(options, name).held(), "inspect with the options: " + name);
            assertFalse(Dibs.inspect(redis.uri(), name).held(), "inspect under dibs: " + name);
        }
    }

    @Test
    void equalOptionsAreEqualAndShareTheCache() {
        DibsListener listener = new DibsListener() {};
        Supplier<DibsOptions> make = () -> local().keyPrefix("eq:")
                .db(1)
                .connectTimeout(Duration.ofMillis(700))
                .readTimeout(Duration.ofSeconds(2))
                .maxConnections(4)
                .keepAlive(true)
                .listener(listener)
                .build();
        DibsOptions a = make.get();
        DibsOptions b = make.get();
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertEquals(a.toString(), b.toString());
        assertNotEquals(a, local().keyPrefix("eq:").db(1).build());
        assertNotEquals(
                a,
                local().keyPrefix("eq:")
                        .db(1)
                        .connectTimeout(Duration.ofMillis(700))
                        .readTimeout(Duration.ofSeconds(2))
                        .maxConnections(4)
                        .keepAlive(true)
                        .listener(new DibsListener() {})
                        .build(),
                "another listener");
        assertNotEquals(
                local().port(redis.port()).build(),
                DibsOptions.builder().host("127.0.0.1").port(1).build());
        assertNotEquals(a, null);
        assertNotEquals(a, "DibsOptions");

        String name = uniqueName("opt-cache");
        Dibs.inspect(a, name);
        int cached = ConnCache.cachedCount();
        assertTrue(cached >= 1);
        Dibs.inspect(b, name);
        Dibs.execute(b, name, 10, 0, () -> {});
        assertEquals(cached, ConnCache.cachedCount(), "equal options found the cached handle");
        assertEquals(ConnCache.handle(a), ConnCache.handle(b));
        Dibs.inspect(local().keyPrefix("eq:").db(1).build(), name);
        assertEquals(
                cached >= ConnCache.MAX_CACHED ? 1 : cached + 1,
                ConnCache.cachedCount(),
                "other options are another entry");
    }

    @Test
    void passwordsWorkAndAreNeverShown() throws IOException {
        try (RedisServer secured = RedisServer.launch("--requirepass", PASSWORD)) {
            DibsOptions good = DibsOptions.builder()
                    .host("127.0.0.1")
                    .port(secured.port())
                    .username("default")
                    .password(PASSWORD)
                    .build();
            String name = uniqueName("opt-auth");
            assertTrue(Dibs.execute(good, name, 10, 5, () -> {}));
            assertEquals("1", secured.command("EXISTS", lockKey(name)));
            assertFalse(good.toString().contains(PASSWORD), "toString shows the password");
            assertTrue(good.toString().contains("password=***"), good.toString());
            assertTrue(good.toString().contains("port=" + secured.port()), good.toString());

            DibsOptions viaUri = DibsOptions.of("redis://:" + PASSWORD + "@127.0.0.1:" + secured.port());
            assertTrue(Dibs.inspect(viaUri, name).held());
            assertFalse(viaUri.toString().contains(PASSWORD), "toString shows the URI's password");

            DibsOptions missing =
                    DibsOptions.builder().host("127.0.0.1").port(secured.port()).build();
            assertThrows(DibsAuthenticationException.class, () -> Dibs.execute(missing, name, 10, 0, () -> {}));
            DibsOptions wrong = DibsOptions.builder()
                    .host("127.0.0.1")
                    .port(secured.port())
                    .password(PASSWORD + "-nope")
                    .build();
            DibsAuthenticationException e =
                    assertThrows(DibsAuthenticationException.class, () -> Dibs.execute(wrong, name, 10, 0, () -> {}));
            assertFalse(String.valueOf(e.getMessage()).contains(PASSWORD), "password in the message");
            assertFalse(wrong.toString().contains(PASSWORD));

            // An invalid setting beside a password: the message names the setting, not the password.
            IllegalArgumentException bad = assertThrows(
                    IllegalArgumentException.class,
                    () -> Dibs.execute(
                            DibsOptions.builder().port(0).password(PASSWORD).build(), name, 10, 0, () -> {}));
            assertFalse(bad.getMessage().contains(PASSWORD), "password in the message");
        }
    }

    @Test
    void theSentinelsPasswordAndTheClientCertificateAreSettingsOfTheirOwn() {
        DibsOptions options = DibsOptions.builder()
                .sentinels("127.0.0.1:1")
                .masterName("m")
                .sentinelAuth("watcher", PASSWORD)
                .build();
        assertFalse(options.toString().contains(PASSWORD), options.toString());
        assertTrue(options.toString().contains("sentinel-password=***"), options.toString());
        assertTrue(options.describe().contains("master 'm'"), options.describe());
        // Without Sentinels, the Sentinels' password is refused, naming the setting, not the password.
        DibsArgumentException e = assertThrows(
                DibsArgumentException.class,
                () -> DibsOptions.builder().sentinelAuth(null, PASSWORD).build().describe());
        assertEquals("sentinels", e.argument());
        assertFalse(e.getMessage().contains(PASSWORD));
        // The client certificate's files are read by describe(): a missing one fails there.
        DibsArgumentException missing = assertThrows(
                DibsArgumentException.class,
                () -> DibsOptions.builder()
                        .uri("rediss://127.0.0.1:1")
                        .clientCert(Path.of("/nonexistent/c.pem"), Path.of("/nonexistent/c.key"))
                        .build()
                        .describe());
        assertEquals("client-cert", missing.argument());
        assertTrue(missing.getMessage().contains("/nonexistent/c.pem"), missing.getMessage());
    }

    @Test
    void invalidOptionsAreRejectedNamingTheKeyWithoutIo() throws IOException {
        Map<String, Supplier<DibsOptions>> invalid = new java.util.LinkedHashMap<>();
        invalid.put("port", () -> local().port(0).build());
        invalid.put("port ", () -> local().port(65536).build());
        invalid.put("db", () -> local().db(-1).build());
        invalid.put(
                "conn-timeout-ms", () -> local().connectTimeout(Duration.ZERO).build());
        invalid.put("read-timeout-ms", () -> local().readTimeout(Duration.ZERO).build());
        invalid.put(
                "read-timeout-ms ",
                () -> local().readTimeout(Duration.ofMillis(-5)).build());
        invalid.put("max-total", () -> local().maxConnections(0).build());
        invalid.put("uri", () -> DibsOptions.builder().uri("http://nope").build());

        long before = totalCallsButInfo();
        for (Map.Entry<String, Supplier<DibsOptions>> e : invalid.entrySet()) {
            String key = e.getKey().trim();
            DibsOptions options = e.getValue().get(); // building never fails: the native side validates
            AtomicBoolean ran = new AtomicBoolean();
            List<Executable> uses = List.of(
                    () -> Dibs.execute(options, "opt-invalid", 10, 0, () -> ran.set(true)),
                    () -> Dibs.attempt(options, "opt-invalid", Duration.ofSeconds(10), Duration.ZERO, () -> 1),
                    () -> Dibs.inspect(options, "opt-invalid"),
                    () -> Dibs.client(options));
            for (Executable use : uses) {
                IllegalArgumentException x = assertThrows(IllegalArgumentException.class, use, e.getKey());
                assertTrue(
                        x.getMessage().toLowerCase().contains(key),
                        "the message should name '" + key + "': " + x.getMessage());
            }
            assertFalse(ran.get());
        }
        assertEquals(before, totalCallsButInfo(), "commands sent by invalid options");

        // Nulls are refused by the builder itself, naming the setting.
        DibsOptions.Builder b = DibsOptions.builder();
        Map<String, Executable> nulls = new java.util.LinkedHashMap<>();
        nulls.put("uri", () -> b.uri(null));
        nulls.put("host", () -> b.host(null));
        nulls.put("username", () -> b.username(null));
        nulls.put("password", () -> b.password(null));
        nulls.put("key-prefix", () -> b.keyPrefix(null));
        nulls.put("ca-cert", () -> b.caCert(null));
        nulls.put("connectTimeout", () -> b.connectTimeout(null));
        nulls.put("readTimeout", () -> b.readTimeout(null));
        nulls.put("listener", () -> b.listener(null));
        for (Map.Entry<String, Executable> e : nulls.entrySet()) {
            IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e.getValue(), e.getKey());
            assertTrue(x.getMessage().contains(e.getKey()), x.getMessage());
        }
        assertEquals(DibsOptions.builder().build(), b.build(), "failed setters leave the builder as it was");

        // And null arguments beside valid options.
        DibsOptions ok = local().build();
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Dibs.execute(ok, null, 10, 0, () -> {}))
                .getMessage()
                .contains("lockName"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Dibs.attempt(ok, "x", 10, 0, null))
                .getMessage()
                .contains("task"));
        assertTrue(
                assertThrows(IllegalArgumentException.class, () -> Dibs.attempt(ok, "x", null, Duration.ZERO, () -> 1))
                        .getMessage()
                        .contains("atMost"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Dibs.client(null))
                .getMessage()
                .contains("conn"));
    }

    @Test
    void tlsAndCaCertReachTheConnection() throws IOException {
        // A plain server does not speak TLS: ssl(true) must fail the handshake, not fall back.
        AtomicBoolean ran = new AtomicBoolean();
        DibsOptions tls = local().ssl(true)
                .connectTimeout(Duration.ofSeconds(2))
                .readTimeout(Duration.ofSeconds(2))
                .build();
        assertThrows(DibsException.class, () -> Dibs.execute(tls, uniqueName("opt-tls"), 10, 0, () -> ran.set(true)));
        assertFalse(ran.get());
        // A CA file that does not exist is named in the error.
        Path missingCa = Path.of(System.getProperty("java.io.tmpdir"), "dibs-no-such-ca-" + System.nanoTime() + ".pem");
        DibsOptions badCa = local().ssl(true).caCert(missingCa).build();
        Exception e = assertThrows(
                Exception.class, () -> Dibs.execute(badCa, uniqueName("opt-ca"), 10, 0, () -> ran.set(true)));
        assertTrue(e instanceof IllegalArgumentException || e instanceof DibsException, e.toString());
        assertTrue(
                e.getMessage().contains("ca-cert")
                        || e.getMessage().contains(missingCa.getFileName().toString()),
                e.getMessage());
        assertFalse(ran.get());
    }

    @Test
    void maxConnectionsBoundsThePool() throws Exception {
        try (RedisServer fresh = RedisServer.launch()) {
            DibsOptions one =
                    DibsOptions.builder().uri(fresh.uri()).maxConnections(1).build();
            long received0 = Long.parseLong(fresh.info("stats", "total_connections_received"));
            ExecutorService pool = Executors.newFixedThreadPool(6);
            try {
                List<Future<Integer>> futures = new ArrayList<>();
                for (int t = 0; t < 6; t++) {
                    futures.add(pool.submit(() -> {
                        int won = 0;
                        for (int i = 0; i < 40; i++) {
                            if (Dibs.execute(
                                    one, "opt-max-" + (i % 3), Duration.ofSeconds(5), Duration.ZERO, () -> {})) {
                                won++;
                            }
                        }
                        return won;
                    }));
                }
                int won = 0;
                for (Future<Integer> f : futures) {
                    won += f.get(60, TimeUnit.SECONDS);
                }
                assertTrue(won > 0);
            } finally {
                pool.shutdownNow();
            }
            long received1 = Long.parseLong(fresh.info("stats", "total_connections_received"));
            // received1 counts its own INFO connection: one; the rest is dibs.
            assertEquals(1, received1 - received0 - 1, "connections dibs opened with maxConnections(1)");
        }
    }
}
