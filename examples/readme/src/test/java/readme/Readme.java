package readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.Dibs;
import dibs.testsupport.DibsCli;
import dibs.DibsHistory;
import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.net.InetAddress;

/**
 * What the README's snippet tests share: the server their URIs name, {@code redis:6379}, and
 * the checks of what a user watches. The tests run in a namespace of their own
 * (scripts/namespace-jdk/bin/java), where {@code redis} is 127.0.0.1 and port 6379 is free.
 */
public final class Readme {
    /** The server of the README's snippets. */
    public static final String URI = "redis://redis:6379";

    private Readme() {}

    /**
     * A redis-server on {@code redis:6379}.
     *
     * @param args more redis-server arguments
     * @return the server, to close
     * @throws IOException if it cannot start, or the test runs outside its namespace
     */
    public static RedisServer start(String... args) throws IOException {
        InetAddress redis = InetAddress.getByName("redis");
        if (!redis.isLoopbackAddress()) {
            throw new IOException("the README's snippets run where `redis` is 127.0.0.1: through the tests' "
                    + "<jvm>, scripts/namespace-jdk/bin/java (mvn -pl examples/readme -am verify, as root)");
        }
        return RedisServer.launchOnPort(6379, args);
    }

    /**
     * Writes the history entry that a successful release at {@code at} would have written, in the
     * run history's format (see src/history.rs): a run in the past cannot be made through dibs,
     * whose entries take the server's clock, and catch-up counts only the ticks due after a
     * job's first recorded run.
     *
     * @param redis the server
     * @param job the job
     * @param lockName the run's lock (its tick included)
     * @param at when it was acquired and released
     * @throws IOException if the server cannot be reached
     */
    public static void recordRunAt(RedisServer redis, String job, String lockName, java.time.Instant at)
            throws IOException {
        long ms = at.toEpochMilli();
        redis.command(
                "XADD",
                "dibs:\u001f{history}:" + job,
                ms + "-0",
                "run",
                "released;ok;5;3600000;1;" + ms + ";1;gone-host;;;" + lockName);
    }

    /**
     * {@code dibs check NAME --within 1h}, as an operator runs it.
     *
     * @param name a job or a lock
     * @return its exit code and output
     * @throws Exception if it cannot run
     */
    public static DibsCli check(String name) throws Exception {
        return check(name, URI);
    }

    /**
     * {@code dibs check NAME --within 1h --redis URI}.
     *
     * @param name a job or a lock
     * @param uri where Redis is (with a password, say)
     * @return its exit code and output
     * @throws Exception if it cannot run
     */
    public static DibsCli check(String name, String uri) throws Exception {
        return DibsCli.run(uri, "check", name, "--within", "1h");
    }

    /**
     * Asserts that {@code job} has exactly the runs {@code locks} (newest first), recorded under
     * it, each a success ours to the end, and that {@code dibs check} says it ran.
     *
     * @param job the job
     * @param locks its runs' lock names, newest first
     * @throws Exception if the CLI cannot run
     */
    public static void assertRecorded(String job, String... locks) throws Exception {
        DibsHistory history = recorded(job, locks);
        assertTrue(history.stream().allMatch(r -> r.succeeded() && r.ownedToTheEnd()), history.toString());
        DibsCli check = check(job);
        assertEquals(0, check.exitCode(), check.toString());
        assertTrue(check.output().startsWith("ok: job '" + job + "' ran "), check.toString());
    }

    /**
     * Asserts that {@code job} has exactly the runs {@code locks} (newest first), each ours to
     * the end with its task's outcome unknown (a caller that did not say how it ended, as a
     * bare ShedLock provider), and that {@code dibs check} says it cannot tell (3).
     *
     * @param job the job
     * @param locks its runs' lock names, newest first
     * @throws Exception if the CLI cannot run
     */
    public static void assertRecordedUnseen(String job, String... locks) throws Exception {
        DibsHistory history = recorded(job, locks);
        assertTrue(
                history.stream().allMatch(r -> !r.succeeded() && !r.failed() && r.ownedToTheEnd()),
                history.toString());
        DibsCli check = check(job);
        assertEquals(3, check.exitCode(), check.toString());
        assertTrue(check.output().contains("not told to dibs"), check.toString());
    }

    /** The history of {@code job} once it holds the ends of the runs {@code locks}, newest first. */
    private static DibsHistory recorded(String job, String... locks) throws Exception {
        // A task's end comes before its release records it (a tick's run is recorded from its
        // start, as running): wait for the record of its end (10 s at most).
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        DibsHistory history = Dibs.history(URI, job, 10);
        while ((history.size() < locks.length
                        || history.stream().anyMatch(r -> r.ended().equals("running")))
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
            history = Dibs.history(URI, job, 10);
        }
        assertEquals(java.util.Optional.of(job), history.job(), history.toString());
        assertEquals(java.util.List.of(locks), history.stream().map(r -> r.lockName()).toList(), history.toString());
        return history;
    }
}
