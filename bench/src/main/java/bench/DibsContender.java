package bench;

import dibs.Dibs;
import java.util.Map;

/**
 * dibs as a service calls it: {@code Dibs.execute(uri, name, 10, 0, task)}, Java to JNI to Rust;
 * with its defaults, or with the run history off ({@link #HISTORY_OFF}), to show what recording
 * each run costs.
 */
final class DibsContender implements Contender {
    static final String NAME = "dibs";
    static final String HISTORY_OFF = "dibs (history off)";
    private static final Runnable NO_OP = () -> {};

    /** The property that turns the run history off (the conn key {@code history} false). */
    static final String HISTORY_PROPERTY = "bench.dibs.history";

    private final String name;
    private final Object conn;

    /** dibs with its defaults, unless the {@value #HISTORY_PROPERTY} property is false. */
    DibsContender(String host, int port) {
        this(host, port, !"false".equals(System.getProperty(HISTORY_PROPERTY)), NAME);
    }

    DibsContender(String host, int port, boolean history, String name) {
        String uri = "redis://" + host + ":" + port;
        this.name = name;
        // Only when asked: a build from before the run history refuses the key.
        this.conn = history ? uri : Map.of("uri", uri, "history", false);
    }

    @Override
    public String name() {
        return name;
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
