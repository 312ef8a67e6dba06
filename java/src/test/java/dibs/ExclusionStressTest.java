package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dibs.demo.TickRace;
import dibs.stress.ExclusionWorker;
import dibs.testsupport.RedisServer;
import dibs.testsupport.TestSupport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Mutual exclusion under load, across processes and languages: 4 JVMs of 8 threads each
 * ({@link ExclusionWorker}) and one Rust process of 4 threads ({@code examples/exclusion_worker.rs})
 * hammer 3 lock names on one redis-server, 192,000 attempts in all (at least 20,000 are
 * required), with atLeast 0 so that every release frees the lock at once and the next caller
 * competes for it. The quotas are sized so that the JVMs and the Rust process finish at about
 * the same time (a few seconds on a 2-core VM), and so that the run has thousands of wins, each
 * a hand-over of a lock that the detector checks.
 *
 * <p>The task of every winner is an overlap detector that works across processes: it creates
 * {@code <dir>/<lock>.held} exclusively, sleeps 300 µs, and deletes it. A create that finds the
 * file there means two holders of the same lock were inside their task at once. The test
 * asserts that this never happened, that no call failed, and that every process won at least
 * once; it prints a table of the counts and writes the totals to
 * {@code target/reliability/exclusion.txt}.
 *
 * <p>The Rust worker is not built here: {@code cargo build --release --examples} must have made
 * {@code target/release/examples/exclusion_worker} first (the Maven and Gradle builds do).
 */
@Tag("slow")
@Tag("jvm")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ExclusionStressTest {
    static final List<String> NAMES = List.of("exclusion-a", "exclusion-b", "exclusion-c");
    static final int JVMS = 4;
    static final int JVM_THREADS = 8;
    static final int JVM_ATTEMPTS_PER_THREAD = 5_000;
    static final int RUST_THREADS = 4;
    static final int RUST_ATTEMPTS_PER_THREAD = 8_000;
    /** The floor the issue asks for; the quotas above make 192,000. */
    static final long MIN_ATTEMPTS = 20_000;
    /** From start to READY (JVM start-up, native library, first connection), for all at once. */
    static final long READY_TIMEOUT_SEC = 60;
    /** From go to the last exit. */
    static final long RUN_TIMEOUT_SEC = 100;

    static final List<String> COUNTS = List.of("attempts", "wins", "skips", "overlaps", "errors");

    @Test
    void fourJvmsAndARustProcessNeverHoldTheSameLockAtOnce() throws Exception {
        Path basedir = TestSupport.repositoryRoot();
        Path rustWorker = basedir.resolve(Paths.get(
                "target",
                "release",
                System.getProperty("os.name").startsWith("Windows") ? "exclusion_worker.exe" : "exclusion_worker"));
        if (!Files.isRegularFile(rustWorker) || !Files.isExecutable(rustWorker)) {
            fail("the Rust worker " + rustWorker + " is missing: run `cargo build --release -p dibs-test-tools`"
                    + " in " + basedir + " before the Java tests (the Maven and Gradle builds do)");
        }
        Path source = basedir.resolve(Paths.get("crates", "dibs-test-tools", "src", "bin", "exclusion_worker.rs"));
        if (Files.exists(source)
                && Files.getLastModifiedTime(source).compareTo(Files.getLastModifiedTime(rustWorker)) > 0) {
            System.out.println("NOTE: " + rustWorker + " is older than " + source
                    + "; run `cargo build --release -p dibs-test-tools` to test the current source");
        }

        Path dir = Files.createTempDirectory("dibs-exclusion-");
        List<Worker> workers = new ArrayList<>();
        try (RedisServer redis = RedisServer.launch()) {
            String names = String.join(",", NAMES);
            List<String> java = new ArrayList<>();
            java.add(TickRace.javaExecutable());
            java.addAll(childJvmFlags());
            java.add("-cp");
            java.add(System.getProperty("java.class.path"));
            java.add(ExclusionWorker.class.getName());
            List<String> workerArgs = List.of(redis.uri(), dir.toString(), names);
            for (int i = 1; i <= JVMS; i++) {
                List<String> cmd = new ArrayList<>(java);
                cmd.addAll(workerArgs);
                cmd.add(Integer.toString(JVM_THREADS));
                cmd.add(Integer.toString(JVM_ATTEMPTS_PER_THREAD));
                workers.add(new Worker("jvm-" + i, "java", JVM_THREADS, JVM_ATTEMPTS_PER_THREAD, cmd));
            }
            List<String> cmd = new ArrayList<>();
            cmd.add(rustWorker.toString());
            cmd.addAll(workerArgs);
            cmd.add(Integer.toString(RUST_THREADS));
            cmd.add(Integer.toString(RUST_ATTEMPTS_PER_THREAD));
            workers.add(new Worker("rust-1", "rust", RUST_THREADS, RUST_ATTEMPTS_PER_THREAD, cmd));

            // Start everyone, wait until all are ready, then open the start barrier.
            long launched = System.nanoTime();
            for (Worker w : workers) {
                w.start();
            }
            long readyDeadline = launched + TimeUnit.SECONDS.toNanos(READY_TIMEOUT_SEC);
            for (Worker w : workers) {
                if (!w.ready.await(Math.max(0, readyDeadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    fail(w.id + " did not get READY within " + READY_TIMEOUT_SEC + " s:\n" + output(workers));
                }
                if (!w.isReady) {
                    fail(w.id + " exited before READY:\n" + output(workers));
                }
            }
            long goNanos = System.nanoTime();
            long goMs = System.currentTimeMillis();
            Files.createFile(dir.resolve("go"));

            long runDeadline = goNanos + TimeUnit.SECONDS.toNanos(RUN_TIMEOUT_SEC);
            for (Worker w : workers) {
                if (!w.process.waitFor(Math.max(0, runDeadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    fail(w.id + " did not finish within " + RUN_TIMEOUT_SEC + " s of go:\n" + output(workers));
                }
                w.reader.join(5_000);
            }
            long runMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - goNanos);
            long startupMs = TimeUnit.NANOSECONDS.toMillis(goNanos - launched);

            for (Worker w : workers) {
                if (w.result == null) {
                    fail(w.id + " printed no RESULT line (exit " + w.process.exitValue() + "):\n" + output(workers));
                }
            }
            Map<String, Long> total = new LinkedHashMap<>();
            for (String key : COUNTS) {
                total.put(key, workers.stream().mapToLong(w -> w.count(key)).sum());
            }
            String table = table(workers, total, goMs, startupMs, runMs);
            System.out.println(table);
            // The children's own output too, where scripts/check-jni-warnings.sh looks for JNI warnings.
            System.out.print(output(workers));
            writeSummary(basedir, total);

            List<String> held;
            try (Stream<Path> files = Files.list(dir)) {
                held = files.map(p -> p.getFileName().toString())
                        .filter(n -> n.endsWith(".held"))
                        .collect(Collectors.toList());
            }
            String out = output(workers);
            assertEquals(0, total.get("errors"), "calls failed:\n" + table + "\n" + out);
            assertEquals(0, total.get("overlaps"), "two holders of one lock ran at once:\n" + table);
            assertTrue(total.get("attempts") >= MIN_ATTEMPTS, "fewer than " + MIN_ATTEMPTS + " attempts:\n" + table);
            for (Worker w : workers) {
                assertEquals(
                        (long) w.threads * w.perThread,
                        w.count("attempts"),
                        w.id + " did not make its quota:\n" + table);
                assertTrue(w.count("wins") >= 1, w.id + " never won, so it never competed:\n" + table);
                assertEquals(
                        w.count("attempts"),
                        w.count("wins") + w.count("skips"),
                        w.id + ": wins + skips != attempts\n" + table);
                assertEquals(0, w.process.exitValue(), w.id + " exited with " + w.process.exitValue() + ":\n" + out);
            }
            assertEquals(List.of(), held, "a task left its .held file behind");
            for (String name : NAMES) {
                assertEquals(
                        "0",
                        redis.command("EXISTS", RedisServer.lockKey(name)),
                        "with atLeast 0 every release deletes the key, but " + name + " is still held");
            }
            assertFalse(
                    out.contains("WARNING in native method") || out.contains("FATAL ERROR in native method"),
                    "JNI check failed in a child JVM:\n" + out);
        } finally {
            for (Worker w : workers) {
                if (w.process != null) {
                    w.process.destroyForcibly();
                }
            }
            deleteTree(dir);
        }
    }

    /** The child JVMs run with the flags this one has: -Xcheck:jni, native access, dibs.*. */
    private static List<String> childJvmFlags() {
        List<String> flags = TickRace.inheritedJvmFlags();
        if (Runtime.version().feature() >= 24 && !flags.contains("--enable-native-access=ALL-UNNAMED")) {
            flags.add("--enable-native-access=ALL-UNNAMED");
        }
        return flags;
    }

    /** One worker process, its output, and its RESULT once it printed one. */
    private static final class Worker {
        final String id;
        final String lang;
        final int threads;
        final int perThread;
        final List<String> command;
        final List<String> lines = Collections.synchronizedList(new ArrayList<>());
        /** Counted down on READY, or when the output ends without it. */
        final CountDownLatch ready = new CountDownLatch(1);

        volatile boolean isReady;
        volatile Map<String, Long> result;
        Process process;
        Thread reader;

        Worker(String id, String lang, int threads, int perThread, List<String> command) {
            this.id = id;
            this.lang = lang;
            this.threads = threads;
            this.perThread = perThread;
            this.command = command;
        }

        void start() throws IOException {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
            reader = new Thread(this::read, "exclusion-reader-" + id);
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try (BufferedReader in =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    lines.add(line);
                    if (line.equals("READY")) {
                        isReady = true;
                        ready.countDown();
                    } else if (line.startsWith("RESULT ")) {
                        result = parse(line);
                    }
                }
            } catch (IOException e) {
                lines.add("(read failed: " + e + ")");
            } finally {
                ready.countDown();
            }
        }

        long count(String key) {
            Long v = result.get(key);
            if (v == null) {
                throw new AssertionError(id + ": no " + key + " in its RESULT line " + result);
            }
            return v;
        }

        private static Map<String, Long> parse(String line) {
            Map<String, Long> values = new LinkedHashMap<>();
            for (String field : line.substring("RESULT ".length()).trim().split(" +")) {
                int eq = field.indexOf('=');
                values.put(field.substring(0, eq), Long.parseLong(field.substring(eq + 1)));
            }
            return values;
        }
    }

    private static String table(List<Worker> workers, Map<String, Long> total, long goMs, long startupMs, long runMs) {
        String format = "%-8s %-5s %7s %9s %7s %7s %9s %7s   %s%n";
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                format,
                "process",
                "lang",
                "threads",
                "attempts",
                "wins",
                "skips",
                "overlaps",
                "errors",
                "ran (ms after go)"));
        for (Worker w : workers) {
            sb.append(String.format(
                    format,
                    w.id,
                    w.lang,
                    w.threads,
                    w.count("attempts"),
                    w.count("wins"),
                    w.count("skips"),
                    w.count("overlaps"),
                    w.count("errors"),
                    (w.count("startMs") - goMs) + " .. " + (w.count("endMs") - goMs)));
        }
        sb.append(String.format(
                format,
                "total",
                "",
                workers.stream().mapToInt(w -> w.threads).sum(),
                total.get("attempts"),
                total.get("wins"),
                total.get("skips"),
                total.get("overlaps"),
                total.get("errors"),
                ""));
        sb.append(String.format(
                "lock names %s; start-up (launch to all READY) %d ms; run (go to last exit) %d ms",
                NAMES, startupMs, runMs));
        return sb.toString();
    }

    /** For the reliability summary: target/reliability/exclusion.txt, one key=value a line. */
    private static void writeSummary(Path basedir, Map<String, Long> total) throws IOException {
        Path out = basedir.resolve(Paths.get("target", "reliability", "exclusion.txt"));
        Files.createDirectories(out.getParent());
        List<String> lines = new ArrayList<>();
        for (String key : Arrays.asList("attempts", "wins", "skips", "overlaps")) {
            lines.add(key + "=" + total.get(key));
        }
        Files.write(out, lines, StandardCharsets.UTF_8);
    }

    private static String output(List<Worker> workers) {
        StringBuilder sb = new StringBuilder();
        for (Worker w : workers) {
            synchronized (w.lines) {
                for (String line : w.lines) {
                    sb.append(w.id).append(": ").append(line).append('\n');
                }
            }
        }
        return sb.toString();
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
                Files.deleteIfExists(p);
            }
        }
    }
}
