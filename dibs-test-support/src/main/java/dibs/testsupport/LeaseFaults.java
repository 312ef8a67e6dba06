package dibs.testsupport;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * The faults of the "released exactly once" tests (issue 17), for every front end's module:
 * how the JVM fails ({@link Kind}), where ({@link Point}), a java.util.logging handler on
 * "dibs" that fails as log4j2's {@code ignoreExceptions=false} appenders do, and the count of a
 * process's native threads by name, and a listener that fails at its points.
 */
public final class LeaseFaults {
    private LeaseFaults() {}

    /** How the JVM fails. */
    public enum Kind {
        ERROR,
        EXCEPTION,
        INTERRUPT
    }

    /** Where, between the native acquire and the native release (attempt: just before). */
    public enum Point {
        /** The listener's attempt. */
        ATTEMPT,
        /** Allocating the lease, right after the native acquire won (injected). */
        LEASE_MADE,
        /** Logging keep-alive's warning about the acquire's atMost. */
        ACQUIRE_WARNING,
        /** The listener's acquired. */
        ACQUIRED,
        /** Logging that the listener's acquired threw. */
        ACQUIRED_LOGGED,
        /** The task. */
        TASK,
        /** The listener's finished. */
        FINISHED,
        /** A virtual thread handing the acquire and the release to an offload thread (injected). */
        OFFLOAD_SUBMIT,
        /** Logging the release's warning (the lock had expired). */
        RELEASE_WARNING,
        /** The listener's released or expired. */
        ENDED,
    }

    public static final class InjectedError extends Error {
        private static final long serialVersionUID = 1L;

        public InjectedError(String where) {
            super("injected at " + where);
        }
    }

    public static final class InjectedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public InjectedException(String where) {
            super("injected at " + where);
        }
    }

    /** One case: where, how, and the first object thrown (none for an interrupt). */
    public static final class Fault {
        public final Point point;
        public final Kind kind;
        private final AtomicReference<Throwable> thrown = new AtomicReference<>();
        private volatile boolean fired;

        public Fault(Point point, Kind kind) {
            this.point = point;
            this.kind = kind;
        }

        /** Fails here if {@code here} is this case's point. */
        public void at(Point here) {
            if (here != point) {
                return;
            }
            fired = true;
            switch (kind) {
                case ERROR: {
                    InjectedError e = new InjectedError(here.name());
                    thrown.compareAndSet(null, e);
                    throw e;
                }
                case EXCEPTION: {
                    InjectedException e = new InjectedException(here.name());
                    thrown.compareAndSet(null, e);
                    throw e;
                }
                default:
                    Thread.currentThread().interrupt();
            }
        }

        /** {@link #at} for a point named as another enum names it (dibs's FaultInjection.Point). */
        public void at(String here) {
            at(Point.valueOf(here));
        }

        /** Whether the case's point was reached: a case that never fails there proves nothing. */
        public boolean fired() {
            return fired;
        }

        public Throwable thrown() {
            return thrown.get();
        }

        /** Whether the locked call itself must fail, with {@link #thrown()}. */
        public boolean failsTheCall() {
            return kind != Kind.INTERRUPT && (point == Point.TASK || point == Point.LEASE_MADE);
        }

        /** Whether the point needs a lock that expires while its task runs (no keep-alive). */
        public boolean expires() {
            return point == Point.RELEASE_WARNING;
        }

        @Override
        public String toString() {
            return point + " " + kind;
        }
    }

    /**
     * A listener of type {@code type} (dibs's {@code DibsListener}, which this module cannot
     * name) that fails at {@code fault}'s listener points: attempt, acquired (for
     * {@link Point#ACQUIRED_LOGGED} it throws so that dibs logs it), finished, released and
     * expired. Every other event is heard and ignored.
     */
    public static <L> L failingListener(Class<L> type, Fault fault) {
        Object listener = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, method, args) -> {
            switch (method.getName()) {
                case "attempt":
                    fault.at(Point.ATTEMPT);
                    return null;
                case "acquired":
                    fault.at(Point.ACQUIRED);
                    if (fault.point == Point.ACQUIRED_LOGGED) {
                        throw new IllegalStateException("a listener that throws, so that the logger is called");
                    }
                    return null;
                case "finished":
                    fault.at(Point.FINISHED);
                    return null;
                case "released":
                case "expired":
                    fault.at(Point.ENDED);
                    return null;
                case "toString":
                    return "failing listener at " + fault;
                case "hashCode":
                    return System.identityHashCode(self);
                case "equals":
                    return self == args[0];
                default:
                    return null;
            }
        });
        return type.cast(listener);
    }

    /** Adds a handler to the "dibs" logger that fails at {@code fault}'s logging points; close removes it. */
    public static AutoCloseable failingLogger(Fault fault) {
        Logger logger = Logger.getLogger("dibs");
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                String m = String.valueOf(record.getMessage());
                if (m.contains("with keep-alive, atMost")) {
                    fault.at(Point.ACQUIRE_WARNING);
                } else if (m.contains("DibsListener.acquired threw")) {
                    fault.at(Point.ACQUIRED_LOGGED);
                } else if (m.contains("was no longer ours when it was released")) {
                    fault.at(Point.RELEASE_WARNING);
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        handler.setLevel(Level.ALL);
        logger.addHandler(handler);
        return () -> logger.removeHandler(handler);
    }

    /** This process's threads (native ones too), by id, with their names, from /proc/self/task. */
    private static Map<String, String> threads() throws IOException {
        Map<String, String> names = new TreeMap<>();
        try (Stream<Path> tasks = Files.list(Paths.get("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    names.put(t.getFileName().toString(), new String(Files.readAllBytes(t.resolve("comm"))).trim());
                } catch (IOException e) {
                    // the thread ended while listed
                }
            }
        }
        return names;
    }

    /** The names of this process's threads (native ones too), sorted. */
    public static List<String> threadNames() throws IOException {
        List<String> names = new ArrayList<>(threads().values());
        Collections.sort(names);
        return names;
    }

    /** The ids of this process's threads named {@code name}. */
    public static Set<String> threadIdsNamed(String name) throws IOException {
        Set<String> ids = new TreeSet<>();
        threads().forEach((id, n) -> {
            if (n.equals(name)) {
                ids.add(id);
            }
        });
        return ids;
    }

    /**
     * The threads named {@code name} that are not among {@code before}, once there are none, or
     * after 5 s: what a call left behind, whatever threads of earlier calls end meanwhile.
     */
    public static Set<String> settledNewThreadsNamed(String name, Set<String> before)
            throws IOException, InterruptedException {
        long until = System.nanoTime() + 5_000_000_000L;
        Set<String> left = threadIdsNamed(name);
        left.removeAll(before);
        while (!left.isEmpty() && System.nanoTime() < until) {
            Thread.sleep(20);
            left = threadIdsNamed(name);
            left.removeAll(before);
        }
        return left;
    }

    /** Busy-waits {@code ms}: not Thread.sleep, which an interrupt case would end at once. */
    public static void pause(long ms) {
        long until = System.nanoTime() + ms * 1_000_000;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }
}
