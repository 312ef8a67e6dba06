package dibs;

import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The run history from Java: what {@link DibsClient#history} reads after runs, a task that threw,
 * a skip and a forced release; {@link DibsClient#locks}; {@link Dibs#jobOf}.
 */
@Timeout(60)
class HistoryTest extends RedisTestBase {
    @Test
    void eachCallIsRecordedWithItsInstanceAndHowItsTaskEnded() {
        String job = uniqueName("hist");
        try (DibsClient a = Dibs.client(local().instanceId("pod-a").build());
                DibsClient b = Dibs.client(local().build())) {
            assertTrue(a.execute(job + "-2026-12-01", 10, 0, () -> {}));
            RuntimeException boom = new RuntimeException("boom");
            RuntimeException thrown = assertThrows(
                    RuntimeException.class,
                    () -> b.execute(job + "-2026-12-02", 10, 0, () -> {
                        // A skip meanwhile records nothing.
                        assertFalse(a.execute(job + "-2026-12-02", 10, 0, () -> {}));
                        throw boom;
                    }));
            assertSame(boom, thrown, "the task's own exception");

            List<DibsRun> runs = a.history(job, 10);
            assertEquals(2, runs.size(), runs.toString());
            DibsRun failed = runs.get(0);
            DibsRun ok = runs.get(1);
            assertEquals(job + "-2026-12-01", ok.lockName());
            assertTrue(ok.succeeded());
            assertTrue(ok.ownedToTheEnd());
            assertEquals("released", ok.ended());
            assertEquals(Optional.of("pod-a"), ok.instanceId());
            assertEquals(ProcessHandle.current().pid(), ok.pid());
            assertTrue(ok.fencingToken() > 0);
            assertFalse(ok.startedAt().isAfter(ok.recordedAt().plusSeconds(1)));
            assertFalse(failed.succeeded(), "the task threw");
            assertEquals(Optional.empty(), failed.instanceId());
            assertTrue(failed.toString().contains("task failed"), failed.toString());

            DibsListing<DibsJob> jobs = a.jobs(10);
            assertTrue(jobs.complete(), jobs.toString());
            DibsJob found =
                    jobs.stream().filter(j -> j.name().equals(job)).findFirst().orElseThrow();
            assertEquals(failed.recordedAt(), found.lastRecordedAt());
            DibsHistory history = a.history(job, 10);
            assertEquals(java.util.Optional.of(job), history.job(), "it names a job");
            DibsHistory ofLock = a.history(job + "-2026-12-02", 10);
            assertEquals(java.util.Optional.of(job), ofLock.job(), "a lock of that job");
            assertEquals(1, ofLock.size(), ofLock.toString());
            assertFalse(ofLock.get(0).succeeded());
        }
    }

    /** Before, the run of executeOnce("nightly-report", tick) was filed under job "nightly". */
    @Test
    void aTicksRunIsRecordedUnderTheJobItsCallerNamed() {
        String job = uniqueName("nightly-report");
        try (DibsClient client = Dibs.client(local().build())) {
            assertTrue(client.executeOnce(job, "2026-12-02T02:00", java.time.Duration.ofSeconds(10), () -> {}));
            assertTrue(client.executeOnce(job, "w49", java.time.Duration.ofSeconds(10), () -> {}));
            List<DibsRun> runs = client.history(job, 10);
            assertEquals(2, runs.size(), runs.toString());
            assertEquals(job + "@w49", runs.get(0).lockName());
            assertEquals(job + "@2026-12-02T02:00", runs.get(1).lockName());
            assertEquals(job, Dibs.jobOf(job), "the listeners' name is the job");
            DibsArgumentException e = assertThrows(
                    DibsArgumentException.class,
                    () -> client.executeOnce(job + "-2026-12-02", "x", java.time.Duration.ofSeconds(1), () -> {}));
            assertEquals("lockName", e.argument());
        }
    }

    @Test
    void aForcedReleaseTakesTheTokenThatLocksShowsAndIsRecorded() throws Exception {
        String name = uniqueName("forced");
        try (DibsClient client = Dibs.client(local().build())) {
            DibsLease lease = client.tryLock(name, java.time.Duration.ofMinutes(1), java.time.Duration.ZERO)
                    .orElseThrow();
            List<HeldLock> held = client.locks(name, 10);
            assertEquals(1, held.size(), held.toString());
            HeldLock lock = held.get(0);
            assertEquals(name, lock.name());
            String token = lock.token().orElseThrow();
            assertFalse(lock.toString().contains(token), "toString never shows the token");
            assertTrue(lock.remaining().orElseThrow().toSeconds() > 50);
            assertEquals(Optional.of(token), client.heldLock(name).orElseThrow().token());

            assertTrue(client.forceRelease(name, token, "oncall@test"));
            assertFalse(client.forceRelease(name, token, "oncall@test"), "free now");
            assertEquals(Optional.empty(), client.heldLock(name));
            assertFalse(lease.release(), "the holder finds it gone");

            List<DibsRun> runs = client.history(Dibs.jobOf(name), 10);
            assertEquals(2, runs.size(), runs.toString());
            assertEquals("no-longer-ours", runs.get(0).ended());
            assertEquals("forced", runs.get(1).ended());
            assertEquals(Optional.of("oncall@test"), runs.get(1).forcedBy());
            DibsArgumentException bad =
                    assertThrows(DibsArgumentException.class, () -> client.forceRelease(name, "nope", "x"));
            assertEquals("token", bad.argument());
        }
    }

    /**
     * Issue 30 (5): a value under the prefix that dibs did not write is a lock with no holder;
     * before, a token of another form before a two-byte character made the native code panic,
     * and the DibsException quoted the whole value.
     */
    @Test
    void aForeignValueUnderThePrefixIsALockDibsDidNotWrite() throws Exception {
        String name = uniqueName("foreign");
        redis.command("SET", "dibs:" + name, "0123456789abcdef0123456789abcdef;hhé;1;2");
        try (DibsClient client = Dibs.client(local().build())) {
            LockInfo info = client.inspect(name);
            assertTrue(info.held());
            assertEquals(Optional.empty(), info.host());
            DibsListing<HeldLock> locks = client.locks(name, 10);
            assertEquals(1, locks.size(), locks.toString());
            assertEquals(Optional.empty(), locks.get(0).token());
            assertEquals(Optional.empty(), client.heldLock(name).orElseThrow().host());
        }
    }

    @Test
    void theHistoryCanBeTurnedOffAndTheLimitIsChecked() throws Exception {
        String name = uniqueName("quiet");
        try (DibsClient client = Dibs.client(local().history(false).build())) {
            assertTrue(client.execute(name, 10, 0, () -> {}));
            assertEquals(List.of(), client.history(name, 10));
            DibsArgumentException e = assertThrows(DibsArgumentException.class, () -> client.history(name, 0));
            assertEquals("limit", e.argument());
        }
    }

    @Test
    void jobOfCutsOnlyATickTheNameSurelyEndsIn() {
        assertEquals("report", Dibs.jobOf("report-2026-12-01"));
        assertEquals("tick", Dibs.jobOf("tick-1764547200"));
        assertEquals("nightly-report", Dibs.jobOf("nightly-report@2026-12-02T02:00"));
        assertEquals("nightly-report", Dibs.jobOf("nightly-report"));
        assertEquals("backup-db1", Dibs.jobOf("backup-db1"));
        assertEquals("shard-7", Dibs.jobOf("shard-7"));
        assertEquals("2026-12-01", Dibs.jobOf("2026-12-01"));
    }
}
