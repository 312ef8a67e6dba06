package bench;

import dibs.Dibs;
import java.util.Map;

/** dibs as a service calls it: {@code Dibs.execute(uri, name, 10, 0, task)}, Java to JNI to Rust. */
final class DibsContender implements Contender {
    static final String NAME = "dibs";
    private static final Runnable NO_OP = () -> {};

    /** The property that turns the run history off (the conn key {@code history} false). */
    static final String HISTORY_PROPERTY = "bench.dibs.history";

    private final Object conn;

    DibsContender(String host, int port) {
        String uri = "redis://" + host + ":" + port;
        // Only when asked: a build from before the run history refuses the key.
        this.conn = "false".equals(System.getProperty(HISTORY_PROPERTY)) ? Map.of("uri", uri, "history", false) : uri;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String key(String lockName) {
        return "dibs:" + lockName;
    }

    @Override
    public Caller caller(String lockName) {
        return () -> Dibs.execute(conn, lockName, AT_MOST_SEC, 0, NO_OP);
    }

    /** dibs keeps one pool per conn for the life of the process: nothing to close. */
    @Override
    public void close() {}
}
