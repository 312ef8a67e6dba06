package bench;

import dibs.Dibs;

/** dibs as a service calls it: {@code Dibs.execute(uri, name, 10, 0, task)}, Java to JNI to Rust. */
final class DibsContender implements Contender {
    static final String NAME = "dibs";
    private static final Runnable NO_OP = () -> {};

    private final String uri;

    DibsContender(String host, int port) {
        this.uri = "redis://" + host + ":" + port;
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
        return () -> Dibs.execute(uri, lockName, AT_MOST_SEC, 0, NO_OP);
    }

    /** dibs keeps one pool per conn for the life of the process: nothing to close. */
    @Override
    public void close() {}
}
