package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.sleep;
import static dibs.testsupport.TestSupport.sneak;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.TestSupport;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lock's behaviour against a real redis-server. */
@Tag("jvm")
@Timeout(60)
class DibsTest extends RedisTestBase {
    private static long pttl(String name) throws IOException {
        return Long.parseLong(redis.command("PTTL", lockKey(name)));
    }

    private static boolean exists(String name) throws IOException {
        return redis.command("EXISTS", lockKey(name)).equals("1");
    }

    @Test
    void winsRunsAndReleases() throws IOException {
        String name = uniqueName("win");
        AtomicBoolean heldDuringTask = new AtomicBoolean();
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            boolean ran = Dibs.execute(redis.uri(), name, 10, 0, () -> {
                try {
                    heldDuringTask.set(exists(name));
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            assertTrue(ran);
            assertTrue(heldDuringTask.get(), "the lock key exists while the task runs");
            assertFalse(exists(name), "atLeast 0: the lock is deleted at release");
            assertEquals(List.of(), log.messagesAbout(name), "a normal release logs nothing");
        }
    }

    @Test
    void skipsWhileAnotherHoldsTheLock() throws IOException {
        String name = uniqueName("skip");
        assertEquals("OK", redis.command("SET", lockKey(name), "someone-else", "PX", "10000"));
        AtomicBoolean ran = new AtomicBoolean();
        assertFalse(Dibs.execute(redis.uri(), name, 10, 0, () -> ran.set(true)));
        assertFalse(Dibs.execute(redis.uri(), name, Duration.ofSeconds(10), Duration.ZERO, () -> ran.set(true)));
        assertFalse(ran.get());
        assertEquals("someone-else", redis.command("GET", lockKey(name)), "a skip leaves the other's lock alone");
    }

    @Test
    void returnsTheResultOrEmptyWhenSkipped() throws IOException {
        String name = uniqueName("result");
        assertEquals(Optional.of(42), Dibs.executeWithResult(redis.uri(), name, 10, 0, () -> 42));
        assertEquals(
                Optional.of("ms"),
                Dibs.executeWithResult(redis.uri(), name, Duration.ofMillis(1500), Duration.ZERO, () -> "ms"));

        redis.command("SET", lockKey(name), "someone-else", "PX", "10000");
        AtomicBoolean ran = new AtomicBoolean();
        assertEquals(Optional.empty(), Dibs.executeWithResult(redis.uri(), name, 10, 0, () -> {
            ran.set(true);
            return 1;
        }));
        assertFalse(ran.get());
    }

    @Test
    void nullResultIsEmptyButTheTaskRan() {
        AtomicBoolean ran = new AtomicBoolean();
        Optional<Object> result = Dibs.executeWithResult(redis.uri(), uniqueName("null"), 10, 0, () -> {
            ran.set(true);
            return null;
        });
        assertEquals(Optional.empty(), result);
        assertTrue(ran.get());
    }

    @Test
    void runtimeExceptionReachesTheCallerAsTheSameObject() throws IOException {
        String name = uniqueName("rte");
        IllegalStateException boom = new IllegalStateException("boom");
        IllegalStateException caught = assertThrows(
                IllegalStateException.class,
                () -> Dibs.execute(redis.uri(), name, 10, 0, () -> {
                    throw boom;
                }));
        assertSame(boom, caught);
        assertFalse(exists(name), "released after the throw");
        assertTrue(Dibs.execute(redis.uri(), name, 10, 0, () -> {}), "re-acquirable at once");
    }

    @Test
    void errorReachesTheCallerAsTheSameObject() throws IOException {
        String name = uniqueName("error");
        Error boom = new Error("boom");
        Error caught = assertThrows(
                Error.class,
                () -> Dibs.executeWithResult(redis.uri(), name, 10, 0, () -> {
                    throw boom;
                }));
        assertSame(boom, caught);
        assertFalse(exists(name));
        assertTrue(Dibs.execute(redis.uri(), name, 10, 0, () -> {}));
    }

    @Test
    void aRealStackOverflowAndARealOutOfMemoryReachTheCallerAndTheLockIsReleased() throws IOException {
        // Thrown by the JVM itself, not constructed: the release runs after the stack unwound,
        // and allocates nothing the failed allocation could have starved.
        String deep = uniqueName("stack-overflow");
        java.util.concurrent.atomic.AtomicReference<Throwable> thrown =
                new java.util.concurrent.atomic.AtomicReference<>();
        StackOverflowError overflow = assertThrows(
                StackOverflowError.class,
                () -> Dibs.execute(redis.uri(), deep, 10, 0, () -> {
                    try {
                        recurse(0);
                    } catch (StackOverflowError e) {
                        thrown.set(e);
                        throw e;
                    }
                }));
        assertSame(thrown.get(), overflow);
        assertFalse(exists(deep), "released after a stack overflow");

        String big = uniqueName("out-of-memory");
        OutOfMemoryError oom = assertThrows(
                OutOfMemoryError.class,
                () -> Dibs.execute(redis.uri(), big, 10, 0, () -> {
                    try {
                        thrown.set(null);
                        long[] tooBig = new long[Integer.MAX_VALUE - 16]; // 16 GiB: more than any test heap
                        tooBig[0] = 1;
                    } catch (OutOfMemoryError e) {
                        thrown.set(e);
                        throw e;
                    }
                }));
        assertSame(thrown.get(), oom);
        assertFalse(exists(big), "released after an OutOfMemoryError");
        assertTrue(Dibs.execute(redis.uri(), big, 10, 0, () -> {}), "re-acquirable at once");
    }

    private static int recurse(int depth) {
        return recurse(depth + 1) + 1;
    }

    @Test
    void checkedExceptionThrownSneakilyReachesTheCaller() throws IOException {
        String name = uniqueName("checked");
        IOException boom = new IOException("checked boom");
        IOException caught = assertThrows(
                IOException.class,
                () -> Dibs.execute(redis.uri(), name, Duration.ofSeconds(10), Duration.ZERO, () -> {
                    throw sneak(boom);
                }));
        assertSame(boom, caught);
        assertFalse(exists(name));
        assertTrue(Dibs.execute(redis.uri(), name, 10, 0, () -> {}));
    }

    @Test
    void atLeastInSubSecondDurations() throws IOException {
        String name = uniqueName("atleast-ms");
        assertTrue(Dibs.execute(redis.uri(), name, Duration.ofMillis(10_000), Duration.ofMillis(1500), () -> {}));
        long pttl = pttl(name);
        assertTrue(pttl > 500 && pttl <= 1500, "PTTL should be the rest of atLeast 1500 ms, got " + pttl);
    }

    @Test
    void lockIsDeletedWhenTheTaskOutlivedAtLeast() throws IOException {
        String name = uniqueName("outlived");
        assertTrue(Dibs.execute(redis.uri(), name, Duration.ofSeconds(10), Duration.ofMillis(300), () -> sleep(500)));
        assertFalse(exists(name));
    }

    @Test
    void lockExpiresAfterAtMostAndThatIsLogged() throws Exception {
        String name = uniqueName("atmost");
        AtomicInteger pttlInTask = new AtomicInteger();
        AtomicBoolean otherRan = new AtomicBoolean();
        ExecutorService other = Executors.newSingleThreadExecutor();
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            assertTrue(Dibs.execute(redis.uri(), name, Duration.ofMillis(500), Duration.ZERO, () -> {
                try {
                    pttlInTask.set((int) pttl(name));
                    long deadline = System.currentTimeMillis() + 3000;
                    while (exists(name) && System.currentTimeMillis() < deadline) {
                        sleep(20);
                    }
                    // The lock expired mid-task: another instance can win it now.
                    Future<Boolean> f =
                            other.submit(() -> Dibs.execute(redis.uri(), name, 10, 0, () -> otherRan.set(true)));
                    assertTrue(f.get());
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }));
            assertTrue(pttlInTask.get() > 0 && pttlInTask.get() <= 500, "PTTL during the task: " + pttlInTask.get());
            assertTrue(otherRan.get(), "another caller won the expired lock");
            List<String> warnings = log.warningsAbout(name);
            assertEquals(1, warnings.size(), "one warning: " + log.messages());
            String w = warnings.get(0);
            assertTrue(w.contains("'" + name + "'"), w);
            assertTrue(w.contains("atMost 500 ms"), w);
            assertTrue(w.contains("another instance may have run concurrently"), w);
            assertTrue(w.matches("(?s).* \\d+ ms after .*"), "names the elapsed ms: " + w);
        } finally {
            other.shutdownNow();
        }
    }

    @Test
    void recoversAfterARestartWhileFailingInBetween() throws IOException {
        String name = uniqueName("restart");
        assertTrue(Dibs.execute(redis.uri(), name, 10, 0, () -> {}));
        redis.stop();
        try {
            AtomicBoolean ran = new AtomicBoolean();
            assertThrows(
                    DibsConnectionException.class, () -> Dibs.execute(redis.uri(), name, 10, 0, () -> ran.set(true)));
            assertFalse(ran.get());
        } finally {
            redis.start();
        }
        assertTrue(Dibs.execute(redis.uri(), name, 10, 0, () -> {}));
    }

    @Test
    void aRestartBetweenTwoCallsDoesNotFailTheSecond() throws IOException {
        // Pooled connections went stale with the restart; the next call must not pay for it.
        String name = uniqueName("restart-quiet");
        assertTrue(Dibs.execute(redis.uri(), name, 10, 0, () -> {}));
        redis.stop();
        redis.start();
        assertTrue(Dibs.execute(redis.uri(), name, 10, 0, () -> {}));
    }
}
