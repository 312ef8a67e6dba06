package dibs.testsupport;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway {@code redis-server --sentinel} on a free loopback port, watching one master, with
 * a tiny RESP client ({@link #command}) like {@link RedisServer#command}. Its config file and log
 * live in a temporary directory of its own (Sentinel rewrites the file as the topology changes),
 * deleted by {@link #close}: read {@link #log} before.
 */
public final class SentinelServer implements AutoCloseable {
    private final int port;
    private final Path dir;
    private final Process process;

    private SentinelServer(int port, Path dir, Process process) {
        this.port = port;
        this.dir = dir;
        this.process = process;
        Runtime.getRuntime().addShutdownHook(new Thread(this::close, "sentinel-" + port + "-stop"));
    }

    /**
     * Starts a Sentinel that monitors {@code masterName} at {@code 127.0.0.1:masterPort} with
     * {@code quorum}, and waits until it answers for the master.
     *
     * @param settings further lines for the config, each without the leading {@code sentinel }
     *     and the master name, e.g. {@code "down-after-milliseconds 1000"}
     */
    public static SentinelServer launch(String masterName, int masterPort, int quorum, String... settings)
            throws IOException {
        IOException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            int port = RedisServer.freePort();
            Path dir = Files.createTempDirectory("dibs-sentinel-server-");
            StringBuilder conf = new StringBuilder()
                    .append("port ")
                    .append(port)
                    .append('\n')
                    .append("bind 127.0.0.1\n")
                    .append("dir ")
                    .append(dir)
                    .append('\n')
                    .append("sentinel monitor ")
                    .append(masterName)
                    .append(" 127.0.0.1 ")
                    .append(masterPort)
                    .append(' ')
                    .append(quorum)
                    .append('\n');
            for (String s : settings) {
                int space = s.indexOf(' ');
                conf.append("sentinel ")
                        .append(s, 0, space)
                        .append(' ')
                        .append(masterName)
                        .append(s.substring(space))
                        .append('\n');
            }
            Path file = dir.resolve("sentinel.conf");
            Files.write(file, conf.toString().getBytes(StandardCharsets.UTF_8));
            Process p = new ProcessBuilder(RedisServer.binary(), file.toString(), "--sentinel")
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("sentinel.log").toFile())
                    .start();
            SentinelServer s = new SentinelServer(port, dir, p);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < deadline && p.isAlive()) {
                try {
                    if (!s.command("SENTINEL", "get-master-addr-by-name", masterName)
                            .equals("(nil)")) {
                        return s;
                    }
                } catch (IOException e) {
                    // not listening yet
                }
                sleep(50);
            }
            last = new IOException("sentinel on port " + port + " did not come up: " + s.log());
            s.close();
        }
        throw last;
    }

    public int port() {
        return port;
    }

    /** {@code 127.0.0.1:port}, as in a comma-separated list of Sentinels. */
    public String address() {
        return "127.0.0.1:" + port;
    }

    /** The master's port as this Sentinel answers it now, or -1 if it knows none. */
    public int masterPort(String masterName) throws IOException {
        String reply = command("SENTINEL", "get-master-addr-by-name", masterName);
        String[] parts = reply.split("\n");
        return parts.length == 2 ? Integer.parseInt(parts[1].trim()) : -1;
    }

    /** {@code SENTINEL MASTER <name>} as field to value ({@code flags}, {@code num-slaves} ...). */
    public Map<String, String> master(String masterName) throws IOException {
        String[] items = command("SENTINEL", "MASTER", masterName).split("\n", -1);
        Map<String, String> fields = new LinkedHashMap<>();
        for (int i = 0; i + 1 < items.length; i += 2) {
            fields.put(items[i], items[i + 1]);
        }
        return fields;
    }

    /** Sends one command; the reply as {@link RedisServer#command} renders it (arrays flattened). */
    public String command(String... args) throws IOException {
        return RedisServer.commandOn(port, args);
    }

    /** The Sentinel's log (its events: {@code +sdown}, {@code +switch-master} ...). */
    public String log() {
        try {
            return new String(Files.readAllBytes(dir.resolve("sentinel.log")), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public synchronized void close() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        File[] files = dir.toFile().listFiles();
        if (files != null) {
            for (File f : files) {
                f.delete();
            }
        }
        dir.toFile().delete();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
