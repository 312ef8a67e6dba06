package dibs.testsupport;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Helpers shared by the tests. */
public final class TestSupport {
    private static final AtomicInteger COUNTER = new AtomicInteger();

    private TestSupport() {}

    /**
     * The repository root, where Cargo's target/ (the CLI, the Rust workers) and
     * target/reliability are: the "dibs.root" system property, which the Maven and Gradle builds
     * set for the library (Surefire's own "basedir" is the module's directory, java/), else the
     * first directory up from the working directory that holds the Cargo workspace.
     */
    public static java.nio.file.Path repositoryRoot() {
        String root = System.getProperty("dibs.root");
        if (root != null) {
            return java.nio.file.Paths.get(root);
        }
        java.nio.file.Path dir = java.nio.file.Paths.get("").toAbsolutePath();
        for (java.nio.file.Path up = dir; up != null; up = up.getParent()) {
            if (java.nio.file.Files.exists(up.resolve("Cargo.toml"))
                    && java.nio.file.Files.isDirectory(up.resolve("crates"))) {
                return up;
            }
        }
        return dir;
    }

    /**
     * A lock name no other test uses, and never a tick's name: "p" before the pid, because a pid
     * of 1900 to 2999 and a count of 10 to 12 read as a year and month ("win-2345-10"), and the
     * advice for a tick released at once was then logged (a CI run failed on it).
     */
    public static String uniqueName(String base) {
        return base + "-p" + ProcessHandle.current().pid() + "-" + COUNTER.incrementAndGet();
    }

    /** A URI whose port nothing listens on. */
    public static String closedPortUri() throws IOException {
        return "redis://127.0.0.1:" + RedisServer.freePort();
    }

    /** Throws any Throwable, checked or not, without declaring it. */
    @SuppressWarnings("unchecked")
    public static <E extends Throwable> RuntimeException sneak(Throwable t) throws E {
        throw (E) t;
    }

    public static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Captures what dibs logs through System.getLogger("dibs"), which the JDK backs with the
     * java.util.logging logger of the same name. The JVM is shared by many tests: a lease an
     * earlier test dropped may be released (and warned about) by the cleaner at any time, so the
     * "about" views keep only what concerns one lock: logged on the thread that made the capture,
     * or naming the lock.
     */
    public static final class LogCapture extends Handler implements AutoCloseable {
        private final Logger logger = Logger.getLogger("dibs"); // strong reference while capturing
        private final Thread owner = Thread.currentThread();
        private final List<LogRecord> records = new ArrayList<>();
        private final List<Boolean> onOwner = new ArrayList<>();

        public LogCapture() {
            setLevel(Level.ALL);
            logger.addHandler(this);
        }

        @Override
        public synchronized void publish(LogRecord record) {
            records.add(record); // a JUL handler runs on the thread that logs
            onOwner.add(Thread.currentThread() == owner);
        }

        /** Every record, from any thread: for failure messages. */
        public synchronized List<String> messages() {
            List<String> out = new ArrayList<>();
            for (LogRecord r : records) {
                out.add(r.getLevel() + " " + r.getMessage());
            }
            return out;
        }

        /** The records logged on the capturing thread or naming lock {@code name} (quoted). */
        public synchronized List<String> messagesAbout(String name) {
            List<String> out = new ArrayList<>();
            for (int i = 0; i < records.size(); i++) {
                LogRecord r = records.get(i);
                if (onOwner.get(i) || names(r, name)) {
                    out.add(r.getLevel() + " " + r.getMessage());
                }
            }
            return out;
        }

        public synchronized List<String> warnings() {
            List<String> out = new ArrayList<>();
            for (LogRecord r : records) {
                if (r.getLevel() == Level.WARNING) {
                    out.add(r.getMessage());
                }
            }
            return out;
        }

        /** The WARNING messages that name the lock {@code name} (quoted, as dibs quotes it). */
        public synchronized List<String> warningsAbout(String name) {
            List<String> out = new ArrayList<>();
            for (LogRecord r : records) {
                if (r.getLevel() == Level.WARNING && names(r, name)) {
                    out.add(r.getMessage());
                }
            }
            return out;
        }

        private static boolean names(LogRecord r, String name) {
            return String.valueOf(r.getMessage()).contains("'" + name + "'");
        }

        @Override
        public void flush() {}

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }
}
