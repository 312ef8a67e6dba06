package dibs.spring;

import dibs.RedisServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** A {@code redis-server --sentinel} on a free loopback port, watching {@code mymaster} (quorum 1). */
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
        int port = RedisServer.freePort();
        Path dir = Files.createTempDirectory("dibs-sentinel-");
        Path conf = dir.resolve("sentinel.conf");
        Files.writeString(conf, "port " + port + "\nbind 127.0.0.1\ndir " + dir + "\n"
                + "sentinel monitor mymaster 127.0.0.1 " + masterPort + " 1\n");
        String binary = System.getProperty("redis.server", "redis-server");
        Process p = new ProcessBuilder(binary, conf.toString(), "--sentinel")
                .redirectErrorStream(true).redirectOutput(dir.resolve("sentinel.log").toFile()).start();
        SentinelProcess s = new SentinelProcess(p, port, dir);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (s.answersMaster()) {
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

    private boolean answersMaster() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            socket.setSoTimeout(1000);
            String cmd = "*3\r\n$8\r\nSENTINEL\r\n$23\r\nget-master-addr-by-name\r\n$8\r\nmymaster\r\n";
            socket.getOutputStream().write(cmd.getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            byte[] buf = new byte[256];
            int n = in.read(buf);
            return n > 0 && buf[0] == '*' && buf[1] == '2';
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
