package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.sleep;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dibs.demo.KeepAliveHolder;
import dibs.demo.TickRace;
import dibs.testsupport.TestSupport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Keep-alive: a task may outlive atMost and keep the lock; a lock taken meanwhile is reported;
 * a holder that dies stops extending, and its lock lapses within atMost.
 */
@Tag("slow")
@Timeout(120)
class KeepAliveTest extends RedisTestBase {
    private static final long PID = ProcessHandle.current().pid();

    private static boolean exists(String name) throws IOException {
        return redis.command("EXISTS", lockKey(name)).equals("1");
    }

    private static long pttl(String name) throws IOException {
        return Long.parseLong(redis.command("PTTL", lockKey(name)));
    }

    /**
     * The warnings about {@code name} but keep-alive's schedule warning at acquire: these tests
     * use atMost values far below 3 x the default timeouts, which that warning is about.
     */
    private static List<String> endingWarnings(TestSupport.LogCapture log, String name) {
        List<String> out = new ArrayList<>(log.warningsAbout(name));
        out.removeIf(w -> w.contains("with keep-alive, atMost"));
        return out;
    }

    private static DibsOptions keepAlive() {
        return DibsOptions.builder().uri(redis.uri()).keepAlive(true).build();
    }

    @Test
    void aTaskOfThreeTimesAtMostKeepsTheLockThroughout() throws Exception {
        String name = uniqueName("ka-long");
        long atMost = 400;
        AtomicBoolean running = new AtomicBoolean(true);
        CountDownLatch started = new CountDownLatch(1);
        List<String> problems = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger goodChecks = new AtomicInteger();
        AtomicLong lastGoodCheckMs = new AtomicLong();
        AtomicLong acquiredNanos = new AtomicLong();

        // Another thread, as another instance would: it tries the lock and inspects it while the
        // task runs. A bad sight counts only if the task was still running after it was made
        // (the lock is released right after the task ends).
        Thread watcher = new Thread(
                () -> {
                    try {
                        started.await();
                        while (running.get()) {
                            AtomicBoolean rivalRan = new AtomicBoolean();
                            boolean rivalWon = Dibs.execute(
                                    redis.uri(),
                                    name,
                                    Duration.ofMillis(atMost),
                                    Duration.ZERO,
                                    () -> rivalRan.set(true));
                            LockInfo info = Dibs.inspect(redis.uri(), name);
                            long sinceAcquiredMs = (System.nanoTime() - acquiredNanos.get()) / 1_000_000;
                            boolean stillRunning = running.get();
                            if (!stillRunning) {
                                break;
                            }
                            if (rivalWon || rivalRan.get()) {
                                problems.add("a rival won the lock " + sinceAcquiredMs + " ms after it was acquired");
                            } else if (!info.held() || info.pid().orElse(-1) != PID) {
                                problems.add("inspect at " + sinceAcquiredMs + " ms: " + info);
                            } else if (info.remaining().isEmpty()
                                    || info.remaining().get().toMillis() > atMost) {
                                problems.add("remaining at " + sinceAcquiredMs + " ms: " + info);
                            } else {
                                goodChecks.incrementAndGet();
                                lastGoodCheckMs.set(sinceAcquiredMs);
                            }
                            sleep(20);
                        }
                    } catch (Throwable t) {
                        problems.add("watcher failed: " + t);
                    }
                },
                "ka-watcher");
        watcher.start();

        DibsResult<String> r;
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            r = Dibs.attempt(keepAlive(), name, Duration.ofMillis(atMost), Duration.ZERO, () -> {
                acquiredNanos.set(System.nanoTime());
                started.countDown();
                sleep(3 * atMost);
                running.set(false);
                return "done";
            });
            assertEquals(List.of(), endingWarnings(log, name));
        } finally {
            running.set(false);
            started.countDown();
            watcher.join(10_000);
        }
        assertEquals(List.of(), problems);
        assertTrue(goodChecks.get() >= 10, "too few checks while the task ran: " + goodChecks.get());
        assertTrue(
                lastGoodCheckMs.get() > 2 * atMost,
                "the lock was last seen held " + lastGoodCheckMs.get() + " ms after it was acquired");
        assertTrue(r.acquired());
        assertEquals("done", r.value());
        assertTrue(r.ownedToTheEnd(), "keep-alive held the lock to the end: " + r);
        assertTrue(r.elapsed().toMillis() >= 3 * atMost, r.toString());
        assertFalse(exists(name), "atLeast 0: released at the end");
    }

    @Test
    void aScheduleThatCannotHoldIsWarnedAtAcquireOncePerAtMost() {
        // 1 s timeouts: one extension may wait 3 s (read, then connect + read), so an atMost
        // under 9 s leaves keep-alive too little room.
        DibsOptions options = DibsOptions.builder()
                .uri(redis.uri())
                .keepAlive(true)
                .connectTimeout(Duration.ofSeconds(1))
                .readTimeout(Duration.ofSeconds(1))
                .build();
        String name = uniqueName("ka-tight");
        try (DibsClient client = Dibs.client(options);
                TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            List<String> seenByTheTask = new ArrayList<>();
            assertTrue(client.execute(
                    name, Duration.ofSeconds(2), Duration.ZERO, () -> seenByTheTask.addAll(log.warningsAbout(name))));
            assertEquals(1, seenByTheTask.size(), "logged at acquire, before the task: " + log.messages());
            String w = seenByTheTask.get(0);
            assertTrue(w.contains("atMost 2000 ms") && w.contains("3000 ms") && w.contains("at least 9000 ms"), w);

            assertTrue(client.execute(name, Duration.ofSeconds(2), Duration.ZERO, () -> {}));
            assertTrue(client.tryLock(name, Duration.ofSeconds(9), Duration.ZERO)
                    .map(DibsLease::release)
                    .orElse(false));
            assertEquals(1, log.warningsAbout(name).size(), "once per atMost, and none for 9 s: " + log.messages());
            assertTrue(client.tryLock(name, Duration.ofSeconds(3), Duration.ZERO)
                    .map(DibsLease::release)
                    .orElse(false));
            assertEquals(2, log.warningsAbout(name).size(), "a lease of another atMost is warned: " + log.messages());
        }
    }

    @Test
    void keepAliveFromAMapConnAndWithoutIt() throws IOException {
        String name = uniqueName("ka-map");
        long atMost = 450;
        List<Long> ttls = new ArrayList<>();
        DibsResult<Void> kept = Dibs.attempt(
                Map.of("uri", redis.uri(), "keep-alive", true), name, Duration.ofMillis(atMost), Duration.ZERO, () -> {
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3 * atMost);
                    while (System.nanoTime() < end) {
                        try {
                            ttls.add(pttl(name));
                        } catch (IOException e) {
                            throw new RuntimeException(e);
                        }
                        sleep(30);
                    }
                    return null;
                });
        assertTrue(kept.ownedToTheEnd(), kept.toString());
        assertTrue(ttls.size() >= 10, "PTTLs read: " + ttls);
        assertTrue(ttls.stream().allMatch(t -> t > 0 && t <= atMost), "PTTLs during the task: " + ttls);
        assertFalse(exists(name));

        // The control: the same task without keep-alive loses the lock.
        DibsResult<Void> lapsed = Dibs.attempt(
                Map.of("uri", redis.uri(), "keep-alive", false), name, Duration.ofMillis(atMost), Duration.ZERO, () -> {
                    sleep(3 * atMost);
                    return null;
                });
        assertTrue(lapsed.acquired());
        assertFalse(lapsed.ownedToTheEnd(), lapsed.toString());
    }

    @Test
    void aLockTakenWhileTheTaskRunsIsReportedAndLeftAlone() throws IOException {
        String name = uniqueName("ka-lost");
        long atMost = 300;
        List<String> events = Collections.synchronizedList(new ArrayList<>());
        DibsListener listener = new DibsListener() {
            @Override
            public void finished(String lockName, Duration duration) {
                events.add("finished");
            }

            @Override
            public void released(String lockName, Duration heldFor) {
                events.add("released");
            }

            @Override
            public void expired(String lockName, Duration heldFor) {
                events.add("expired");
            }
        };
        DibsOptions options = DibsOptions.builder()
                .uri(redis.uri())
                .keepAlive(true)
                .listener(listener)
                .build();
        try (TestSupport.LogCapture log = new TestSupport.LogCapture()) {
            DibsResult<String> r = Dibs.attempt(options, name, Duration.ofMillis(atMost), Duration.ZERO, () -> {
                try {
                    // Someone else takes the key (as after a failover that lost it, or an operator).
                    assertEquals("OK", redis.command("SET", lockKey(name), "other", "PX", "60000"));
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
                sleep(2 * atMost); // several extension intervals (atMost / 3)
                return "finished anyway";
            });
            assertTrue(r.acquired());
            assertEquals("finished anyway", r.value());
            assertFalse(r.ownedToTheEnd(), r.toString());
            List<String> warnings = endingWarnings(log, name);
            assertEquals(1, warnings.size(), "one warning: " + log.messages());
            assertTrue(warnings.get(0).contains("taken by another holder while the task ran"), warnings.get(0));
        }
        assertEquals(List.of("finished", "expired"), events);
        assertEquals("other", redis.command("GET", lockKey(name)), "the new holder's value is untouched");
        long ttl = pttl(name);
        assertTrue(ttl > 55_000 && ttl <= 60_000, "the new holder's expiry is untouched: PTTL " + ttl);
        redis.command("DEL", lockKey(name));
    }

    @Test
    void theTaskCanSeeThatItsLockWasTaken() throws Exception {
        String name = uniqueName("task-sees-lost");
        DibsOptions options =
                DibsOptions.builder().uri(redis.uri()).keepAlive(true).build();
        AtomicBoolean sawLost = new AtomicBoolean();
        AtomicBoolean lostAtFirst = new AtomicBoolean(true);
        DibsResult<Void> r = Dibs.attempt(options, name, Duration.ofMillis(300), Duration.ZERO, () -> {
            lostAtFirst.set(Dibs.isLockLost());
            try {
                redis.command("SET", lockKey(name), "someone-else", "PX", "60000");
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (System.nanoTime() < deadline && !sawLost.get()) {
                sawLost.set(Dibs.isLockLost());
                sleep(10);
            }
            return null;
        });
        assertFalse(lostAtFirst.get(), "ours when the task started");
        assertTrue(sawLost.get(), "the task saw the loss while it ran");
        assertFalse(r.ownedToTheEnd());
        assertThrows(IllegalStateException.class, Dibs::isLockLost, "outside a task");
        redis.command("DEL", lockKey(name));
    }

    /** A child JVM holding {@code name} (KeepAliveHolder) until killed, its output collected. */
    private static final class Holder implements AutoCloseable {
        final Process process;
        final List<String> output = Collections.synchronizedList(new ArrayList<>());
        private final Thread reader;

        Holder(String name, long atMostMs, boolean keepAlive) throws Exception {
            List<String> cmd = new ArrayList<>();
            cmd.add(TickRace.javaExecutable());
            cmd.addAll(childJvmFlags());
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path"));
            cmd.add(KeepAliveHolder.class.getName());
            cmd.add(redis.uri());
            cmd.add(name);
            cmd.add(Long.toString(atMostMs));
            cmd.add(keepAlive ? "keep-alive" : "plain");
            process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            CountDownLatch holding = new CountDownLatch(1);
            reader = new Thread(
                    () -> {
                        try (BufferedReader in = new BufferedReader(
                                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                            String line;
                            while ((line = in.readLine()) != null) {
                                output.add(line);
                                if (line.startsWith("HOLDING")) {
                                    holding.countDown();
                                }
                            }
                        } catch (IOException e) {
                            output.add("(read failed: " + e + ")");
                        } finally {
                            holding.countDown();
                        }
                    },
                    "holder-reader");
            reader.setDaemon(true);
            reader.start();
            assertTrue(
                    holding.await(60, TimeUnit.SECONDS) && process.isAlive(),
                    "the holder did not print HOLDING:\n" + String.join("\n", output));
        }

        /** SIGKILL: no release, no shutdown hook. */
        void kill() throws InterruptedException {
            process.destroyForcibly();
            assertTrue(process.waitFor(10, TimeUnit.SECONDS), "the holder survived SIGKILL");
        }

        @Override
        public void close() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            reader.join(5000);
            String out = String.join("\n", output);
            assertFalse(
                    out.contains("WARNING in native method") || out.contains("FATAL ERROR in native method"),
                    "JNI check failed in the child JVM:\n" + out);
        }
    }

    /** Milliseconds until the lock {@code name} is gone, polled every 10 ms; fails after {@code limitMs}. */
    private static long msUntilGone(String name, long limitMs) throws IOException {
        long start = System.nanoTime();
        while (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(limitMs)) {
            if (!exists(name)) {
                return (System.nanoTime() - start) / 1_000_000;
            }
            sleep(10);
        }
        return fail("the lock of the killed holder never lapsed; PTTL " + pttl(name));
    }

    @Test
    void aKilledHolderStopsExtendingAndItsLockLapsesWithinAtMost() throws Exception {
        String name = uniqueName("ka-kill");
        long atMost = 1000;
        try (Holder child = new Holder(name, atMost, true)) {
            long heldSince = System.nanoTime();
            String value = redis.command("GET", lockKey(name));
            assertTrue(value.contains(";" + child.process.pid() + ";"), "the child's value: " + value);

            // Keep-alive at work: held for well over atMost, by the child, with the same value.
            int checks = 0;
            while (System.nanoTime() - heldSince < TimeUnit.MILLISECONDS.toNanos(5 * atMost / 2)) {
                long ttl = pttl(name);
                assertTrue(
                        ttl > 0 && ttl <= atMost,
                        "PTTL " + ttl + " after " + (System.nanoTime() - heldSince) / 1_000_000 + " ms of holding");
                assertEquals(value, redis.command("GET", lockKey(name)));
                LockInfo info = Dibs.inspect(redis.uri(), name);
                assertEquals(child.process.pid(), info.pid().orElse(-1), info.toString());
                checks++;
                sleep(50);
            }
            assertTrue(checks >= 10, "checks: " + checks);

            child.kill();
            assertTrue(exists(name), "the lock must outlive its killed holder until it lapses");
            long goneAfterMs = msUntilGone(name, atMost + 5000);
            assertTrue(
                    goneAfterMs < atMost + 700,
                    "the lock lapsed " + goneAfterMs + " ms after the kill; atMost is " + atMost + " ms");
            System.out.println("killed keep-alive holder's lock lapsed " + goneAfterMs + " ms after SIGKILL (atMost "
                    + atMost + " ms)");
        }
    }

    @Test
    void aKilledPlainHolderBlocksTheLockUntilAtMost() throws Exception {
        String name = uniqueName("plain-kill");
        long atMost = 3000;
        try (Holder child = new Holder(name, atMost, false)) {
            long acquiredAt =
                    Dibs.inspect(redis.uri(), name).acquiredAt().orElseThrow().toEpochMilli();
            sleep(500);
            child.kill();
            long killedAt = System.currentTimeMillis();
            long goneAfterMs = msUntilGone(name, atMost + 5000);
            long heldMs = killedAt + goneAfterMs - acquiredAt;
            System.out.println("killed plain holder's lock lapsed " + heldMs + " ms after it was acquired (atMost "
                    + atMost + " ms)");
            assertTrue(
                    heldMs >= atMost - 100 && heldMs < atMost + 700,
                    "held " + heldMs + " ms in all; nothing releases it before atMost (" + atMost + " ms)");
        }
    }

    /** The child JVM runs with the flags this one has: -Xcheck:jni, native access, dibs.*. */
    private static List<String> childJvmFlags() {
        List<String> flags = TickRace.inheritedJvmFlags();
        if (Runtime.version().feature() >= 24 && !flags.contains("--enable-native-access=ALL-UNNAMED")) {
            flags.add("--enable-native-access=ALL-UNNAMED");
        }
        return flags;
    }
}
