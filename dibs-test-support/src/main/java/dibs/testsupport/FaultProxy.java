package dibs.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on a free loopback port in front of a redis-server, that fails the way networks do:
 * pass through, delay, blackhole the existing flows (a NAT that dropped them: new flows pass),
 * blackhole everything (connections open, then silence), reset the existing flows, and
 * half-open (requests go through, replies are lost). One thread per direction per flow.
 */
public final class FaultProxy implements AutoCloseable {
    /** What a flow does with the bytes of one direction. */
    private enum Mode {
        PASS,
        DROP
    }

    private final ServerSocket listener;
    private final int targetPort;
    private final List<Flow> flows = new CopyOnWriteArrayList<>();
    private volatile long delayMs;
    private volatile boolean blackholeNew;
    private volatile boolean closed;

    private FaultProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        listener = new ServerSocket();
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread acceptor = new Thread(this::acceptLoop, "fault-proxy-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A proxy to {@code 127.0.0.1:targetPort}, passing everything through. */
    public static FaultProxy start(int targetPort) throws IOException {
        return new FaultProxy(targetPort);
    }

    public int port() {
        return listener.getLocalPort();
    }

    public String uri() {
        return "redis://127.0.0.1:" + port();
    }

    /** Every flow, existing and new, forwards at once. */
    public void passThrough() {
        delayMs = 0;
        blackholeNew = false;
        flows.forEach(f -> f.set(Mode.PASS, Mode.PASS));
    }

    /** Every chunk, both ways, waits {@code ms} before it is forwarded. */
    public void delay(long ms) {
        delayMs = ms;
    }

    /** The flows open now go silent both ways, their sockets open; new flows pass. */
    public void blackholeExisting() {
        flows.forEach(f -> f.set(Mode.DROP, Mode.DROP));
    }

    /** Every flow, and every new one, goes silent: connects succeed, nothing is ever answered. */
    public void blackholeAll() {
        blackholeNew = true;
        blackholeExisting();
    }

    /** The flows open now are closed with a TCP reset. */
    public void reset() {
        for (Flow f : flows) {
            f.reset();
        }
    }

    /** The flows open now still carry requests to the server, but lose its replies. */
    public void halfOpenExisting() {
        flows.forEach(f -> f.set(Mode.PASS, Mode.DROP));
    }

    /** Flows accepted so far, closed or not. */
    public int flowsAccepted() {
        return flows.size();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        for (Flow f : flows) {
            f.close();
        }
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                Flow flow = new Flow(client, server);
                if (blackholeNew) {
                    flow.set(Mode.DROP, Mode.DROP);
                }
                flows.add(flow);
                flow.start();
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("fault proxy: " + e);
                }
            }
        }
    }

    /** One client connection and its connection to the server. */
    private final class Flow {
        final Socket client;
        final Socket server;
        volatile Mode up = Mode.PASS; // client -> server
        volatile Mode down = Mode.PASS; // server -> client

        Flow(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }

        void set(Mode up, Mode down) {
            this.up = up;
            this.down = down;
        }

        void start() throws IOException {
            pump(client.getInputStream(), server.getOutputStream(), true);
            pump(server.getInputStream(), client.getOutputStream(), false);
        }

        private void pump(InputStream in, OutputStream out, boolean upstream) {
            Thread t = new Thread(
                    () -> {
                        byte[] buf = new byte[16 * 1024];
                        try {
                            for (int n; (n = in.read(buf)) >= 0; ) {
                                long delay = delayMs;
                                if (delay > 0) {
                                    Thread.sleep(delay);
                                }
                                if ((upstream ? up : down) == Mode.PASS) {
                                    out.write(buf, 0, n);
                                    out.flush();
                                }
                            }
                        } catch (IOException | InterruptedException e) {
                            // the flow ended
                        }
                        // A peer that closed its side: close the other, unless the flow is silenced
                        // (then the other side must see nothing at all).
                        if ((upstream ? up : down) == Mode.PASS) {
                            close();
                        }
                    },
                    "fault-proxy-flow");
            t.setDaemon(true);
            t.start();
        }

        void reset() {
            try {
                client.setSoLinger(true, 0); // close() then sends RST
            } catch (IOException e) {
                // closing anyway
            }
            close();
        }

        void close() {
            try {
                client.close();
            } catch (IOException e) {
                // already closed
            }
            try {
                server.close();
            } catch (IOException e) {
                // already closed
            }
        }
    }
}
