package dibs.spring;

import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A {@code redis-server --sentinel} on a free loopback port, watching {@code mymaster} (quorum 1),
 * optionally with an ACL user of its own that clients must authenticate as.
 */
final class SentinelProcess implements AutoCloseable {
    private final Process process;
    private final int port;
    private final Path dir;

    private SentinelProcess(Process process, int port, Path dir) {
        this.process = process;
        this.port = port;
        this.dir = dir;
    }

    static SentinelProcess start(int masterPort) throws IOException, InterruptedException {
        return start(masterPort, null, null);
    }

    /**
     * @param user with {@code password}: the only user the Sentinel lets in (its default user
     *     off), allowed just {@code SENTINEL get-master-addr-by-name}; null for none
     */
    static SentinelProcess start(int masterPort, String user, String password)
            throws IOException, InterruptedException {
        int port = RedisServer.freePort();
        Path dir = Files.createTempDirectory("dibs-sentinel-");
        Path conf = dir.resolve("sentinel.conf");
        String acl = user == null
                ? ""
                : "user default off\nuser " + user + " on >" + password + " -@all +sentinel|get-master-addr-by-name\n";
        Files.writeString(
                conf,
                "port " + port + "\nbind 127.0.0.1\ndir " + dir + "\n" + acl + "sentinel monitor mymaster 127.0.0.1 "
                        + masterPort + " 1\n");
        String auth = user == null
                ? ""
                : "*3\r\n$4\r\nAUTH\r\n$" + user.length() + "\r\n" + user + "\r\n$" + password.length() + "\r\n"
                        + password + "\r\n";
        String binary = System.getProperty("redis.server", "redis-server");
        Process p = new ProcessBuilder(binary, conf.toString(), "--sentinel")
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("sentinel.log").toFile())
                .start();
        SentinelProcess s = new SentinelProcess(p, port, dir);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (s.answersMaster(auth)) {
                return s;
            }
            if (!p.isAlive()) {
                break;
            }
            Thread.sleep(50);
        }
        s.close();
        throw new IOException("the sentinel did not come up: " + Files.readString(dir.resolve("sentinel.log")));
    }

    int port() {
        return port;
    }

    private boolean answersMaster(String auth) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            socket.setSoTimeout(1000);
            String cmd = auth + "*3\r\n$8\r\nSENTINEL\r\n$23\r\nget-master-addr-by-name\r\n$8\r\nmymaster\r\n";
            socket.getOutputStream().write(cmd.getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            StringBuilder got = new StringBuilder();
            byte[] buf = new byte[256];
            while (!got.toString().contains("*2\r\n") && !got.toString().contains("-")) {
                int n = in.read(buf);
                if (n < 0) {
                    return false;
                }
                got.append(new String(buf, 0, n, StandardCharsets.US_ASCII));
            }
            return got.toString().contains("*2\r\n");
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }
}
