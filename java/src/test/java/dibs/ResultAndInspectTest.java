package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.sleep;
import static dibs.testsupport.TestSupport.sneak;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.RedisServer;
import dibs.testsupport.TestSupport;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link Dibs#attempt} and its {@link DibsResult}; {@link Dibs#inspect} and its {@link LockInfo}. */
@Timeout(60)
class ResultAndInspectTest extends RedisTestBase {
    private static boolean exists(String name) throws IOException {
        return redis.command("EXISTS", lockKey(name)).equals("1");
    }

    private static long pttl(String name) throws IOException {
        return Long.parseLong(redis.command("PTTL", lockKey(name)));
    }

    /** Sets the lock's key as another (non-dibs) holder would. */
    private static void takeForeign(String name, String value, long pxMs) throws IOException {
        assertEquals("OK", redis.command("SET", lockKey(name), value, "PX", Long.toString(pxMs)));
    }

    // ---------------------------------------------------------------- DibsResult

    @Test
    void skippedAndRanReturningNullAreToldApart() throws IOException {
        String held = uniqueName("res-skipped");
        takeForeign(held, "foo", 5000);
        AtomicBoolean ran = new AtomicBoolean();
        DibsResult<String> skipped = Dibs.attempt(redis.uri(), held, 10, 0, () -> {
            ran.set(true);
            return "never";
        });
        assertFalse(ran.get(), "the task must not run when the lock is held");
        assertFalse(skipped.acquired());
        NoSuchElementException e = assertThrows(NoSuchElementException.class, skipped::value);
        assertTrue(e.getMessage().contains("skipped"), e.getMessage());
        assertEquals(Optional.empty(), skipped.toOptional());
        assertFalse(skipped.ownedToTheEnd());
        assertEquals(Duration.ZERO, skipped.elapsed());
        assertEquals("foo", redis.command("GET", lockKey(held)), "a skip leaves the holder's key alone");

        String free = uniqueName("res-null");
        DibsResult<String> nullResult = Dibs.attempt(redis.uri(), free, 10, 0, () -> null);
        assertTrue(nullResult.acquired());
        assertNull(nullResult.value(), "ran and returned null: value() is null, not an exception");
        assertEquals(Optional.empty(), nullResult.toOptional());
        assertTrue(nullResult.ownedToTheEnd());
        assertFalse(exists(free), "atLeast 0: the key is deleted at release");
    }

    @Test
    void aValueComesBackThroughBothOverloads() throws IOException {
        String name = uniqueName("res-value");
        DibsResult<Integer> bySeconds = Dibs.attempt(redis.uri(), name, 10, 0, () -> 42);
        assertTrue(bySeconds.acquired());
        assertEquals(42, bySeconds.value());
        assertEquals(Optional.of(42), bySeconds.toOptional());
        assertTrue(bySeconds.ownedToTheEnd());
        assertTrue(bySeconds.toString().contains("value=42"), bySeconds.toString());

        DibsResult<List<String>> byDuration = Dibs.attempt(
                redis.uri(), name, Duration.ofMillis(5000), Duration.ofMillis(1000), () -> List.of("a", "b"));
        assertTrue(byDuration.acquired());
        assertEquals(List.of("a", "b"), byDuration.value());
        assertTrue(byDuration.ownedToTheEnd());
        // atLeast 1 s keeps the key, for about 1 s.
        long ttl = pttl(name);
        assertTrue(ttl > 0 && ttl <= 1000, "PTTL after release with atLeast 1 s: " + ttl);
        assertFalse(Dibs.attempt(redis.uri(), name, 10, 0, () -> 1).acquired(), "atLeast keeps it held");
    }

    @Test
    void ownedToTheEndIsFalseWhenTheTtlExpiredMidTask() throws IOException {
        String name = uniqueName("res-expired");
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            DibsResult<String> r = Dibs.attempt(redis.uri(), name, Duration.ofMillis(300), Duration.ZERO, () -> {
                sleep(500);
                return "late";
            });
            assertTrue(r.acquired());
            assertEquals("late", r.value(), "the value still comes back");
            assertFalse(r.ownedToTheEnd(), "the lock expired after 300 ms while the task ran 500 ms");
            assertTrue(r.elapsed().toMillis() >= 500, "elapsed " + r.elapsed());
            List<String> warnings = log.warningsAbout(name);
            assertEquals(1, warnings.size(), "one warning about the expiry: " + log.messages());
            assertTrue(warnings.get(0).contains("no longer ours"), warnings.get(0));
        }
        assertFalse(exists(name));

        // The same task under an atMost that covers it: owned to the end, no warning.
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            DibsResult<String> r = Dibs.attempt(redis.uri(), name, Duration.ofMillis(3000), Duration.ZERO, () -> {
                sleep(500);
                return "on time";
            });
            assertTrue(r.ownedToTheEnd());
            assertEquals(List.of(), log.warningsAbout(name));
        }
    }

    @Test
    void elapsedIsAboutTheTaskTime() {
        String name = uniqueName("res-elapsed");
        long start = System.nanoTime();
        DibsResult<Void> r = Dibs.attempt(redis.uri(), name, 10, 0, () -> {
            sleep(250);
            return null;
        });
        long wallMs = (System.nanoTime() - start) / 1_000_000;
        long elapsed = r.elapsed().toMillis();
        assertTrue(elapsed >= 250, "elapsed " + elapsed + " ms for a 250 ms task");
        assertTrue(elapsed <= wallMs, "elapsed " + elapsed + " ms, longer than the whole call (" + wallMs + " ms)");
        assertTrue(elapsed < 250 + 1000, "elapsed " + elapsed + " ms for a 250 ms task");

        DibsResult<Void> quick = Dibs.attempt(redis.uri(), name, 10, 0, () -> null);
        assertTrue(quick.elapsed().toMillis() < 250, "a no-op task: " + quick.elapsed());
    }

    @Test
    void exceptionsPropagateAsTheSameObjectAndTheLockIsReleased() throws IOException {
        String name = uniqueName("res-throws");
        IllegalStateException unchecked = new IllegalStateException("boom");
        assertSame(
                unchecked,
                assertThrows(
                        IllegalStateException.class,
                        () -> Dibs.attempt(redis.uri(), name, 10, 0, () -> {
                            throw unchecked;
                        })));
        assertFalse(exists(name), "released after the exception");

        IOException checked = new IOException("checked boom");
        assertSame(
                checked,
                assertThrows(
                        IOException.class,
                        () -> Dibs.attempt(redis.uri(), name, Duration.ofSeconds(10), Duration.ZERO, () -> {
                            throw sneak(checked);
                        })));
        assertFalse(exists(name));

        AssertionError error = new AssertionError("an Error");
        assertSame(
                error,
                assertThrows(
                        AssertionError.class,
                        () -> Dibs.attempt(redis.uri(), name, 10, 0, () -> {
                            throw error;
                        })));
        assertFalse(exists(name));
        assertEquals(0, error.getSuppressed().length, "nothing added to the task's exception");

        // executeWithResult keeps its old contract: empty for a skip and for null alike.
        assertEquals(Optional.empty(), Dibs.executeWithResult(redis.uri(), name, 10, 0, () -> null));
    }

    // ---------------------------------------------------------------- inspect

    @Test
    void insideTheTaskInspectShowsUsAsTheHolder() throws IOException {
        String name = uniqueName("insp-ours");
        long before = System.currentTimeMillis();
        AtomicReference<LockInfo> seen = new AtomicReference<>();
        AtomicReference<String> value = new AtomicReference<>();
        AtomicReference<Long> insideAt = new AtomicReference<>();
        assertTrue(Dibs.execute(redis.uri(), name, Duration.ofMillis(10_000), Duration.ZERO, () -> {
            seen.set(Dibs.inspect(redis.uri(), name));
            insideAt.set(System.currentTimeMillis());
            try {
                value.set(redis.command("GET", lockKey(name)));
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }));
        LockInfo info = seen.get();
        assertTrue(info.held(), info.toString());
        long remaining = info.remaining().orElseThrow().toMillis();
        assertTrue(remaining > 5_000 && remaining <= 10_000, "remaining " + remaining + " ms of 10000");
        assertEquals(ProcessHandle.current().pid(), info.pid().orElseThrow(), info.toString());
        // The value is token;host;pid;acquired-at-ms: inspect reads the last three.
        String[] fields = value.get().split(";");
        assertEquals(4, fields.length, value.get());
        assertEquals(Optional.of(fields[1]), info.host());
        assertFalse(fields[1].isBlank(), value.get());
        assertEquals(Long.toString(ProcessHandle.current().pid()), fields[2]);
        Instant at = info.acquiredAt().orElseThrow();
        assertEquals(Long.parseLong(fields[3]), at.toEpochMilli());
        assertTrue(
                at.toEpochMilli() >= before - 5 && at.toEpochMilli() <= insideAt.get() + 5,
                "acquiredAt " + at.toEpochMilli() + " not within [" + before + ", " + insideAt.get() + "]");
        assertTrue(info.toString().contains("pid=" + ProcessHandle.current().pid()), info.toString());

        LockInfo after = Dibs.inspect(redis.uri(), name);
        assertFalse(after.held(), "released (atLeast 0): " + after);
    }

    @Test
    void aFreeLockIsNotHeldAndHasNoDetails() {
        LockInfo info = Dibs.inspect(redis.uri(), uniqueName("insp-free"));
        assertFalse(info.held());
        assertEquals(Optional.empty(), info.remaining());
        assertEquals(Optional.empty(), info.host());
        assertTrue(info.pid().isEmpty());
        assertEquals(Optional.empty(), info.acquiredAt());
        assertEquals("LockInfo[free]", info.toString());
    }

    @Test
    void aKeySetBySomeoneElseIsHeldWithoutHolderDetails() throws IOException {
        String name = uniqueName("insp-foreign");
        takeForeign(name, "foo", 5000);
        LockInfo info = Dibs.inspect(redis.uri(), name);
        assertTrue(info.held());
        long remaining = info.remaining().orElseThrow().toMillis();
        assertTrue(remaining > 0 && remaining <= 5000, "remaining " + remaining);
        assertEquals(Optional.empty(), info.host());
        assertTrue(info.pid().isEmpty());
        assertEquals(Optional.empty(), info.acquiredAt());

        // Looks like dibs's format but the token is no UUID: still not a holder.
        String lookalike = uniqueName("insp-lookalike");
        takeForeign(lookalike, "not-a-uuid;somehost;123;1700000000000", 5000);
        LockInfo info2 = Dibs.inspect(redis.uri(), lookalike);
        assertTrue(info2.held());
        assertTrue(info2.pid().isEmpty(), info2.toString());
        assertEquals(Optional.empty(), info2.host());
    }

    @Test
    void aKeyWithoutTtlHasNoRemaining() throws IOException {
        String name = uniqueName("insp-nottl");
        assertEquals("OK", redis.command("SET", lockKey(name), "bar"));
        LockInfo info = Dibs.inspect(redis.uri(), name);
        assertTrue(info.held());
        assertEquals(Optional.empty(), info.remaining());
        assertTrue(info.toString().contains("remaining=none"), info.toString());
        assertFalse(Dibs.execute(redis.uri(), name, 10, 0, () -> {}), "a key without TTL still blocks");
        redis.command("DEL", lockKey(name));
    }

    @Test
    void inspectionNeverChangesTheLock() throws IOException {
        String name = uniqueName("insp-readonly");
        List<String> problems = new ArrayList<>();
        assertTrue(Dibs.execute(redis.uri(), name, Duration.ofMillis(20_000), Duration.ZERO, () -> {
            try {
                String valueBefore = redis.command("GET", lockKey(name));
                long ttlBefore = pttl(name);
                Map<String, Long> before = writeCalls();
                for (int i = 0; i < 5; i++) {
                    if (!Dibs.inspect(redis.uri(), name).held()) {
                        problems.add("inspect " + i + " did not see the lock held");
                    }
                }
                Map<String, Long> after = writeCalls();
                String valueAfter = redis.command("GET", lockKey(name));
                long ttlAfter = pttl(name);
                if (!valueBefore.equals(valueAfter)) {
                    problems.add("value " + valueBefore + " -> " + valueAfter);
                }
                // PTTL only goes down unless someone extends the key: inspection must not.
                if (ttlAfter > ttlBefore || ttlAfter < ttlBefore - 2000) {
                    problems.add("PTTL " + ttlBefore + " -> " + ttlAfter);
                }
                if (!before.equals(after)) {
                    problems.add("write commands during inspection: " + before + " -> " + after);
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }));
        assertEquals(List.of(), problems);

        // The same on a foreign key; and read-only commands: exactly one GETRANGE (a value read no
        // further than one of dibs's goes) and one PTTL each.
        String foreign = uniqueName("insp-readonly-foreign");
        takeForeign(foreign, "foo", 60_000);
        long ttlBefore = pttl(foreign);
        Map<String, Map<String, Long>> stats0 = redis.commandStats();
        for (int i = 0; i < 3; i++) {
            assertTrue(Dibs.inspect(redis.uri(), foreign).held());
        }
        Map<String, Map<String, Long>> stats1 = redis.commandStats();
        assertEquals(3, calls(stats1, "getrange") - calls(stats0, "getrange"), "GETRANGEs for 3 inspections");
        assertEquals(0, calls(stats1, "get") - calls(stats0, "get"), "no GET: a value is never read whole");
        assertEquals(3, calls(stats1, "pttl") - calls(stats0, "pttl"), "PTTLs for 3 inspections");
        for (String write : WRITES) {
            assertEquals(calls(stats0, write), calls(stats1, write), write + " during inspection");
        }
        assertEquals("foo", redis.command("GET", lockKey(foreign)));
        long ttlAfter = pttl(foreign);
        assertTrue(ttlAfter <= ttlBefore && ttlAfter > ttlBefore - 2000, "PTTL " + ttlBefore + " -> " + ttlAfter);
    }

    private static final List<String> WRITES =
            List.of("set", "pexpire", "expire", "persist", "del", "unlink", "eval", "evalsha", "getdel", "getex");

    private static Map<String, Long> writeCalls() throws IOException {
        Map<String, Map<String, Long>> stats = redis.commandStats();
        Map<String, Long> out = new LinkedHashMap<>();
        for (String write : WRITES) {
            out.put(write, calls(stats, write));
        }
        return out;
    }

    private static long calls(Map<String, Map<String, Long>> stats, String command) {
        return stats.getOrDefault(command, Map.of()).getOrDefault("calls", 0L);
    }

    @Test
    void inspectFailuresAreTypedLikeTheOtherCalls() throws IOException {
        String password = "opt-s3cret";
        try (RedisServer secured = RedisServer.launch("--requirepass", password)) {
            String name = uniqueName("insp-auth");
            String noPassword = secured.uri();
            // A pipeline folds NOAUTH into one untyped error; inspect still reports it typed.
            DibsException e = assertThrows(DibsAuthenticationException.class, () -> Dibs.inspect(noPassword, name));
            assertTrue(e.getMessage().contains("127.0.0.1:" + secured.port()), e.getMessage());
            assertTrue(e.getMessage().contains("NOAUTH"), e.getMessage());
            assertThrows(DibsAuthenticationException.class, () -> Dibs.execute(noPassword, name, 10, 0, () -> {}));
            assertThrows(
                    DibsAuthenticationException.class,
                    () -> Dibs.inspect("redis://:" + password + "-nope@127.0.0.1:" + secured.port(), name));

            // The README's minimal ACL without +pttl locks, but inspect needs PTTL (the README says so).
            List<String> readmeAcl = List.of(
                    "ACL",
                    "SETUSER",
                    "dibs",
                    "on",
                    ">" + password,
                    "resetkeys",
                    "~dibs:*",
                    "resetchannels",
                    "-@all",
                    "+set",
                    "+get",
                    "+getrange",
                    "+evalsha",
                    "+eval",
                    "+pexpire",
                    "+del",
                    "+time",
                    "+info",
                    "+wait",
                    "+ping",
                    "+hello",
                    "+select");
            assertEquals("OK", secured.command(readmeAcl.toArray(new String[0])));
            String asDibs = "redis://dibs:" + password + "@127.0.0.1:" + secured.port();
            DibsResult<Long> fenced =
                    Dibs.attempt(asDibs, name, Duration.ofSeconds(10), Duration.ofSeconds(5), Dibs::fencingToken);
            assertTrue(fenced.acquired());
            assertTrue(fenced.value() > 0, "the README's ACL allows the fencing token's TIME");
            DibsPermissionException noPttl =
                    assertThrows(DibsPermissionException.class, () -> Dibs.inspect(asDibs, name));
            assertTrue(noPttl.getMessage().contains("pttl"), noPttl.getMessage());
            assertEquals("OK", secured.command("ACL", "SETUSER", "dibs", "+pttl"));
            LockInfo info = Dibs.inspect(asDibs, name);
            assertTrue(info.held(), info.toString());
            assertEquals(ProcessHandle.current().pid(), info.pid().orElse(-1));

            // A user that may not read the key.
            assertEquals("OK", secured.command("ACL", "SETUSER", "other", "on", ">" + password, "~other:*", "+@all"));
            DibsPermissionException denied = assertThrows(
                    DibsPermissionException.class,
                    () -> Dibs.inspect("redis://other:" + password + "@127.0.0.1:" + secured.port(), name));
            assertFalse(denied.getMessage().contains(password), denied.getMessage());
        }
    }

    @Test
    void anInvalidNameIsRejectedWithoutIo() throws IOException {
        // Warm the pool first, so that the counts below would see any command the calls send.
        Dibs.inspect(redis.uri(), uniqueName("insp-warm"));
        long totalBefore = totalCallsButInfo();
        String[] bad = {"", "a\nb", "nul\0", "x".repeat(513)};
        for (String name : bad) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class,
                    () -> Dibs.inspect(redis.uri(), name),
                    "name of " + name.length() + " chars");
            assertTrue(e.getMessage().toLowerCase().contains("name"), e.getMessage());
        }
        IllegalArgumentException nullName =
                assertThrows(IllegalArgumentException.class, () -> Dibs.inspect(redis.uri(), null));
        assertTrue(nullName.getMessage().contains("lockName"), nullName.getMessage());
        IllegalArgumentException nullConn = assertThrows(IllegalArgumentException.class, () -> Dibs.inspect(null, "x"));
        assertTrue(nullConn.getMessage().contains("conn"), nullConn.getMessage());
        assertEquals(totalBefore, totalCallsButInfo(), "commands sent by rejected inspections");
    }
}
