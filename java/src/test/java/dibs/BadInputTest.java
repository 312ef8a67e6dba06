package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.RedisServer;
import dibs.testsupport.TestSupport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A table of bad inputs: each one is an {@link IllegalArgumentException} whose message names the
 * argument or key, the task never runs, and not one command reaches Redis.
 *
 * <p>The valid parts of every call point at a live redis-server, so that validating too late
 * would show up as a command (or a success) rather than as a connection error. The proof is
 * {@code INFO commandstats}, read before and after the whole table: every {@code cmdstat_*}
 * count stays put except {@code cmdstat_info}, the readings themselves. The fixture's RESP helper
 * sends nothing else (one connection per command, no HELLO, and no AUTH since this server has
 * no password), and {@code total_connections_received} shows that dibs did not even connect.
 * The count of cases and the command delta go to {@code target/reliability/bad-input.txt}.
 *
 * <p>Bad input that does need the server (a wrong password, a user without permission) is in
 * {@link AccessErrorTest}; an invalid argument beating an unreachable server is in
 * {@link ValidationTest}.
 */
@Tag("jvm")
@Timeout(60)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BadInputTest {
    private static final AtomicInteger PASSED = new AtomicInteger();

    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    private static Map<String, Map<String, Long>> statsBefore;
    private static long connectionsBefore;

    @BeforeAll
    static void readStats() throws IOException {
        // Each reading is one fixture connection sending one INFO.
        connectionsBefore = connections();
        statsBefore = redis.commandStats();
    }

    private static long connections() throws IOException {
        return Long.parseLong(redis.info("stats", "total_connections_received"));
    }

    /** The table ({@link BadInputCases}), on this class's server. */
    static Stream<BadInputCases.Case> cases() {
        return BadInputCases.on(redis);
    }

    @Order(1)
    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("cases")
    void isAnIllegalArgumentNamingTheArgument(BadInputCases.Case c) {
        BadInputCases.RAN.set(false);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, c.call);
        String message = String.valueOf(e.getMessage());
        for (String fragment : c.fragments) {
            assertTrue(message.contains(fragment), "message should contain '" + fragment + "': " + message);
        }
        for (String secret : c.secrets) {
            assertFalse(message.contains(secret), "message shows '" + secret + "': " + message);
        }
        assertFalse(BadInputCases.RAN.get(), "the task must not run");
        PASSED.incrementAndGet();
    }

    @Order(2)
    @Test
    void noCaseSentACommandToRedis() throws IOException {
        Map<String, Map<String, Long>> stats = redis.commandStats();
        long connections = connections();

        TreeSet<String> names = new TreeSet<>(stats.keySet());
        names.addAll(statsBefore.keySet());
        long commands = 0;
        StringBuilder changed = new StringBuilder();
        for (String name : names) {
            if (name.equals("info")) {
                continue; // the readings themselves
            }
            // A command refused before it ran (NOPERM, wrong arity ...) is a rejected call.
            long delta = count(stats, name, "calls")
                    - count(statsBefore, name, "calls")
                    + count(stats, name, "rejected_calls")
                    - count(statsBefore, name, "rejected_calls");
            if (delta != 0) {
                changed.append(' ').append(name).append('+').append(delta);
            }
            commands += delta;
        }
        writeReport(PASSED.get(), commands);
        assertEquals(0, commands, "commands sent during the table:" + changed);
        // Connections counted after the first reading: the three later readings, none by dibs.
        assertEquals(3, connections - connectionsBefore, "connections made during the table");
        // INFO: the commandstats reading before the table (a reading does not count itself).
        assertEquals(1, count(stats, "info", "calls") - count(statsBefore, "info", "calls"));
    }

    private static long count(Map<String, Map<String, Long>> stats, String command, String field) {
        return stats.getOrDefault(command, Map.of()).getOrDefault(field, 0L);
    }

    private static void writeReport(int cases, long commands) throws IOException {
        // The repository root's target/reliability, which scripts/reliability-report.py reads.
        Path dir = TestSupport.repositoryRoot().resolve(Paths.get("target", "reliability"));
        Files.createDirectories(dir);
        Files.write(
                dir.resolve("bad-input.txt"),
                ("cases=" + cases + "\ncommands=" + commands + "\n").getBytes(StandardCharsets.UTF_8));
    }

    // ---- and what is allowed ----------------------------------------------------------------

    /** Runs a task under {@code name}; returns whether our lock key held it meanwhile. */
    private static boolean keyHeldDuringTask(String name) {
        AtomicReference<String> seen = new AtomicReference<>();
        assertTrue(
                Dibs.execute(redis.uri(), name, 10, 0, () -> {
                    try {
                        seen.set(redis.command("EXISTS", lockKey(name)));
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }),
                "won the lock '" + name + "'");
        return "1".equals(seen.get());
    }

    @Order(3)
    @Test
    void spacesAndNonAsciiAreAllowedInLockNames() throws IOException {
        String suffix = " " + uniqueName("");
        for (String name : List.of(
                "Bericht für März" + suffix,
                "nightly report" + suffix,
                "日本語のジョブ" + suffix,
                "emoji \uD83D\uDD12" + suffix)) {
            assertTrue(keyHeldDuringTask(name), "key 'dibs:" + name + "' held during the task");
            assertEquals("0", redis.command("EXISTS", lockKey(name)), "released: " + name);
        }
    }

    @Order(3)
    @Test
    void aNameOfExactly512BytesIsAllowed() {
        String tail = uniqueName("");
        String ascii = "x".repeat(512 - tail.length()) + tail;
        String euros = "\u20ac".repeat(170) + "xx"; // 510 + 2 bytes
        assertEquals(512, ascii.getBytes(StandardCharsets.UTF_8).length);
        assertEquals(512, euros.getBytes(StandardCharsets.UTF_8).length);
        assertTrue(keyHeldDuringTask(ascii));
        assertTrue(keyHeldDuringTask(euros));
    }
}
