package dibs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.LockContract;
import dibs.testsupport.TestSupport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@code dibs run} passes the lock contract. The adapter runs the CLI with a command that says
 * it started (a file) and then waits to be let go (another file): the contract's Java task runs
 * in between, while the CLI holds the lock.
 */
class CliContractTest extends LockContract {
    private static final int SKIPPED = 75;
    private static Path cli;

    @BeforeAll
    static void findCli() {
        cli = TestSupport.repositoryRoot()
                .resolve(Paths.get("target", "release", "dibs"))
                .toAbsolutePath();
        assertTrue(Files.isExecutable(cli), "the CLI " + cli + " is missing: run `cargo build --release --bins`");
    }

    @Override
    protected boolean runLocked(String name, Duration atMost, Duration atLeast, Runnable task)
            throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("dibs-cli-contract-");
        Path started = dir.resolve("started");
        Path go = dir.resolve("go");
        try {
            Process p = new ProcessBuilder(
                            cli.toString(),
                            "run",
                            "--redis",
                            redis.uri(),
                            "--lock",
                            name,
                            "--at-most",
                            atMost.toMillis() + "ms",
                            "--at-least",
                            atLeast.toMillis() + "ms",
                            "--skip-exit",
                            Integer.toString(SKIPPED),
                            "--",
                            "sh",
                            "-c",
                            "touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.005; done",
                            "sh",
                            started.toString(),
                            go.toString())
                    .redirectErrorStream(true)
                    .start();
            while (!Files.exists(started)) {
                if (p.waitFor(2, TimeUnit.MILLISECONDS)) {
                    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    if (p.exitValue() == SKIPPED) {
                        return false;
                    }
                    throw new IOException("dibs run exited " + p.exitValue() + " before its command started: " + out);
                }
            }
            try {
                task.run();
            } finally {
                Files.createFile(go);
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new IOException("dibs run did not end after its command was let go");
                }
            }
            if (p.exitValue() != 0) {
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                throw new IOException("dibs run exited " + p.exitValue() + ": " + out);
            }
            return true;
        } finally {
            Files.deleteIfExists(started);
            Files.deleteIfExists(go);
            Files.deleteIfExists(dir);
        }
    }

    @Override
    protected String frontEnd() {
        return "dibs run";
    }

    @Override
    protected int attemptsPerThread() {
        return 10; // a process each
    }
}
