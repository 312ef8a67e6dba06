package dibs;

import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Catch-up from Java ({@link DibsClient#executeOnce(String, DibsCatchUp, Duration,
 * java.util.function.Consumer)}): a job whose tick t1 ran, then t2..t4 ran nowhere; at t5 three
 * instances fire at once. Each policy runs what it says, each tick at most once across the
 * three, and the history marks the catch-up's runs.
 */
@Timeout(60)
class CatchUpTest extends RedisTestBase {
    private static final int INSTANCES = 3;

    /**
     * Ticks t1..t5, due a second apart from t1's run: their due times are only compared with
     * when the history recorded runs (t2..t4 must come after t1's run to be missed ones).
     */
    private static Map<Instant, String> ticks(Instant t1) {
        Map<Instant, String> ticks = new TreeMap<>();
        for (int i = 1; i <= 5; i++) {
            ticks.put(t1.plusSeconds(i - 1), "t" + i);
        }
        return ticks;
    }

    /** t1 runs the ordinary way; then 3 instances fire t5 together with this policy. */
    private List<String> runsAfterAGap(String job, DibsCatchUp.Policy policy) throws Exception {
        List<String> ran = Collections.synchronizedList(new ArrayList<>());
        List<DibsClient> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(INSTANCES);
        try {
            for (int i = 0; i < INSTANCES; i++) {
                clients.add(Dibs.client(local().instanceId("pod-" + i).build()));
            }
            Instant t1 = Instant.now();
            assertTrue(clients.get(0).executeOnce(job, "t1", Duration.ofSeconds(30), () -> ran.add("t1")));
            Map<Instant, String> ticks = ticks(t1);
            CyclicBarrier together = new CyclicBarrier(INSTANCES);
            List<Future<List<String>>> each = new ArrayList<>();
            for (DibsClient client : clients) {
                each.add(pool.submit(() -> {
                    together.await();
                    return client.executeOnce(job, DibsCatchUp.of(policy, ticks), Duration.ofSeconds(30), ran::add);
                }));
            }
            List<String> told = new ArrayList<>();
            for (Future<List<String>> f : each) {
                List<String> mine = f.get();
                assertEquals(
                        mine.stream().sorted().collect(Collectors.toList()), mine, "oldest first on each instance");
                told.addAll(mine);
            }
            Collections.sort(told);
            List<String> afterT1 =
                    ran.stream().filter(t -> !t.equals("t1")).sorted().collect(Collectors.toList());
            assertEquals(afterT1, told, "each instance returns the ticks it ran");
            return afterT1;
        } finally {
            pool.shutdownNow();
            clients.forEach(DibsClient::close);
        }
    }

    @Test
    void latestRunsTheNewestMissedTickOnceThenTheTickDueNow() throws Exception {
        String job = uniqueName("catch-latest");
        assertEquals(List.of("t4", "t5"), runsAfterAGap(job, DibsCatchUp.Policy.LATEST));
        try (DibsClient client = Dibs.client(local().build())) {
            List<DibsRun> runs = client.history(job, 10);
            Map<String, Boolean> catchUp = runs.stream().collect(Collectors.toMap(DibsRun::lockName, DibsRun::catchUp));
            assertEquals(Map.of(job + "@t1", false, job + "@t4", true, job + "@t5", false), catchUp);
            assertTrue(runs.stream()
                    .filter(DibsRun::catchUp)
                    .findFirst()
                    .orElseThrow()
                    .toString()
                    .contains("catch-up"));
        }
    }

    @Test
    void allRunsEveryMissedTickOnceOldestFirst() throws Exception {
        String job = uniqueName("catch-all");
        assertEquals(List.of("t2", "t3", "t4", "t5"), runsAfterAGap(job, DibsCatchUp.Policy.ALL));
        try (DibsClient client = Dibs.client(local().build())) {
            // Across instances, one may run t5 while another still runs t4: the set, not the order.
            List<String> runs = new ArrayList<>();
            for (DibsRun run : client.history(job, 10)) {
                runs.add(run.lockName().substring(job.length() + 1) + (run.catchUp() ? "*" : ""));
            }
            Collections.sort(runs);
            assertEquals(List.of("t1", "t2*", "t3*", "t4*", "t5"), runs);
        }
    }

    /**
     * Issue 44's harness, finding 6: with {@code all}, a missed tick older than one that ran still
     * runs. t1 and t3 ran, t2 and t4 ran nowhere (t2's acquire given back after a failover, as
     * the harness saw, or its instance gone). Before, catch-up looked only at the ticks after the
     * newest that ran: t2 never ran, and nothing said so.
     */
    @Test
    void allRunsAMissedTickOlderThanOneThatRan() {
        String job = uniqueName("catch-gap");
        List<String> ran = new ArrayList<>();
        try (DibsClient client = Dibs.client(local().build())) {
            Instant t1 = Instant.now();
            assertTrue(client.executeOnce(job, "t1", Duration.ofSeconds(30), () -> ran.add("t1")));
            assertTrue(client.executeOnce(job, "t3", Duration.ofSeconds(30), () -> ran.add("t3")));
            List<String> told = client.executeOnce(
                    job, DibsCatchUp.of(DibsCatchUp.Policy.ALL, ticks(t1)), Duration.ofSeconds(30), ran::add);
            assertEquals(List.of("t2", "t4", "t5"), told);
            assertEquals(List.of("t1", "t3", "t2", "t4", "t5"), ran);
            // Once every tick of the window ran, a call again runs none.
            assertEquals(
                    List.of(),
                    client.executeOnce(
                            job, DibsCatchUp.of(DibsCatchUp.Policy.ALL, ticks(t1)), Duration.ofSeconds(30), ran::add));
        }
    }

    @Test
    void skipRunsOnlyTheTickDueNow() throws Exception {
        assertEquals(List.of("t5"), runsAfterAGap(uniqueName("catch-skip"), DibsCatchUp.Policy.SKIP));
    }

    /**
     * An earlier tick that cannot be looked at (here the server refuses its key to this user, a
     * real NOPERM) does not stop the tick due now: it runs, and the look's exception is thrown
     * after it. Before, the exception left the tick due now unrun.
     */
    @Test
    void anEarlierTickThatCannotBeLookedAtStopsNotTheTickDueNow() throws Exception {
        String job = uniqueName("catch-look");
        redis.command("ACL", "SETUSER", job, "on", ">look-pw", "+@all", "~dibs:" + job + "@t5", "~dibs:?{history}*");
        List<String> ran = new ArrayList<>();
        try (DibsClient admin = Dibs.client(local().build());
                DibsClient client =
                        Dibs.client(local().username(job).password("look-pw").build())) {
            Instant t1 = Instant.now();
            assertTrue(admin.executeOnce(job, "t1", Duration.ofSeconds(30), () -> ran.add("t1")));
            DibsPermissionException thrown = assertThrows(
                    DibsPermissionException.class,
                    () -> client.executeOnce(job, DibsCatchUp.all(ticks(t1)), Duration.ofSeconds(30), ran::add));
            assertTrue(thrown.getMessage().contains("t4"), thrown.getMessage()); // the newest earlier tick
            assertEquals(List.of("t1", "t5"), ran, "the tick due now ran; t2..t4 could not be proven missed");
            assertEquals(
                    "t5",
                    admin.history(job, 1).get(0).lockName().substring(job.length() + 1),
                    "the tick due now's run is recorded");
        } finally {
            redis.command("ACL", "DELUSER", job);
        }
    }

    @Test
    void aCatchUpTaskThatThrowsStopsNoTickAfterIt() {
        String job = uniqueName("catch-throws");
        RuntimeException boom = new RuntimeException("boom");
        List<String> ran = new ArrayList<>();
        try (DibsClient client = Dibs.client(local().build())) {
            Instant t1 = Instant.now();
            assertTrue(client.executeOnce(job, "t1", Duration.ofSeconds(30), () -> ran.add("t1")));
            RuntimeException thrown = assertThrows(
                    RuntimeException.class,
                    () -> client.executeOnce(job, DibsCatchUp.all(ticks(t1)), Duration.ofSeconds(30), tick -> {
                        ran.add(tick);
                        if (tick.equals("t2")) {
                            throw boom;
                        }
                    }));
            assertSame(boom, thrown);
            assertEquals(List.of("t1", "t2", "t3", "t4", "t5"), ran);
            // Every tick ran, the one that threw too: a second fire runs nothing.
            assertEquals(
                    List.of(), client.executeOnce(job, DibsCatchUp.all(ticks(t1)), Duration.ofSeconds(30), ran::add));
        }
    }

    @Test
    void aNewJobHasNoMissedTicks() {
        List<String> ran = new ArrayList<>();
        try (DibsClient client = Dibs.client(local().build())) {
            assertEquals(
                    List.of("t5"),
                    client.executeOnce(
                            uniqueName("catch-new"),
                            DibsCatchUp.all(ticks(Instant.now())),
                            Duration.ofSeconds(30),
                            ran::add));
        }
        assertEquals(List.of("t5"), ran);
    }

    @Test
    void whatCatchUpCannotProveIsRefusedBeforeAnyRun() {
        try (DibsClient off = Dibs.client(local().history(false).build())) {
            DibsArgumentException e = assertThrows(
                    DibsArgumentException.class,
                    () -> off.executeOnce(
                            "job", DibsCatchUp.latest(ticks(Instant.now())), Duration.ofSeconds(30), t -> {}));
            assertEquals("catchUp", e.argument());
            assertTrue(e.getMessage().contains("history"), e.getMessage());
        }
        DibsArgumentException empty = assertThrows(DibsArgumentException.class, () -> DibsCatchUp.latest(Map.of()));
        assertEquals("ticks", empty.argument());
    }
}
