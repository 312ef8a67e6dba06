package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.RedisServer;
import dibs.testsupport.TestSupport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The `dibs` command line and the JVM exclude each other, both ways, on one lock name. */
@Timeout(60)
class CliInteropTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    private static Path cli;

    @BeforeAll
    static void findCli() {
        cli = TestSupport.repositoryRoot()
                .resolve(Paths.get("target", "release", "dibs"))
                .toAbsolutePath();
        assertTrue(
                Files.isExecutable(cli),
                "the CLI " + cli + " is missing: run `cargo build --release --bins`"
                        + " before the Java tests (the Maven and Gradle builds do)");
    }

    private static Process cli(String lock, String... command) throws IOException {
        String[] args = new String[8 + command.length];
        String[] head = {cli.toString(), "run", "--redis", redis.uri(), "--lock", lock, "--at-most", "30s"};
        System.arraycopy(head, 0, args, 0, head.length);
        System.arraycopy(command, 0, args, head.length, command.length);
        return new ProcessBuilder(args).redirectErrorStream(true).start();
    }

    @Test
    void aJvmHoldingTheLockMakesTheCliSkip() throws Exception {
        String lock = TestSupport.uniqueName("interop-jvm");
        AtomicInteger cliExit = new AtomicInteger(-1);
        String[] cliOutput = new String[1];
        assertTrue(Dibs.execute(redis.uri(), lock, 30, 0, () -> {
            try {
                Process p = new ProcessBuilder(
                                cli.toString(),
                                "run",
                                "--redis",
                                redis.uri(),
                                "--lock",
                                lock,
                                "--at-most",
                                "30s",
                                "--skip-exit",
                                "3",
                                "--",
                                "echo",
                                "cli-ran")
                        .redirectErrorStream(true)
                        .start();
                cliOutput[0] = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                cliExit.set(p.waitFor(20, TimeUnit.SECONDS) ? p.exitValue() : -2);
            } catch (IOException | InterruptedException e) {
                throw new RuntimeException(e);
            }
        }));
        assertEquals(3, cliExit.get(), cliOutput[0]);
        assertFalse(cliOutput[0].contains("cli-ran"), cliOutput[0]);
        assertTrue(cliOutput[0].contains("held by another holder"), cliOutput[0]);
    }

    @Test
    void theCliHoldingTheLockMakesTheJvmSkip() throws Exception {
        String lock = TestSupport.uniqueName("interop-cli");
        Process holder = cli(lock, "--", "sleep", "2");
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!Dibs.inspect(redis.uri(), lock).held()) {
                assertTrue(System.nanoTime() < deadline, "the CLI never took the lock");
                Thread.sleep(20);
            }
            assertEquals(holder.pid(), Dibs.inspect(redis.uri(), lock).pid().getAsLong(), "the CLI is the holder");
            assertFalse(Dibs.execute(redis.uri(), lock, 30, 0, () -> {}), "the JVM must skip");
            assertTrue(holder.waitFor(20, TimeUnit.SECONDS));
            assertEquals(0, holder.exitValue());
            assertTrue(Dibs.execute(redis.uri(), lock, 30, 0, () -> {}), "free again once the CLI's command ended");
        } finally {
            holder.destroyForcibly();
        }
    }
}
