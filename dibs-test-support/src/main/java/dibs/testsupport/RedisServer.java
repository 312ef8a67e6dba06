package dibs.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A throwaway redis-server on a free loopback port, for tests and the demo. No mocks: the tests
 * talk to a real server.
 *
 * <p>The binary is {@code -Dredis.server=...}, else {@code $REDIS_SERVER}, else
 * {@code redis-server} on the PATH, else {@code /usr/bin/redis-server}. {@link #command} is a
 * tiny RESP client for assertions ({@code PTTL}, {@code GET}, {@code SET}, {@code CONFIG} ...):
 * every call opens its own connection and sends that one command only, preceded by {@code AUTH}
 * when the server was started with {@code --requirepass} (no {@code HELLO}, no {@code SELECT},
 * no {@code CLIENT SETNAME}), so {@code INFO commandstats} counts exactly what a test sent.
 *
 * <p>Faults: {@link #kill()} (SIGKILL), {@link #freeze()} / {@link #thaw()} (SIGSTOP / SIGCONT),
 * {@link #stop()} (SIGTERM) and {@link #start()} again on the same port.
 *
 * <p>The one JUnit 5 fixture of every module: a server for a test class, started before its
 * first test and stopped after its last, is a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisServer redis = RedisServer.perTestClass();   // Kotlin: @JvmField in a companion
 * }</pre>
 */
public final class RedisServer implements AutoCloseable, BeforeAllCallback, AfterAllCallback {
    private final List<String> extraArgs;
    /** Set when the server gets its port: at once, or in {@link #beforeAll} for a test class's. */
    private int port;

    private Path logFile;
    /**
     * Its own working directory, kept across restarts: a shared one would hand each server the
     * dump files of the others (a Redis 6.2 refuses to start on a 7.x dump's RDB version).
     */
    private Path dir;

    private Process process;
    private boolean frozen;

    private RedisServer(List<String> extraArgs) {
        this.extraArgs = extraArgs;
        // Never leave a redis-server behind, even when the JVM exits without closing us.
        Runtime.getRuntime().addShutdownHook(new Thread(this::stop, "redis-server-stop"));
    }

    /** Gives the server its port, log file and directory. */
    private void open(int port) throws IOException {
        this.port = port;
        this.logFile = Files.createTempFile("dibs-redis-" + port + "-", ".log");
        logFile.toFile().deleteOnExit();
        this.dir = Files.createTempDirectory("dibs-redis-" + port + "-");
        dir.toFile().deleteOnExit();
    }

    /** Starts a server on a free port; {@code extraArgs} go to redis-server, e.g. "--requirepass", "pw". */
    public static RedisServer launch(String... extraArgs) throws IOException {
        RedisServer server = new RedisServer(Arrays.asList(extraArgs));
        server.startOnAFreePort();
        return server;
    }

    /**
     * A server for one test class, registered as a JUnit 5 extension ({@code @RegisterExtension}
     * on a static field): started on a free port before the class's first test, stopped and
     * its files removed after its last; {@code extraArgs} go to redis-server.
     */
    public static RedisServer perTestClass(String... extraArgs) {
        return new RedisServer(Arrays.asList(extraArgs));
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        startOnAFreePort();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    private void startOnAFreePort() throws IOException {
        // A port found free can be taken before redis-server binds it: then try another.
        IOException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            open(freePort());
            try {
                start();
                return;
            } catch (IOException e) {
                close();
                last = e;
            }
        }
        throw last;
    }

    /**
     * Starts a server on {@code port}, for a namespace of the test's own where that port is free
     * (the README's snippets, which name port 6379); {@code extraArgs} go to redis-server.
     */
    public static RedisServer launchOnPort(int port, String... extraArgs) throws IOException {
        RedisServer server = new RedisServer(Arrays.asList(extraArgs));
        server.open(port);
        server.start();
        return server;
    }

    /** A loopback port nothing listens on (at the time of the call). */
    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return socket.getLocalPort();
        }
    }

    /**
     * (Re)starts the server on its port, waiting until its own log says it is ready. Readiness
     * is not read from the port: a port found free may belong to another test's server by now.
     */
    public synchronized void start() throws IOException {
        if (process != null && process.isAlive()) {
            return;
        }
        long logStart = Files.size(logFile);
        List<String> cmd = new ArrayList<>(Arrays.asList(
                binary(),
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                dir.toString()));
        cmd.addAll(extraArgs);
        process = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("redis-server exited with " + process.exitValue() + ": " + log());
            }
            if (log().substring((int) logStart).contains("Ready to accept connections")) {
                return;
            }
            sleep(20);
        }
        stop();
        throw new IOException("redis-server on port " + port + " was not ready within 10 s: " + log());
    }

    /** Stops the server (the port stays reserved for {@link #start()} in the sense that we reuse it). */
    public synchronized void stop() {
        if (process == null) {
            return;
        }
        thaw(); // a stopped process would not act on SIGTERM
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    @Override
    public void close() {
        stop();
        if (dir == null) {
            return; // a test class's server that never started
        }
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder())
                    .forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // a leftover temporary directory is no failure of the test
        }
    }

    /** The pid of the running redis-server. */
    public synchronized long pid() {
        if (process == null || !process.isAlive()) {
            throw new IllegalStateException("redis-server on port " + port + " is not running");
        }
        return process.pid();
    }

    /** Kills the server with SIGKILL (no shutdown, no goodbye to clients) and waits until it is gone. */
    public synchronized void kill() throws IOException {
        if (process == null) {
            return;
        }
        signal("KILL");
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                throw new IOException("redis-server " + process.pid() + " survived SIGKILL for 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        frozen = false;
        process = null;
    }

    /** Freezes the server with SIGSTOP: its sockets stay open but it answers nothing until {@link #thaw()}. */
    public synchronized void freeze() throws IOException {
        signal("STOP");
        frozen = true;
    }

    /** Resumes a server frozen by {@link #freeze()} (SIGCONT); does nothing if it is not frozen. */
    public synchronized void thaw() {
        if (!frozen || process == null) {
            frozen = false;
            return;
        }
        try {
            signal("CONT");
            frozen = false;
        } catch (IOException e) {
            throw new IllegalStateException("cannot resume redis-server " + process.pid(), e);
        }
    }

    /** Sends a signal ({@code "KILL"}, {@code "STOP"}, {@code "CONT"}) with {@code kill -<sig> <pid>}. */
    private void signal(String signal) throws IOException {
        long pid = pid();
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                .redirectErrorStream(true)
                .start();
        try {
            String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IOException("kill -" + signal + " " + pid + " failed: " + out);
            }
        } catch (InterruptedException e) {
            kill.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /**
     * {@code INFO commandstats}, read with one command: for each {@code cmdstat_*} line, the
     * command's name ({@code "eval"}, {@code "client|kill"}, ...) to its fields
     * ({@code "calls"}, {@code "rejected_calls"}, {@code "failed_calls"}, {@code "usec"} ...).
     * Commands never called are absent. The INFO of a reading is counted in the next reading.
     */
    public Map<String, Map<String, Long>> commandStats() throws IOException {
        Map<String, Map<String, Long>> stats = new LinkedHashMap<>();
        for (String line : command("INFO", "commandstats").split("\\r?\\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            int colon = line.indexOf(':');
            Map<String, Long> fields = new LinkedHashMap<>();
            for (String pair : line.substring(colon + 1).split(",")) {
                int eq = pair.indexOf('=');
                try {
                    fields.put(
                            pair.substring(0, eq),
                            Long.parseLong(pair.substring(eq + 1).trim()));
                } catch (NumberFormatException e) {
                    // usec_per_call is a decimal: not needed
                }
            }
            stats.put(line.substring("cmdstat_".length(), colon), fields);
        }
        return stats;
    }

    /** The {@code calls} count of one command in {@code INFO commandstats}, 0 if never called. */
    public long calls(String command) throws IOException {
        return commandStats().getOrDefault(command, Map.of()).getOrDefault("calls", 0L);
    }

    /** One field of {@code INFO <section>}, e.g. {@code info("stats", "total_connections_received")}. */
    public String info(String section, String field) throws IOException {
        for (String line : command("INFO", section).split("\\r?\\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).trim();
            }
        }
        throw new IOException("INFO " + section + " has no field " + field);
    }

    public int port() {
        return port;
    }

    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** The key dibs uses for a lock name under the default key prefix. */
    public static String lockKey(String lockName) {
        return "dibs:" + lockName;
    }

    /**
     * Sends one command and returns the reply as text: a simple string or error as is (errors
     * keep their code, e.g. "ERR ..."), an integer in decimal, a bulk string's content or
     * "(nil)", an array as its elements joined by newlines. Authenticates first when the server
     * was started with --requirepass.
     */
    public String command(String... args) throws IOException {
        String password = option("--requirepass");
        if (password == null) {
            return rawCommand(args);
        }
        try (Socket socket = connect()) {
            String auth = send(socket, "AUTH", password);
            if (!auth.equals("OK")) {
                throw new IOException("AUTH failed: " + auth);
            }
            return send(socket, args);
        }
    }

    /**
     * As {@link #command}, but in database {@code db}: sends {@code SELECT db} first, then the
     * command, on the same connection (so {@code INFO commandstats} counts a {@code select} too).
     */
    public String commandInDb(int db, String... args) throws IOException {
        try (Socket socket = connect()) {
            String password = option("--requirepass");
            if (password != null) {
                String auth = send(socket, "AUTH", password);
                if (!auth.equals("OK")) {
                    throw new IOException("AUTH failed: " + auth);
                }
            }
            String selected = send(socket, "SELECT", Integer.toString(db));
            if (!selected.equals("OK")) {
                throw new IOException("SELECT " + db + " failed: " + selected);
            }
            return send(socket, args);
        }
    }

    /** The log of the server, for failure messages. */
    public String log() {
        try {
            return new String(Files.readAllBytes(logFile), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private String rawCommand(String... args) throws IOException {
        return commandOn(port, args);
    }

    /**
     * One command to whatever listens on {@code 127.0.0.1:port} (a redis-server, a Sentinel),
     * without AUTH; the reply rendered as {@link #command} renders it.
     */
    public static String commandOn(int port, String... args) throws IOException {
        try (Socket socket = connect(port)) {
            return send(socket, args);
        }
    }

    private Socket connect() throws IOException {
        return connect(port);
    }

    private static Socket connect(int port) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
        socket.setSoTimeout(5000);
        return socket;
    }

    private static String send(Socket socket, String... args) throws IOException {
        StringBuilder sb = new StringBuilder().append('*').append(args.length).append("\r\n");
        for (String arg : args) {
            byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
            sb.append('$').append(bytes.length).append("\r\n").append(arg).append("\r\n");
        }
        OutputStream out = socket.getOutputStream();
        out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
        out.flush();
        return readReply(socket.getInputStream());
    }

    private static String readReply(InputStream in) throws IOException {
        String line = readLine(in);
        if (line.isEmpty()) {
            throw new IOException("empty reply");
        }
        char type = line.charAt(0);
        String rest = line.substring(1);
        switch (type) {
            case '+':
            case '-':
            case ':':
                return rest;
            case '$': {
                int len = Integer.parseInt(rest);
                if (len < 0) {
                    return "(nil)";
                }
                byte[] data = in.readNBytes(len + 2);
                return new String(data, 0, len, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(rest);
                if (n < 0) {
                    return "(nil)";
                }
                List<String> items = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    items.add(readReply(in));
                }
                return String.join("\n", items);
            }
            default:
                throw new IOException("unexpected reply: " + line);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int prev = -1;
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed mid-reply");
            }
            if (prev == '\r' && b == '\n') {
                byte[] bytes = buf.toByteArray();
                return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
            }
            buf.write(b);
            prev = b;
        }
    }

    private String option(String name) {
        int i = extraArgs.indexOf(name);
        return i >= 0 && i + 1 < extraArgs.size() ? extraArgs.get(i + 1) : null;
    }

    /** The redis-server binary: {@code -Dredis.server}, {@code $REDIS_SERVER}, the PATH, Debian's. */
    public static String binary() {
        String configured = System.getProperty("redis.server", System.getenv("REDIS_SERVER"));
        if (configured != null && !configured.isEmpty()) {
            return configured;
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                Path candidate = Paths.get(dir, "redis-server");
                if (Files.isExecutable(candidate)) {
                    return candidate.toString();
                }
            }
        }
        return "/usr/bin/redis-server";
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
