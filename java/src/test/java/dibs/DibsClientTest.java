package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.sleep;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/** {@link DibsClient}: what {@link Dibs} does, on connections of its own, and its close. */
@Timeout(90)
class DibsClientTest extends RedisTestBase {
    @Test
    void aClientDoesWhatDibsDoes() throws IOException {
        EventRecorder rec = new EventRecorder();
        try (DibsClient client = Dibs.client(local().listener(rec).build())) {
            String name = uniqueName("cli-methods");
            assertTrue(client.execute(name, 10, 0, () -> {}));
            assertTrue(client.execute(name, Duration.ofSeconds(10), Duration.ZERO, () -> {}));
            assertEquals(Optional.of("a"), client.executeWithResult(name, 10, 0, () -> "a"));
            assertEquals(
                    Optional.of("b"), client.executeWithResult(name, Duration.ofSeconds(10), Duration.ZERO, () -> "b"));
            DibsResult<String> nullValue = client.attempt(name, 10, 0, () -> null);
            assertTrue(nullValue.acquired());
            assertEquals(null, nullValue.value());
            DibsResult<Integer> held = client.attempt(name, Duration.ofSeconds(10), Duration.ofSeconds(5), () -> {
                LockInfo info = client.inspect(name);
                assertEquals(ProcessHandle.current().pid(), info.pid().orElse(-1));
                return 7;
            });
            assertEquals(7, held.value());
            assertTrue(held.ownedToTheEnd());
            assertTrue(client.inspect(name).held(), "atLeast 5 s keeps it");
            assertFalse(client.attempt(name, 10, 0, () -> 8).acquired());
            assertFalse(Dibs.execute(redis.uri(), name, 10, 0, () -> {}), "the client's lock excludes Dibs's");
            assertEquals(6 * 4 + 2, rec.events.size(), "the listener heard the client: " + rec.events);
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> client.execute("", 10, 0, () -> {}));
            assertTrue(e.getMessage().toLowerCase().contains("name"), e.getMessage());
        }
    }

    @Test
    void aClientHasItsOwnConnectionsAndDropsThemOnClose() throws IOException {
        try (RedisServer fresh = RedisServer.launch()) {
            String name = uniqueName("cli-pool");
            Dibs.inspect(fresh.uri(), name); // the shared pool's connection, idle from now on
            int shared = clients(fresh);
            long received = received(fresh);
            DibsClient client = Dibs.client(fresh.uri());
            assertEquals(0, received(fresh) - received - 1, "making a client connects nothing yet");
            received = received(fresh);
            assertTrue(client.execute(name, 10, 0, () -> {}));
            assertNotNull(client.inspect(name));
            assertEquals(
                    1,
                    received(fresh) - received - 1,
                    "the client opened one connection of its own, beside the shared pool's idle one");
            assertEquals(shared + 1, clients(fresh), fresh.command("CLIENT", "LIST"));
            client.close();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (clients(fresh) != shared && System.nanoTime() < deadline) {
                sleep(20);
            }
            assertEquals(shared, clients(fresh), "close dropped the client's connection");
            received = received(fresh);
            assertTrue(Dibs.execute(fresh.uri(), name, 10, 0, () -> {}), "the shared pool is unaffected");
            assertEquals(0, received(fresh) - received - 1, "the shared pool still had its connection");
        }
    }

    /** Connections the server ever accepted, counting the one asking. */
    private static long received(RedisServer server) throws IOException {
        return Long.parseLong(server.info("stats", "total_connections_received"));
    }

    /**
     * Connected clients, not counting the one asking; read until two readings 30 ms apart agree,
     * so that a fixture connection closed a moment ago is not counted.
     */
    private static int clients(RedisServer server) throws IOException {
        int last = -1;
        for (int i = 0; i < 20; i++) {
            int now = server.command("CLIENT", "LIST").split("\n").length - 1;
            if (now == last) {
                return now;
            }
            last = now;
            sleep(30);
        }
        return last;
    }

    @Test
    void aClosedClientRefusesEveryCall() {
        DibsClient client = Dibs.client(redis.uri());
        String name = uniqueName("cli-closed");
        assertTrue(client.execute(name, 10, 0, () -> {}));
        client.close();
        client.close(); // twice is fine
        AtomicBoolean ran = new AtomicBoolean();
        List<Executable> calls = List.of(
                () -> client.execute(name, 10, 0, () -> ran.set(true)),
                () -> client.execute(name, Duration.ofSeconds(10), Duration.ZERO, () -> ran.set(true)),
                () -> client.executeWithResult(name, 10, 0, () -> ran.getAndSet(true)),
                () -> client.executeWithResult(name, Duration.ofSeconds(10), Duration.ZERO, () -> ran.getAndSet(true)),
                () -> client.attempt(name, 10, 0, () -> ran.getAndSet(true)),
                () -> client.attempt(name, Duration.ofSeconds(10), Duration.ZERO, () -> ran.getAndSet(true)),
                () -> client.inspect(name));
        for (Executable call : calls) {
            IllegalStateException e = assertThrows(IllegalStateException.class, call);
            assertTrue(e.getMessage().contains("DibsClient") && e.getMessage().contains("closed"), e.getMessage());
        }
        assertFalse(ran.get());
        client.close();
        assertTrue(Dibs.execute(redis.uri(), name, 10, 0, () -> {}), "Dibs itself goes on");
    }

    @Test
    void aCallRunningWhileTheClientClosesFinishesNormally() throws Exception {
        DibsClient client = Dibs.client(redis.uri());
        String name = uniqueName("cli-close-race");
        CountDownLatch inTask = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<DibsResult<String>> running = pool.submit(() -> client.attempt(name, 10, 0, () -> {
                inTask.countDown();
                try {
                    if (!closed.await(10, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("close never happened");
                    }
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return "done";
            }));
            assertTrue(inTask.await(10, TimeUnit.SECONDS));
            client.close();
            closed.countDown();
            DibsResult<String> r = running.get(10, TimeUnit.SECONDS);
            assertEquals("done", r.value());
            assertTrue(r.ownedToTheEnd(), "the release still ran on the closed client's pool: " + r);
            assertFalse(keyExists(lockKey(name)), "the lock was released");
            assertThrows(IllegalStateException.class, () -> client.inspect(name));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aCallThatReachesNativeCodeAfterTheCloseIsAnIllegalStateException() {
        // The window between DibsClient's own check and the native call: another thread closed it.
        long handle = ConnCache.open(redis.uri());
        NativeLib.close(handle);
        IllegalStateException e = assertThrows(
                IllegalStateException.class,
                () -> NativeLib.acquire(handle, "closed-race", null, 10, 0, 1000, false, new Border.Acquired()));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }
}
