package dibs.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The {@code dibs} command line as Cargo built it ({@code target/release/dibs} at the repository
 * root), run as an operator would: for the tests that check what {@code dibs check},
 * {@code dibs history} and {@code dibs locks} say about what a JVM did.
 */
public final class DibsCli {
    private final int exitCode;
    private final String output;

    private DibsCli(int exitCode, String output) {
        this.exitCode = exitCode;
        this.output = output;
    }

    /**
     * Runs {@code dibs ARGS --redis URI} and waits for it (20 s at most).
     *
     * @param redisUri where Redis is
     * @param args the command and its arguments
     * @return its exit code and what it printed (stdout and stderr)
     * @throws IOException when it cannot be run, or does not end
     * @throws InterruptedException when interrupted while waiting
     */
    public static DibsCli run(String redisUri, String... args) throws IOException, InterruptedException {
        Path cli = path();
        if (!Files.isExecutable(cli)) {
            throw new IOException("the CLI " + cli + " is missing: run `cargo build --release --bins`");
        }
        List<String> command = new ArrayList<>();
        command.add(cli.toString());
        command.addAll(Arrays.asList(args));
        command.add("--redis");
        command.add(redisUri);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("dibs " + String.join(" ", args) + " did not end: " + output);
        }
        return new DibsCli(p.exitValue(), output);
    }

    /** @return where the CLI is */
    public static Path path() {
        return TestSupport.repositoryRoot()
                .resolve(Paths.get("target", "release", "dibs"))
                .toAbsolutePath();
    }

    /** @return its exit code */
    public int exitCode() {
        return exitCode;
    }

    /** @return what it printed, stdout and stderr */
    public String output() {
        return output;
    }

    @Override
    public String toString() {
        return "exit " + exitCode + ": " + output.trim();
    }
}
