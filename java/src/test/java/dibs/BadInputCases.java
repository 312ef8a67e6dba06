package dibs;

import clojure.lang.Keyword;
import dibs.testsupport.RedisServer;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.function.Executable;

/**
 * {@link BadInputTest}'s table: each case a call with a bad argument or conn beside valid parts
 * that point at the test's live redis-server, and the fragments its message must (and must not)
 * contain.
 */
final class BadInputCases {
    static final AtomicBoolean RAN = new AtomicBoolean();
    static final Runnable TASK = () -> RAN.set(true);
    static final Supplier<Integer> SUPPLIER = () -> {
        RAN.set(true);
        return 1;
    };

    /** The live server of the test, set before the table is made. */
    private static RedisServer redis;

    private BadInputCases() {}

    /** The table, on {@code server}. */
    static Stream<Case> on(RedisServer server) {
        redis = server;
        return cases();
    }

    // ---- the live server, for the valid parts of each call --------------------------------

    private static String uri() {
        return redis.uri();
    }

    private static String uri(String suffix) {
        return "redis://127.0.0.1:" + redis.port() + suffix;
    }

    private static int port() {
        return redis.port();
    }

    private static Map<Object, Object> map(Object... keysAndValues) {
        Map<Object, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    // ---- the table --------------------------------------------------------------------------

    /** One bad call: what it is, the call, what its message must and must not contain. */
    static final class Case {
        final String name;
        final Executable call;
        final List<String> fragments;
        final List<String> secrets;

        Case(String name, Executable call, List<String> fragments, List<String> secrets) {
            this.name = name;
            this.call = call;
            this.fragments = fragments;
            this.secrets = secrets;
        }

        /** The message must not contain any of these (passwords). */
        Case hiding(String... secrets) {
            return new Case(name, call, fragments, Arrays.asList(secrets));
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static Case bad(String name, Executable call, String... fragments) {
        return new Case(name, call, Arrays.asList(fragments), List.of());
    }

    private static Case conn(String name, Object conn, String... fragments) {
        return bad(name, () -> Dibs.execute(conn, "job", 10, 0, TASK), fragments);
    }

    private static Stream<Case> cases() {
        String euro513 = "\u20ac".repeat(171); // 171 three-byte characters: 513 bytes
        return Stream.of(
                // lock names: 1..=512 bytes of UTF-8, no control characters
                bad("lockName null", () -> Dibs.execute(uri(), null, 10, 0, TASK), "lockName must not be null"),
                bad(
                        "lockName null (Supplier)",
                        () -> Dibs.executeWithResult(uri(), null, 10, 0, SUPPLIER),
                        "lockName must not be null"),
                bad("lockName empty", () -> Dibs.execute(uri(), "", 10, 0, TASK), "lockName must not be empty"),
                bad(
                        "lockName empty (Duration)",
                        () -> Dibs.executeWithResult(uri(), "", Duration.ofSeconds(10), Duration.ZERO, SUPPLIER),
                        "lockName must not be empty"),
                bad(
                        "lockName 513 ASCII bytes",
                        () -> Dibs.execute(uri(), "x".repeat(513), 10, 0, TASK),
                        "lockName is 513 bytes of UTF-8; the maximum is 512"),
                bad(
                        "lockName 171 three-byte chars = 513 bytes",
                        () -> Dibs.execute(uri(), euro513, 10, 0, TASK),
                        "lockName is 513 bytes of UTF-8; the maximum is 512"),
                bad(
                        "lockName with a newline",
                        () -> Dibs.execute(uri(), "line\nbreak", 10, 0, TASK),
                        "lockName must not contain control characters; found U+000A at byte 4"),
                bad(
                        "lockName with a tab",
                        () -> Dibs.execute(uri(), "a\tb", 10, 0, TASK),
                        "lockName",
                        "U+0009 at byte 1"),
                bad(
                        "lockName with NUL",
                        () -> Dibs.execute(uri(), "nul\u0000", 10, 0, TASK),
                        "lockName",
                        "U+0000 at byte 3"),
                bad(
                        "lockName with DEL (U+007F)",
                        () -> Dibs.execute(uri(), "del\u007f", 10, 0, TASK),
                        "lockName",
                        "U+007F"),

                // durations in seconds
                bad(
                        "atMost negative",
                        () -> Dibs.execute(uri(), "job", -1, 0, TASK),
                        "atMost must be positive, got -1 s"),
                bad(
                        "atLeast negative",
                        () -> Dibs.execute(uri(), "job", 10, -1, TASK),
                        "atLeast must not be negative, got -1 s"),
                bad("atMost zero", () -> Dibs.execute(uri(), "job", 0, 0, TASK), "atMost must be positive, got 0 s"),
                bad(
                        "atLeast > atMost",
                        () -> Dibs.execute(uri(), "job", 5, 6, TASK),
                        "atLeast (6 s) must not exceed atMost (5 s)"),
                bad(
                        "atLeast > atMost (Supplier)",
                        () -> Dibs.executeWithResult(uri(), "job", 5, 6, SUPPLIER),
                        "atLeast (6 s) must not exceed atMost (5 s)"),
                bad(
                        "atMost Long.MAX_VALUE s",
                        () -> Dibs.execute(uri(), "job", Long.MAX_VALUE, 0, TASK),
                        "atMost = " + Long.MAX_VALUE + " s overflows 64-bit milliseconds"),
                bad(
                        "atMost Long.MAX_VALUE/1000+1 s",
                        () -> Dibs.execute(uri(), "job", Long.MAX_VALUE / 1000 + 1, 0, TASK),
                        "atMost",
                        "overflows"),
                bad(
                        "atLeast Long.MAX_VALUE s",
                        () -> Dibs.execute(uri(), "job", 10, Long.MAX_VALUE, TASK),
                        "atLeast = " + Long.MAX_VALUE + " s overflows 64-bit milliseconds"),

                // Duration overloads
                bad(
                        "Duration atMost negative",
                        () -> Dibs.execute(uri(), "job", Duration.ofMillis(-5), Duration.ZERO, TASK),
                        "atMost must be positive, got -5 ms"),
                bad(
                        "Duration atLeast negative",
                        () -> Dibs.execute(uri(), "job", Duration.ofSeconds(10), Duration.ofMillis(-1), TASK),
                        "atLeast must not be negative, got -1 ms"),
                bad(
                        "Duration atMost null",
                        () -> Dibs.execute(uri(), "job", null, Duration.ZERO, TASK),
                        "atMost must not be null"),
                bad(
                        "Duration atMost null (Supplier)",
                        () -> Dibs.executeWithResult(uri(), "job", null, Duration.ZERO, SUPPLIER),
                        "atMost must not be null"),
                bad(
                        "Duration atLeast null",
                        () -> Dibs.execute(uri(), "job", Duration.ofSeconds(1), null, TASK),
                        "atLeast must not be null"),
                bad(
                        "Duration atLeast null (Supplier)",
                        () -> Dibs.executeWithResult(uri(), "job", Duration.ofSeconds(1), null, SUPPLIER),
                        "atLeast must not be null"),
                bad(
                        "Duration atMost ofSeconds(Long.MAX_VALUE)",
                        () -> Dibs.execute(uri(), "job", Duration.ofSeconds(Long.MAX_VALUE), Duration.ZERO, TASK),
                        "atMost = " + Long.MAX_VALUE + " s overflows"),
                bad(
                        "Duration atLeast ofSeconds(Long.MAX_VALUE)",
                        () -> Dibs.executeWithResult(
                                uri(), "job", Duration.ofSeconds(10), Duration.ofSeconds(Long.MAX_VALUE), SUPPLIER),
                        "atLeast = " + Long.MAX_VALUE + " s overflows"),
                bad(
                        "Duration atMost ofNanos(500) is 0 ms",
                        () -> Dibs.execute(uri(), "job", Duration.ofNanos(500), Duration.ZERO, TASK),
                        "atMost must be positive, got 0 ms"),
                bad(
                        "Duration atMost 0.999999 ms is 0 ms",
                        () -> Dibs.execute(uri(), "job", Duration.ofNanos(999_999), Duration.ZERO, TASK),
                        "atMost must be positive, got 0 ms"),
                bad(
                        "Duration atLeast > atMost by 1 ms",
                        () -> Dibs.execute(uri(), "job", Duration.ofMillis(1000), Duration.ofMillis(1001), TASK),
                        "atLeast (1001 ms) must not exceed atMost (1000 ms)"),

                // tasks and conn
                bad(
                        "task null (Runnable)",
                        () -> Dibs.execute(uri(), "job", 10, 0, (Runnable) null),
                        "task must not be null"),
                bad(
                        "task null (Supplier)",
                        () -> Dibs.executeWithResult(uri(), "job", 10, 0, (Supplier<Integer>) null),
                        "task must not be null"),
                bad(
                        "task null (Duration, Runnable)",
                        () -> Dibs.execute(uri(), "job", Duration.ofSeconds(1), Duration.ZERO, null),
                        "task must not be null"),
                bad("conn null", () -> Dibs.execute(null, "job", 10, 0, TASK), "conn must not be null"),
                bad(
                        "conn null (Supplier)",
                        () -> Dibs.executeWithResult(null, "job", 10, 0, SUPPLIER),
                        "conn must not be null"),

                // conn of another type, and malformed URIs
                conn(
                        "conn an Integer",
                        42,
                        "conn must be a URI String",
                        "a Map conn spec",
                        "or DibsOptions",
                        "got java.lang.Integer"),
                conn("conn a List", List.of("redis://127.0.0.1"), "conn must be a URI String", "List"),
                bad(
                        "URI without scheme",
                        () -> Dibs.execute("127.0.0.1:" + port(), "job", 10, 0, TASK),
                        "invalid conn URI",
                        "expected scheme://"),
                bad(
                        "URI scheme http",
                        () -> Dibs.execute("http://127.0.0.1:" + port(), "job", 10, 0, TASK),
                        "invalid conn URI",
                        "unknown scheme 'http'"),
                conn("URI port 0", "redis://127.0.0.1:0", "invalid conn URI", "port must be", "between 1 and 65535"),
                conn(
                        "URI port 70000",
                        "redis://127.0.0.1:70000",
                        "invalid conn URI",
                        "port must be",
                        "between 1 and 65535"),
                conn(
                        "URI port not a number",
                        "redis://127.0.0.1:abc",
                        "invalid conn URI",
                        "port must be",
                        "between 1 and 65535"),
                bad(
                        "URI db not a number",
                        () -> Dibs.execute(uri("/abc"), "job", 10, 0, TASK),
                        "invalid conn URI",
                        "db must be a non-negative integer"),
                bad(
                        "URI db negative",
                        () -> Dibs.execute(uri("/-1"), "job", 10, 0, TASK),
                        "invalid conn URI",
                        "db must be a non-negative integer"),
                bad(
                        "URI with a query string",
                        () -> Dibs.execute(uri("/0?timeout=1"), "job", 10, 0, TASK),
                        "invalid conn URI",
                        "query parameters and fragments are not supported"),
                bad(
                        "URI with an unclosed IPv6 bracket",
                        () -> Dibs.execute("redis://[::1:" + port(), "job", 10, 0, TASK),
                        "invalid conn URI",
                        "unclosed '[' in an IPv6 host"),
                conn(
                        "URI unix socket relative path",
                        "unix://relative.sock",
                        "invalid conn URI",
                        "a unix socket path must be absolute"),
                bad(
                                "URI password in a bad URI is not shown",
                                () -> Dibs.execute("redis://user:hunter2@127.0.0.1:99999", "job", 10, 0, TASK),
                                "invalid conn URI 'redis://***@127.0.0.1:",
                                "port must be",
                                "between 1 and 65535")
                        .hiding("hunter2"),

                // maps
                bad(
                        "map unknown key",
                        () -> Dibs.execute(map("host", "127.0.0.1", "port", port(), "bogus", 1), "job", 10, 0, TASK),
                        "unknown key 'bogus' in the spec map",
                        // The list is dibs::CONN_KEYS, in its order (tests/it/conn_keys.rs holds the
                        // Java side to it): its head, not a copy of it.
                        "valid keys: uri, host, port, username, password, db,",
                        "cluster-nodes"),
                bad(
                        "map misspelled key 'hots'",
                        () -> Dibs.execute(map("hots", "127.0.0.1", "port", port()), "job", 10, 0, TASK),
                        "unknown key 'hots'",
                        "valid keys: uri, host, port"),
                bad(
                        "map port a Double",
                        () -> Dibs.execute(map("host", "127.0.0.1", "port", (double) port()), "job", 10, 0, TASK),
                        "'port' must be an integer, got java.lang.Double"),
                bad(
                        "map port a non-numeric String",
                        () -> Dibs.execute(map("host", "127.0.0.1", "port", "abc"), "job", 10, 0, TASK),
                        "'port' must be an integer"),
                bad(
                        "map host an Integer",
                        () -> Dibs.execute(map("host", 127, "port", port()), "job", 10, 0, TASK),
                        "'host' must be a string, got integer"),
                bad(
                        "map ssl \"yes\"",
                        () -> Dibs.execute(map("host", "127.0.0.1", "port", port(), "ssl", "yes"), "job", 10, 0, TASK),
                        "'ssl' must be a boolean, got string"),
                bad(
                        "map uri contradicts port",
                        () -> Dibs.execute(map("uri", uri(), "port", port() + 1), "job", 10, 0, TASK),
                        "'port' contradicts the 'uri' key: uri says " + port() + ", key says " + (port() + 1)),
                bad(
                                "map uri password contradicts password, neither shown",
                                () -> Dibs.execute(
                                        map(
                                                "uri",
                                                "redis://:hunter2@127.0.0.1:" + port(),
                                                "password",
                                                "wrong-secret-42"),
                                        "job",
                                        10,
                                        0,
                                        TASK),
                                "'password' contradicts the 'uri' key; give it once")
                        .hiding("hunter2", "wrong-secret-42"),
                bad(
                        "map host and :host",
                        () -> Dibs.execute(
                                map("host", "127.0.0.1", Keyword.intern("host"), "127.0.0.1", "port", port()),
                                "job",
                                10,
                                0,
                                TASK),
                        "key 'host' appears twice in the conn map"),
                bad(
                        "map spec keys beside spec/pool",
                        () -> Dibs.execute(map("spec", map("uri", uri()), "host", "127.0.0.1"), "job", 10, 0, TASK),
                        "unknown key 'host' in the conn map",
                        "(it belongs in another part of the conn map)",
                        "valid keys: spec, pool"),
                bad(
                        "map spec not a map",
                        () -> Dibs.execute(map("spec", uri()), "job", 10, 0, TASK),
                        "'spec' must be a map, got string"),
                bad(
                        "map ca-cert without TLS",
                        () -> Dibs.execute(map("uri", uri(), "ca-cert", "/etc/ssl/certs/ca.pem"), "job", 10, 0, TASK),
                        "'ca-cert' needs TLS"),
                bad(
                        "map timeout-ms 0",
                        () -> Dibs.execute(map("uri", uri(), "timeout-ms", 0), "job", 10, 0, TASK),
                        "'timeout-ms' must be between 1 and 86400000, got 0"),
                bad(
                        "map pool max-total 0",
                        () -> Dibs.execute(
                                map("spec", map("uri", uri()), "pool", map("max-total", 0)), "job", 10, 0, TASK),
                        "'max-total' must be at least 1"),
                bad(
                        "map key of another type",
                        () -> {
                            Map<Object, Object> m = new HashMap<>();
                            m.put("uri", uri());
                            m.put(7, "x");
                            Dibs.execute(m, "job", 10, 0, TASK);
                        },
                        "unknown key '7'"));
    }
}
