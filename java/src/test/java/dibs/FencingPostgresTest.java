package dibs;

import static dibs.testsupport.RedisServer.lockKey;
import static dibs.testsupport.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dibs.demo.TickRace;
import dibs.testsupport.TestSupport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fencing pattern on a real PostgreSQL (issue 18): holder A, a child JVM, takes a lock with
 * atMost 1 s and is paused by SIGSTOP in the middle of its work for 2.5 s, so its lock expires;
 * holder B takes the same lock, gets a greater token and writes with it. When A resumes, it
 * writes as if it still held the lock. With the fence condition ({@code AND fence < token}) the
 * database refuses A's stale write: 0 rows, the row keeps B's body and token. The control, the
 * same statement without the condition, lets A's stale write land over B's: the pause really
 * made a stale holder.
 *
 * <p>PostgreSQL is Debian's ({@code /usr/lib/postgresql/N/bin}, which scripts/ensure-deps.sh
 * installs), started by the test in a temp dir on a free loopback port, as the system user
 * {@code dibs-pg} when the test runs as root (PostgreSQL refuses to run as root): see
 * {@link PostgresServer}.
 */
@Tag("slow")
@Timeout(20) // each test; with the server's start and stop, under 60 s in all
class FencingPostgresTest extends RedisTestBase {
    /** Under qemu (the aarch64 run) a JVM is slow: wider margins around the pause. */
    private static final boolean EMULATED = Boolean.getBoolean("dibs.test.emulated");
    /** A's lock: atMost, no keep-alive, atLeast 0. */
    private static final long AT_MOST_MS = EMULATED ? 1500 : 1000;
    /** How long A "works" after printing its token: the test stops it meanwhile. */
    private static final long A_WORK_MS = EMULATED ? 3000 : 2000;
    /** How long A stays stopped: past its atMost, and past B's write. */
    private static final long PAUSE_MS = EMULATED ? 3500 : 2500;

    private static PostgresServer pg;

    @BeforeAll
    @Timeout(12)
    static void startPostgres() throws Exception {
        pg = PostgresServer.start();
        try (Connection db = pg.connect();
                Statement st = db.createStatement()) {
            st.execute("CREATE TABLE report (id int PRIMARY KEY, body text, fence bigint NOT NULL)");
        }
    }

    @AfterAll
    @Timeout(5)
    static void stopPostgres() throws Exception {
        if (pg != null) {
            pg.close();
        }
    }

    @Test
    void aHolderPausedPastAtMostHasItsStaleWriteRefusedByTheFence() throws Exception {
        Race r = race(true);
        System.out.printf(
                "fenced: A token %d (paused %d ms, its lock gone %d ms into the pause, its work took %d ms), "
                        + "B token %d (B - A = %d us); rows updated: B %d, A %d; row now body=%s fence=%d: %d stale writes accepted%n",
                r.tokenA,
                r.pausedMs,
                r.expiredAfterMs,
                r.workMsA,
                r.tokenB,
                r.tokenB - r.tokenA,
                r.rowsB,
                r.rowsA,
                r.body,
                r.fence,
                r.rowsA);
        System.out.println(r.output());
        assertEquals(1, r.rowsB, "B's write, with the newest token, lands\n" + r.output());
        assertEquals(0, r.rowsA, "0 stale writes accepted: A's write with its older token is refused\n" + r.output());
        assertEquals("B", r.body, r.output());
        assertEquals(r.tokenB, r.fence, "the row holds B's token\n" + r.output());
    }

    @Test
    void withoutTheFenceConditionTheStaleWriteLandsOverTheNewHoldersWrite() throws Exception {
        Race r = race(false);
        System.out.printf(
                "control, unfenced: A token %d (paused %d ms, its lock gone %d ms into the pause, "
                        + "its work took %d ms), B token %d; rows updated: B %d, A %d; row now body=%s fence=%d: %d stale writes accepted%n",
                r.tokenA,
                r.pausedMs,
                r.expiredAfterMs,
                r.workMsA,
                r.tokenB,
                r.rowsB,
                r.rowsA,
                r.body,
                r.fence,
                r.rowsA);
        System.out.println(r.output());
        assertEquals(1, r.rowsB, r.output());
        assertEquals(1, r.rowsA, "the stale holder's write lands\n" + r.output());
        assertEquals("A", r.body, "A's stale write replaced B's newer one\n" + r.output());
        assertEquals(r.tokenA, r.fence, "and rolled the fence back to A's older token\n" + r.output());
    }

    /** The figures of one race: A (child JVM) paused past atMost, B taking over. */
    private static final class Race {
        long tokenA;
        long tokenB;
        int rowsA = -1;
        int rowsB = -1;
        long workMsA;
        long pausedMs;
        long expiredAfterMs;
        String body;
        long fence;
        List<String> outputA = Collections.emptyList();

        String output() {
            return "A's output:\n" + String.join("\n", outputA);
        }
    }

    private static Race race(boolean fenced) throws Exception {
        try (Connection db = pg.connect();
                Statement st = db.createStatement()) {
            st.execute("DELETE FROM report");
            st.execute("INSERT INTO report VALUES (1, 'initial', 0)");
        }
        String name = uniqueName("fenced-report");
        Race r = new Race();
        try (Connection db = pg.connect();
                Child a = Child.start(name, fenced)) {
            r.outputA = a.output;
            String[] token = a.await("TOKEN", 15_000);
            r.tokenA = Long.parseLong(token[1]);
            a.signal("STOP");
            long stoppedAt = System.nanoTime();
            a.awaitState('T', 2000);

            // A's lock expires while A is stopped: nothing released it.
            r.expiredAfterMs = msUntilGone(name, AT_MOST_MS + 2000);

            try (DibsClient client = Dibs.client(local().build())) {
                DibsResult<Integer> b = client.attempt(name, Duration.ofSeconds(10), Duration.ZERO, () -> {
                    try {
                        r.tokenB = Dibs.fencingToken();
                        assertTrue(r.tokenB > r.tokenA, "B's token " + r.tokenB + " after A's " + r.tokenA);
                        r.rowsB = FencedWriter.write(db, fenced, "B", r.tokenB);
                        // A wakes up while B still holds the lock, and writes as if it held it.
                        sleepUntil(stoppedAt + TimeUnit.MILLISECONDS.toNanos(PAUSE_MS));
                        r.pausedMs = (System.nanoTime() - stoppedAt) / 1_000_000;
                        a.signal("CONT");
                        String[] updated = a.await("UPDATED", 10_000);
                        r.workMsA = Long.parseLong(updated[2]);
                        a.awaitExit(10_000);
                        assertTrue(keyExists(lockKey(name)), "A's release left B's lock alone\n" + r.output());
                        return Integer.parseInt(updated[1]);
                    } catch (IOException | InterruptedException e) {
                        throw TestSupport.sneak(e);
                    }
                });
                assertTrue(b.acquired(), "B must win the lock A lost\n" + r.output());
                assertTrue(b.ownedToTheEnd(), "B held its lock to the end\n" + r.output());
                assertEquals(r.tokenB, b.fencingToken());
                r.rowsA = b.value();
            }
            assertEquals(0, a.exitCode(), r.output());
            String done = a.line("DONE");
            assertNotNull(done, r.output());
            assertTrue(done.contains("ownedToTheEnd=false"), "dibs told A it lost its lock\n" + r.output());
            String out = String.join("\n", a.output);
            assertFalse(
                    out.contains("WARNING in native method") || out.contains("FATAL ERROR in native method"),
                    "JNI check failed in the child JVM:\n" + out);

            try (Statement st = db.createStatement();
                    ResultSet rs = st.executeQuery("SELECT body, fence FROM report WHERE id = 1")) {
                assertTrue(rs.next());
                r.body = rs.getString(1);
                r.fence = rs.getLong(2);
            }
        }
        return r;
    }

    /** Milliseconds until the lock {@code name} is gone, polled every 10 ms; fails after {@code limitMs}. */
    private static long msUntilGone(String name, long limitMs) throws IOException {
        long start = System.nanoTime();
        while (keyExists(lockKey(name))) {
            if (System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(limitMs)) {
                fail("A's lock never expired (PTTL " + redis.command("PTTL", lockKey(name)) + ")");
            }
            TestSupport.sleep(10);
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    private static void sleepUntil(long nanoTime) {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            TestSupport.sleep(Math.max(1, left / 1_000_000));
        }
    }

    /** Holder A: a {@link FencedWriter} JVM, its output collected line by line. */
    private static final class Child implements AutoCloseable {
        final Process process;
        final List<String> output = Collections.synchronizedList(new ArrayList<>());
        private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final Thread reader;

        private Child(Process process) {
            this.process = process;
            reader = new Thread(
                    () -> {
                        try (BufferedReader in = new BufferedReader(
                                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                            String line;
                            while ((line = in.readLine()) != null) {
                                output.add(line);
                                lines.add(line);
                            }
                        } catch (IOException e) {
                            output.add("(read failed: " + e + ")");
                        }
                    },
                    "fenced-writer-reader");
            reader.setDaemon(true);
            reader.start();
        }

        static Child start(String name, boolean fenced) throws IOException {
            List<String> cmd = new ArrayList<>();
            cmd.add(TickRace.javaExecutable());
            cmd.addAll(TickRace.inheritedJvmFlags());
            if (Runtime.version().feature() >= 24 && !cmd.contains("--enable-native-access=ALL-UNNAMED")) {
                cmd.add("--enable-native-access=ALL-UNNAMED");
            }
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path"));
            cmd.add(FencedWriter.class.getName());
            cmd.add(redis.uri());
            cmd.add(name);
            cmd.add(Long.toString(AT_MOST_MS));
            cmd.add(pg.jdbcUrl());
            cmd.add(fenced ? "fenced" : "unfenced");
            cmd.add(Long.toString(A_WORK_MS));
            return new Child(new ProcessBuilder(cmd).redirectErrorStream(true).start());
        }

        /** The words of the next line that starts with {@code word}; fails after {@code limitMs}. */
        String[] await(String word, long limitMs) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMs);
            while (true) {
                String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    return fail(
                            "A did not print " + word + " within " + limitMs + " ms:\n" + String.join("\n", output));
                }
                if (line.startsWith(word + " ")) {
                    return line.split(" ");
                }
            }
        }

        /** The first line printed so far that starts with {@code word}, or null. */
        String line(String word) {
            synchronized (output) {
                return output.stream()
                        .filter(l -> l.startsWith(word + " "))
                        .findFirst()
                        .orElse(null);
            }
        }

        void signal(String signal) throws IOException, InterruptedException {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                    .redirectErrorStream(true)
                    .start();
            assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal + " failed");
        }

        /** Waits until the process's state in /proc is {@code state} (T: stopped). */
        void awaitState(char state, long limitMs) throws IOException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMs);
            Path stat = Paths.get("/proc", Long.toString(process.pid()), "stat");
            char now;
            while ((now = procState(stat)) != state) {
                if (System.nanoTime() > deadline) {
                    fail("A's state is " + now + ", not " + state);
                }
                TestSupport.sleep(5);
            }
        }

        private static char procState(Path stat) throws IOException {
            String s = new String(Files.readAllBytes(stat), StandardCharsets.UTF_8);
            return s.charAt(s.lastIndexOf(')') + 2); // "pid (comm) S ..."
        }

        void awaitExit(long limitMs) throws InterruptedException {
            assertTrue(
                    process.waitFor(limitMs, TimeUnit.MILLISECONDS), "A did not exit:\n" + String.join("\n", output));
            reader.join(5000);
        }

        int exitCode() {
            return process.exitValue();
        }

        @Override
        public void close() throws Exception {
            if (process.isAlive()) {
                signal("CONT");
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
            reader.join(5000);
        }
    }
}
