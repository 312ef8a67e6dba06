package dibs;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway PostgreSQL: initdb into a temp dir, then pg_ctl start, listening on 127.0.0.1
 * only (a free port), its unix socket in the same dir, trust authentication for user postgres.
 */
final class PostgresServer implements AutoCloseable {
    static final String USER = "dibs-pg";
    private final Path bin;
    private final Path dir;
    private final boolean asRoot;
    private final int port;

    private PostgresServer(Path bin, Path dir, boolean asRoot, int port) {
        this.bin = bin;
        this.dir = dir;
        this.asRoot = asRoot;
        this.port = port;
    }

    static PostgresServer start() throws IOException, InterruptedException {
        Path bin = findBin();
        boolean asRoot = run(Arrays.asList("id", "-u"), null).trim().equals("0");
        Path dir = Files.createTempDirectory("dibs-pg-");
        PostgresServer pg = null;
        try {
            if (asRoot) {
                ensureUser();
                run(Arrays.asList("chown", USER, dir.toString()), null);
            }
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
                port = s.getLocalPort();
            }
            pg = new PostgresServer(bin, dir, asRoot, port);
            pg.pg(Arrays.asList(
                    "initdb",
                    "-D",
                    dir.resolve("data").toString(),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--locale=C",
                    "--no-sync"));
            pg.pg(Arrays.asList(
                    "pg_ctl",
                    "-D",
                    dir.resolve("data").toString(),
                    "-l",
                    dir.resolve("postgres.log").toString(),
                    "-w",
                    "-t",
                    "10",
                    "-o",
                    "-c listen_addresses=127.0.0.1 -p " + port + " -c unix_socket_directories=" + dir
                            + " -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
                    "start"));
            return pg;
        } catch (IOException | RuntimeException | InterruptedException | Error e) {
            String log = readLog(dir);
            if (pg != null) {
                pg.close();
            } else {
                deleteTree(dir);
            }
            if (!log.isEmpty()) {
                e.addSuppressed(new IOException("postgres.log:\n" + log));
            }
            throw e;
        }
    }

    String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl());
    }

    @Override
    public void close() throws IOException, InterruptedException {
        Path pidFile = dir.resolve("data").resolve("postmaster.pid");
        try {
            if (Files.exists(pidFile)) {
                pg(Arrays.asList(
                        "pg_ctl", "-D", dir.resolve("data").toString(), "-m", "immediate", "-w", "-t", "4", "stop"));
            }
        } finally {
            try {
                if (Files.exists(pidFile)) { // the stop failed: the postmaster we started, by its pid
                    String pid = Files.readAllLines(pidFile).get(0).trim();
                    exitCode(Arrays.asList("kill", "-KILL", pid));
                }
            } finally {
                deleteTree(dir);
            }
        }
    }

    /** Runs one of PostgreSQL's programs, as {@link #USER} when we are root. */
    private String pg(List<String> args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        if (asRoot) {
            cmd.addAll(Arrays.asList("runuser", "-u", USER, "--"));
        }
        cmd.add(bin.resolve(args.get(0)).toString());
        cmd.addAll(args.subList(1, args.size()));
        return run(cmd, dir); // in dir: the user may not enter the working directory
    }

    /** The newest /usr/lib/postgresql/N/bin with initdb, pg_ctl and postgres. */
    private static Path findBin() throws IOException {
        Path root = Paths.get("/usr/lib/postgresql");
        List<Path> found = new ArrayList<>();
        if (Files.isDirectory(root)) {
            try (Stream<Path> versions = Files.list(root)) {
                versions.map(v -> v.resolve("bin"))
                        .filter(b -> Files.isExecutable(b.resolve("initdb"))
                                && Files.isExecutable(b.resolve("pg_ctl"))
                                && Files.isExecutable(b.resolve("postgres")))
                        .forEach(found::add);
            }
        }
        if (found.isEmpty()) {
            fail("no PostgreSQL server binaries (initdb, pg_ctl, postgres) under /usr/lib/postgresql/*/bin: "
                    + "run scripts/ensure-deps.sh, which installs Debian's postgresql package (the test "
                    + "command, scripts/test.sh, runs it first)");
        }
        found.sort(Comparator.comparing((Path b) -> versionOf(b)));
        return found.get(found.size() - 1);
    }

    private static int versionOf(Path bin) {
        try {
            return Integer.parseInt(bin.getParent().getFileName().toString());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Creates the system user {@link #USER} if missing. */
    private static void ensureUser() throws IOException, InterruptedException {
        if (exitCode(Arrays.asList("id", "-u", USER)) == 0) {
            return;
        }
        int rc = exitCode(
                Arrays.asList("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER));
        if (rc != 0 && exitCode(Arrays.asList("id", "-u", USER)) != 0) { // another creator wins: fine
            fail("useradd " + USER + " failed (exit " + rc + "): PostgreSQL cannot run as root");
        }
    }

    private static int exitCode(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(String.join(" ", cmd) + " did not finish in 30 s");
        }
        return p.exitValue();
    }

    /** Runs {@code cmd}, its output returned; fails on a non-zero exit or after 30 s. */
    private static String run(List<String> cmd, Path in) throws IOException, InterruptedException {
        ProcessBuilder b = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (in != null) {
            b.directory(in.toFile());
        }
        Path out = Files.createTempFile("dibs-pg-cmd-", ".txt");
        try {
            Process p = b.redirectOutput(out.toFile()).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail(String.join(" ", cmd) + " did not finish in 30 s:\n" + Files.readString(out));
            }
            String text = Files.readString(out);
            if (p.exitValue() != 0) {
                fail(String.join(" ", cmd) + " exited " + p.exitValue() + ":\n" + text);
            }
            return text;
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private static String readLog(Path dir) {
        try {
            Path log = dir.resolve("postgres.log");
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            return "";
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) all.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
