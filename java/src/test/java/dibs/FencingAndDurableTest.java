package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.FaultProxy;
import dibs.testsupport.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fencing tokens and durable acquire from Java (issue 18): every front end hands out a token that
 * only goes up, and a lock the replica never acknowledged is given back, its call not run and
 * told as {@code unconfirmed}, neither skipped nor an error.
 */
@Timeout(60)
class FencingAndDurableTest extends RedisTestBase {
    @Test
    void everyFrontEndGetsATokenGreaterThanTheLastOne() throws Exception {
        String name = uniqueName("fenced");
        EventRecorder events = new EventRecorder();
        try (DibsClient client = Dibs.client(local().listener(events).build())) {
            long last = 0;
            for (int i = 0; i < 50; i++) {
                AtomicLong inside = new AtomicLong();
                DibsResult<String> r = client.attempt(name, Duration.ofSeconds(10), Duration.ZERO, () -> {
                    inside.set(Dibs.fencingToken());
                    return "ran";
                });
                assertTrue(r.acquired());
                assertEquals(inside.get(), r.fencingToken(), "the task sees its result's token");
                assertEquals(r.fencingToken(), events.fencingToken, "the listener hears it too");
                assertTrue(r.fencingToken() > last, r.fencingToken() + " after " + last);
                last = r.fencingToken();

                Optional<DibsLease> lease = client.tryLock(name, Duration.ofSeconds(10), Duration.ZERO);
                long token = lease.orElseThrow().fencingToken();
                assertTrue(token > last, token + " after " + last);
                last = token;
                lease.get().release();
                assertEquals(token, lease.get().fencingToken(), "kept after the release");
            }
            // The microseconds of the server's clock: close to this host's, the same machine.
            long nowMicros = System.currentTimeMillis() * 1000;
            assertTrue(Math.abs(last - nowMicros) < 60_000_000L, last + " vs " + nowMicros);
        }
        assertThrows(IllegalStateException.class, Dibs::fencingToken, "outside a task");
    }

    @Test
    void aLockTheReplicaNeverAcknowledgedIsGivenBackAndItsCallDoesNotRun() throws Exception {
        try (RedisServer master = RedisServer.launch();
                FaultProxy link = FaultProxy.start(master.port());
                RedisServer replica = RedisServer.launch("--replicaof", "127.0.0.1", String.valueOf(link.port()))) {
            awaitReplicas(master, replica);
            String name = uniqueName("unacknowledged");
            EventRecorder events = new EventRecorder();
            DibsOptions options = DibsOptions.builder()
                    .host("127.0.0.1")
                    .port(master.port())
                    .readTimeout(Duration.ofMillis(1000))
                    .listener(events)
                    .build();
            try (DibsClient client = Dibs.client(options)) {
                assertTrue(client.execute(name, Duration.ofSeconds(60), Duration.ZERO, () -> {}), "replicated: runs");
                long waits = master.calls("wait");
                assertEquals(1, waits, "the first call sent its script whole, and one WAIT");
                assertTrue(client.execute(name, Duration.ofSeconds(60), Duration.ZERO, () -> {}));
                assertEquals(1, master.calls("wait") - waits, "one WAIT went with the acquire");

                // The release's DEL is not waited for: let it reach the replica before the cut, or
                // the replica keeps the second call's key and the check below cannot tell.
                awaitCaughtUp(master, replica);
                assertFalse(keyExistsOn(replica, lockKey(name)), "released on the replica too");
                link.halfOpenExisting(); // the replica's requests still reach the master; the stream is lost
                events.events.clear();
                boolean[] ran = {false};
                long started = System.nanoTime();
                boolean result = client.execute(name, Duration.ofSeconds(60), Duration.ZERO, () -> ran[0] = true);
                long waitedMs = (System.nanoTime() - started) / 1_000_000;
                assertFalse(result);
                assertFalse(ran[0], "the task did not run");
                assertEquals(List.of("attempt", "unconfirmed"), events.events, "neither skipped nor an error");
                assertFalse(keyExistsOn(master, lockKey(name)), "given back: nothing held with nothing running");
                // As a result, unconfirmed, never "another instance held it" (found by the attack).
                DibsResult<String> again = client.attempt(name, Duration.ofSeconds(60), Duration.ZERO, () -> "ran");
                assertTrue(again.unconfirmed(), again.toString());
                assertFalse(again.acquired());
                String said = assertThrows(java.util.NoSuchElementException.class, again::value)
                        .getMessage();
                assertTrue(said.contains("not confirmed") && !said.contains("another instance"), said);
                long slack = Boolean.getBoolean("dibs.test.emulated") ? 5000 : 1000; // qemu is slow
                assertTrue(waitedMs >= 450 && waitedMs < 500 + slack, "half the read timeout: " + waitedMs + " ms");
                if (!Boolean.getBoolean("dibs.test.emulated")) {
                    // The method's own check. Under qemu the proxy's emulated thread may forward a
                    // chunk it read before the cut (seen once on aarch64); dibs's side above holds.
                    assertFalse(keyExistsOn(replica, lockKey(name)), "the replica never got it");
                }
            }
            // With durable acquire off, the same lock is taken (and a failover now could lose it).
            try (DibsClient off = Dibs.client(DibsOptions.builder()
                    .host("127.0.0.1")
                    .port(master.port())
                    .durable(DurableAcquire.off())
                    .build())) {
                assertTrue(
                        off.execute(uniqueName("unacknowledged-off"), Duration.ofSeconds(60), Duration.ZERO, () -> {}));
            }
        }
    }

    @Test
    void eachDurableAcquireIsTheConnKeysTextAndRustChecksItsRange() {
        // The typed form is the text form, so that both share one pool and one parser (Rust's).
        assertEquals(
                local().durable("aof:2").build(),
                local().durable(DurableAcquire.aof(2)).build());
        assertEquals(
                local().durable("3").build(),
                local().durable(DurableAcquire.replicas(3)).build());
        assertEquals(
                local().durable("auto").build(),
                local().durable(DurableAcquire.auto()).build());
        assertEquals(DurableAcquire.Mode.AOF, DurableAcquire.aof(2).mode());
        assertEquals(2, DurableAcquire.aof(2).replicas());
        for (DurableAcquire bad : new DurableAcquire[] {DurableAcquire.replicas(17), DurableAcquire.aof(-1)}) {
            DibsArgumentException e = assertThrows(
                    DibsArgumentException.class,
                    () -> local().durable(bad).build().describe(),
                    bad.toString());
            assertEquals("durable", e.argument());
        }
        assertEquals(
                "127.0.0.1:" + redis.port(),
                local().durable(DurableAcquire.replicas(16)).build().describe());
    }

    @Test
    void aBadDurableSettingIsRefusedNamingTheKey() {
        DibsArgumentException e = assertThrows(
                DibsArgumentException.class,
                () -> Dibs.client(local().durable("sometimes").build())
                        .execute("x", Duration.ofSeconds(1), Duration.ZERO, () -> {}));
        assertEquals("durable", e.argument());
    }

    private static boolean keyExistsOn(RedisServer server, String key) throws Exception {
        return server.command("EXISTS", key).equals("1");
    }

    /** Until the replica has applied every byte of the master's stream so far. */
    private static void awaitCaughtUp(RedisServer master, RedisServer replica) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!replica.info("replication", "slave_repl_offset")
                .equals(master.info("replication", "master_repl_offset"))) {
            assertTrue(System.nanoTime() < deadline, "the replica never caught up");
            Thread.sleep(5);
        }
    }

    private static void awaitReplicas(RedisServer master, RedisServer replica) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!(replica.info("replication", "master_link_status").equals("up")
                && master.info("replication", "connected_slaves").equals("1"))) {
            assertTrue(System.nanoTime() < deadline, "the replica never synced");
            Thread.sleep(50);
        }
    }
}
