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
 * A TCP proxy on a free loopback port that stands for one redis-server of a replicated set, for
 * chaos tests with Sentinel: every node announces its proxy's port ({@code replica-announce-port})
 * and Sentinel monitors the proxies, so Sentinel, clients and replication all reach a node through
 * its proxy, and a failover's {@code REPLICAOF} keeps pointing at proxies.
 *
 * <p>Each node makes its outgoing (replication) connections from its own loopback address
 * ({@code bind-source-addr 127.0.0.N}), so {@link #stallFrom} can drop the replication stream to
 * one replica, and only that one, while everything else passes (see
 * /work/shared/faults/README.md: a frozen replica does not miss writes; a dropped stream does).
 *
 * <p>Unlike {@link FaultProxy}, a connection accepted while the target does not listen (the node
 * was killed) is reset at once, as a connect to the dead node itself would be refused. The target
 * port may be set after the proxy starts ({@link #target}), since a node must know its proxy's
 * port before it starts.
 */
public final class NodeProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final List<Flow> flows = new CopyOnWriteArrayList<>();
    private volatile int targetPort;
    private volatile boolean closed;

    private NodeProxy() throws IOException {
        listener = new ServerSocket();
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
        Thread acceptor = new Thread(this::acceptLoop, "node-proxy-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A proxy with no target yet: connections are reset until {@link #target} is set. */
    public static NodeProxy start() throws IOException {
        return new NodeProxy();
    }

    /** Forwards new connections to {@code 127.0.0.1:port}. */
    public NodeProxy target(int port) {
        targetPort = port;
        return this;
    }

    public int port() {
        return listener.getLocalPort();
    }

    /**
     * The flows open now whose client connected from {@code sourceHost} (e.g. "127.0.0.12")
     * still carry that client's bytes to the node, but lose everything the node sends back. For
     * a replica's link to its master: its acknowledgements reach the master, the stream is lost.
     *
     * @return how many flows were stalled
     */
    public int stallFrom(String sourceHost) {
        int n = 0;
        for (Flow f : flows) {
            if (f.from(sourceHost) && !f.closed) {
                f.stalled = true;
                n++;
            }
        }
        return n;
    }

    /**
     * Ends the stalled flows with a TCP reset (the client then reconnects, and a replica resumes
     * with a partial resync).
     *
     * @return how many flows were reset
     */
    public int resetStalled() {
        int n = 0;
        for (Flow f : flows) {
            if (f.stalled && !f.closed) {
                f.reset();
                n++;
            }
        }
        return n;
    }

    /** Flows open now (not yet closed). */
    public int openFlows() {
        int n = 0;
        for (Flow f : flows) {
            if (!f.closed) {
                n++;
            }
        }
        return n;
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
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                continue; // closed, or a transient accept failure
            }
            Socket server = new Socket();
            try {
                int port = targetPort;
                if (port <= 0) {
                    throw new IOException("no target yet");
                }
                server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                Flow flow = new Flow(client, server);
                flows.removeIf(f -> f.closed);
                flows.add(flow);
                flow.start();
            } catch (IOException e) {
                // The node is down: refuse like it would (RST), never leave the client hanging.
                resetQuietly(client);
                closeQuietly(server);
            }
        }
    }

    private static void resetQuietly(Socket s) {
        try {
            s.setSoLinger(true, 0);
        } catch (IOException e) {
            // closing anyway
        }
        closeQuietly(s);
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    /** One client connection and its connection to the node. */
    private final class Flow {
        final Socket client;
        final Socket server;
        volatile boolean stalled;
        volatile boolean closed;

        Flow(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }

        boolean from(String host) {
            return client.getInetAddress().getHostAddress().equals(host);
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
                                if (upstream || !stalled) {
                                    out.write(buf, 0, n);
                                    out.flush();
                                }
                            }
                        } catch (IOException e) {
                            // the flow ended
                        }
                        if (upstream || !stalled) {
                            close();
                        }
                    },
                    "node-proxy-flow");
            t.setDaemon(true);
            t.start();
        }

        void reset() {
            resetQuietly(client);
            close();
        }

        void close() {
            closed = true;
            closeQuietly(client);
            closeQuietly(server);
        }
    }
}
