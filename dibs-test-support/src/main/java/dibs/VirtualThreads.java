package dibs;

import java.lang.reflect.Method;

/** Virtual threads for tests that compile for Java 11: started by reflection (Java 21+). */
public final class VirtualThreads {
    private VirtualThreads() {}

    /** Starts {@code task} on a new virtual thread. */
    public static Thread start(Runnable task) {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
            return (Thread) start.invoke(builder, task);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("no virtual threads on " + Runtime.version(), e);
        }
    }
}
