package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.sleep;
import static dibs.testsupport.TestSupport.sneak;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
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
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Faults of a server dibs is talking to, each with the task's outcome checked: killed mid-task,
 * down at acquire, frozen, scripts flushed, connections killed, the lock expired mid-task.
 * A server restarted between two calls is {@link DibsTest#aRestartBetweenTwoCallsDoesNotFailTheSecond}
 * (and, failing in between, {@link DibsTest#recoversAfterARestartWhileFailingInBetween}); every
 * kill here is followed by a restart and a call that must succeed too.
 *
 * <p>The server has a password, so that every message and log line can be checked for it. The
 * number of scenarios survived goes to {@code target/reliability/faults.txt}.
 */
@Timeout(90)
class ServerFaultTest {
    private static final String PASSWORD = "right-secret";
    private static final AtomicInteger SURVIVED = new AtomicInteger();

    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass("--requirepass", PASSWORD);

    /** Whatever a scenario did to the server, the next one finds it up and answering. */
    @AfterEach
    void serverUpAgain() throws IOException {
        redis.thaw();
        redis.start();
    }

    @AfterAll
    static void report() throws IOException {
        Path dir = TestSupport.repositoryRoot().resolve(Paths.get("target", "reliability"));
        Files.createDirectories(dir);
        Files.write(dir.resolve("faults.txt"), ("faults=" + SURVIVED.get() + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static void survived() {
        SURVIVED.incrementAndGet();
    }

    private static String authUri() {
        return "redis://:" + PASSWORD + "@127.0.0.1:" + redis.port();
    }

    private static Map<String, Object> authMap(String key, Object value) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("host", "127.0.0.1");
        m.put("port", redis.port());
        m.put("password", PASSWORD);
        m.put(key, value);
        return m;
    }

    private static String endpoint() {
        return "127.0.0.1:" + redis.port();
    }

    private static String command(String... args) {
        try {
            return redis.command(args);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void killRedis() {
        try {
            redis.kill();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    private static void assertNoPassword(String text) {
        assertFalse(String.valueOf(text).contains(PASSWORD), "password in: " + text);
    }

    /** The release failed, and that is one WARNING naming the lock and why, never the password. */
    private static void assertReleaseFailureLogged(TestSupport.LogCapture log, String name) {
        assertEquals(1, log.messagesAbout(name).size(), "exactly one log record: " + log.messages());
        List<String> warnings = log.warningsAbout(name);
        assertEquals(1, warnings.size(), "one WARNING: " + log.messages());
        String w = warnings.get(0);
        assertTrue(w.startsWith("release of lock '" + name + "' failed: "), w);
        assertTrue(w.contains(endpoint()), "names the server: " + w);
        assertTrue(w.contains("expires by itself at most 10 s after it was acquired"), w);
        assertFalse(w.contains("failed: null"), "Rust should say why: " + w);
        assertNoPassword(w);
    }

    // ---- Redis killed (SIGKILL) while the task runs ------------------------------------------

    @Test
    void killedMidTaskTheValueIsReturnedAndTheReleaseFailureLogged() throws IOException {
        String name = uniqueName("sigkill-value");
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            Optional<Integer> result = Dibs.executeWithResult(authUri(), name, 10, 0, () -> {
                killRedis();
                return 7;
            });
            assertEquals(Optional.of(7), result, "the task's value, despite the failed release");
            assertReleaseFailureLogged(log, name);
        }
        redis.start();
        assertTrue(Dibs.execute(authUri(), name, 10, 0, () -> {}), "a call after the restart succeeds");
        survived();
    }

    @Test
    void killedMidTaskTheListenerHearsThatTheReleaseFailed() throws IOException {
        String name = uniqueName("sigkill-listener");
        List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        DibsOptions options = DibsOptions.builder()
                .uri(authUri())
                .listener(new DibsListener() {
                    @Override
                    public void acquired(String lockName) {
                        events.add("acquired");
                    }

                    @Override
                    public void released(String lockName, java.time.Duration heldFor) {
                        events.add("released");
                    }

                    @Override
                    public void expired(String lockName, java.time.Duration heldFor) {
                        events.add("expired");
                    }

                    @Override
                    public void releaseFailed(String lockName, java.time.Duration heldFor) {
                        events.add("releaseFailed " + lockName);
                    }
                })
                .build();
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            assertTrue(Dibs.execute(options, name, 10, 0, ServerFaultTest::killRedis));
            assertReleaseFailureLogged(log, name);
        }
        assertEquals(List.of("acquired", "releaseFailed " + name), events);
        redis.start();
        survived();
    }

    @Test
    void killedMidTaskTheExceptionIsRethrownAsTheSameObject() throws IOException {
        String name = uniqueName("sigkill-throw");
        IOException boom = new IOException("task failed"); // checked, thrown sneakily
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            IOException caught = assertThrows(
                    IOException.class,
                    () -> Dibs.execute(authUri(), name, 10, 0, () -> {
                        killRedis();
                        throw sneak(boom);
                    }));
            assertSame(boom, caught);
            assertEquals(0, caught.getSuppressed().length, "the task's exception is not decorated");
            assertReleaseFailureLogged(log, name);
        }
        redis.start();
        assertTrue(Dibs.execute(authUri(), name, 10, 0, () -> {}), "a call after the restart succeeds");
        survived();
    }

    // ---- Redis down at acquire ---------------------------------------------------------------

    @Test
    void downAtAcquireIsAConnectionErrorWithinTheConnectTimeout() throws IOException {
        String name = uniqueName("down");
        Map<String, Object> conn = authMap("conn-timeout-ms", 500);
        assertTrue(Dibs.execute(conn, name, 10, 0, () -> {}), "the pool holds a live connection now");
        redis.kill();

        AtomicBoolean ran = new AtomicBoolean();
        long start = System.nanoTime();
        DibsConnectionException e =
                assertThrows(DibsConnectionException.class, () -> Dibs.execute(conn, name, 10, 0, () -> ran.set(true)));
        long elapsed = ms(start);
        assertTrue(elapsed < 1500, "failed after " + elapsed + " ms with conn-timeout-ms 500");
        assertFalse(ran.get(), "the task must not run");
        assertTrue(
                e.getMessage().contains(endpoint()) && e.getMessage().contains("acquiring lock '" + name + "'"),
                "names the server and the lock: " + e.getMessage());
        assertNoPassword(e.getMessage());

        redis.start();
        assertTrue(Dibs.execute(conn, name, 10, 0, () -> {}), "a call after the restart succeeds");
        survived();
    }

    // ---- Redis frozen (SIGSTOP) --------------------------------------------------------------

    @Test
    void frozenIsATimeoutWithinTheTimeoutAndNoThreadIsStuck() throws Exception {
        Map<String, Object> warm = authMap("timeout-ms", 500);
        // Another spec (db 1), so a pool of its own that has never connected: the frozen server
        // accepts the TCP connection (the kernel does) but never answers AUTH.
        Map<String, Object> cold = Map.of("uri", authUri() + "/1", "timeout-ms", 500);
        assertTrue(Dibs.execute(warm, uniqueName("frozen-warmup"), 10, 0, () -> {}));

        ExecutorService callers = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "frozen-caller");
            t.setDaemon(true);
            return t;
        });
        try {
            redis.freeze();
            try {
                for (Object conn : List.of(warm, cold)) {
                    String name = uniqueName("frozen");
                    AtomicBoolean ran = new AtomicBoolean();
                    AtomicReference<Long> elapsed = new AtomicReference<>();
                    Future<Boolean> call = callers.submit(() -> {
                        long start = System.nanoTime();
                        try {
                            return Dibs.execute(conn, name, 10, 0, () -> ran.set(true));
                        } finally {
                            elapsed.set(ms(start));
                        }
                    });
                    Throwable thrown;
                    try {
                        call.get(10, TimeUnit.SECONDS);
                        thrown = null;
                    } catch (ExecutionException e) {
                        thrown = e.getCause();
                    } catch (TimeoutException e) {
                        call.cancel(true);
                        throw new AssertionError(
                                "a call to a frozen server with timeout-ms 500 still hangs after 10 s");
                    }
                    String which = conn == warm ? "warm pool" : "cold pool";
                    DibsTimeoutException timeout = assertInstanceOf(DibsTimeoutException.class, thrown, which);
                    // A new connection's AUTH and SELECT share the one connect budget.
                    long bound = 2000;
                    assertTrue(
                            elapsed.get() < bound,
                            which + ": timed out after " + elapsed.get() + " ms with timeout-ms 500");
                    assertFalse(ran.get(), which + ": the task must not run");
                    assertTrue(timeout.getMessage().contains(endpoint()), which + ": " + timeout.getMessage());
                    assertTrue(
                            timeout.getMessage().contains("no answer within 500 ms"),
                            which + ": " + timeout.getMessage());
                    assertNoPassword(timeout.getMessage());
                }
            } finally {
                redis.thaw();
            }
            // The SETs of the timed-out calls may land now that the server runs again: they hold
            // those names until atMost. The next call, on another name, succeeds on both pools.
            for (Object conn : List.of(warm, cold)) {
                Future<Boolean> call = callers.submit(() -> Dibs.execute(conn, uniqueName("thawed"), 10, 0, () -> {}));
                assertTrue(call.get(10, TimeUnit.SECONDS), "a call after SIGCONT succeeds");
            }
        } finally {
            callers.shutdownNow();
            assertTrue(callers.awaitTermination(5, TimeUnit.SECONDS), "the calling thread is not stuck");
        }
        survived();
    }

    // ---- SCRIPT FLUSH between calls -----------------------------------------------------------

    @Test
    void scriptFlushBetweenCallsCostsOneEvalPerScriptAndTheCallStillWorks() throws IOException {
        // Two scripts per call: the acquire's (SET NX PX and the fencing token) and the release's.
        String name = uniqueName("flush");
        assertTrue(Dibs.execute(authUri(), name, 10, 0, () -> {}), "both scripts are cached now");
        assertEquals("OK", redis.command("SCRIPT", "FLUSH"));

        long eval = redis.calls("eval");
        long evalsha = redis.calls("evalsha");
        AtomicBoolean heldDuringTask = new AtomicBoolean();
        assertTrue(Dibs.execute(
                authUri(),
                name,
                10,
                0,
                () -> heldDuringTask.set(command("EXISTS", lockKey(name)).equals("1"))));
        assertTrue(heldDuringTask.get());
        assertEquals("0", redis.command("EXISTS", lockKey(name)), "released (deleted, atLeast 0) despite the flush");
        assertEquals(2, redis.calls("eval") - eval, "one EVAL per script after its NOSCRIPT");
        assertEquals(2, redis.calls("evalsha") - evalsha, "one EVALSHA per script, answered NOSCRIPT");

        // The EVALs cached the scripts again: the next call is two EVALSHAs.
        assertTrue(Dibs.execute(authUri(), name, 10, 0, () -> {}));
        assertEquals("0", redis.command("EXISTS", lockKey(name)));
        assertEquals(2, redis.calls("eval") - eval, "no further EVAL");
        assertEquals(4, redis.calls("evalsha") - evalsha);
        survived();
    }

    // ---- CLIENT KILL of dibs's connections ---------------------------------------------------

    @Test
    void killedConnectionsAreReplacedAndTheNextCallSucceeds() throws IOException {
        String name = uniqueName("client-kill");
        assertTrue(Dibs.execute(authUri(), name, 10, 0, () -> {}), "the pool holds a live connection now");
        long killed = Long.parseLong(redis.command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"));
        assertTrue(killed >= 1, "CLIENT KILL found dibs's connections: " + killed);

        AtomicInteger runs = new AtomicInteger();
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            assertTrue(
                    Dibs.execute(authUri(), name, 10, 0, runs::incrementAndGet), "the next call reconnects and wins");
            assertEquals(List.of(), log.messagesAbout(name), "a reconnect is silent");
        }
        assertEquals(1, runs.get(), "the task ran exactly once");
        assertEquals("0", redis.command("EXISTS", lockKey(name)), "and was released");
        survived();
    }

    // ---- the lock's TTL expired mid-task, and someone else took it -----------------------------

    @Test
    void expiredMidTaskTheOtherHoldersLockIsUntouchedAndItIsLogged() throws IOException {
        String name = uniqueName("ttl-expired");
        String key = lockKey(name);
        AtomicReference<String> otherSet = new AtomicReference<>();
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            assertTrue(Dibs.execute(authUri(), name, Duration.ofMillis(300), Duration.ZERO, () -> {
                long start = System.nanoTime();
                while (command("EXISTS", key).equals("1") && ms(start) < 5000) {
                    sleep(10); // until our lock expires after atMost 300 ms
                }
                // A second holder takes the free lock while our task still runs.
                otherSet.set(command("SET", key, "other-holder", "NX", "PX", "60000"));
                long left = 500 - ms(start);
                if (left > 0) {
                    sleep(left);
                }
            }));
            assertEquals("OK", otherSet.get(), "the second holder won the expired lock");
            assertEquals("other-holder", redis.command("GET", key), "the release left the other's lock alone");
            long pttl = Long.parseLong(redis.command("PTTL", key));
            assertTrue(pttl > 59_000 && pttl <= 60_000, "the other's TTL is untouched: " + pttl);

            assertEquals(1, log.messagesAbout(name).size(), "exactly one log record: " + log.messages());
            List<String> warnings = log.warningsAbout(name);
            assertEquals(1, warnings.size(), "one WARNING: " + log.messages());
            String w = warnings.get(0);
            assertTrue(w.contains("lock '" + name + "'"), "names the lock: " + w);
            assertTrue(w.contains("(atMost 300 ms)"), "names atMost: " + w);
            assertTrue(w.contains("another instance may have run concurrently"), w);
            Matcher elapsed =
                    Pattern.compile("released, (\\d+) ms after it was acquired").matcher(w);
            assertTrue(elapsed.find(), "names the elapsed ms: " + w);
            long ms = Long.parseLong(elapsed.group(1));
            assertTrue(ms >= 500 && ms < 10_000, "elapsed is the task's run, at least 500 ms: " + w);
            assertNoPassword(w);
        } finally {
            redis.command("DEL", key);
        }
        survived();
    }
}
