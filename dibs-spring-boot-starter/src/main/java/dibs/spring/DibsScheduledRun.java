package dibs.spring;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A run of a {@code @Scheduled} method on this thread, as the starter's scheduler
 * ({@link DibsTickScheduler}) runs it: what must be told when it ends, and how (its exception, or
 * none). dibs's listener hears nothing of a call that throws before its lock is won (an
 * unreachable Redis, an invalid name): {@link DibsObservations} ends such calls here, with the
 * exception the run threw.
 */
final class DibsScheduledRun {
    private static final ThreadLocal<DibsScheduledRun> CURRENT = new ThreadLocal<>();

    private final List<Consumer<Throwable>> atEnd = new ArrayList<>();

    private DibsScheduledRun() {}

    /** Runs {@code task} as a scheduled run; what was registered is told once it returned or threw. */
    static void run(Runnable task) {
        DibsScheduledRun outer = CURRENT.get();
        DibsScheduledRun run = new DibsScheduledRun();
        CURRENT.set(run);
        Throwable thrown = null;
        try {
            task.run();
        } catch (RuntimeException | Error e) {
            thrown = e;
            throw e;
        } finally {
            if (outer == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(outer);
            }
            for (Consumer<Throwable> end : run.atEnd) {
                end.accept(thrown);
            }
        }
    }

    /**
     * Has {@code end} told, with the run's exception or {@code null}, when the scheduled run on
     * this thread ends; nothing outside one.
     *
     * @return whether there is a scheduled run on this thread
     */
    static boolean atEnd(Consumer<Throwable> end) {
        DibsScheduledRun run = CURRENT.get();
        if (run == null) {
            return false;
        }
        run.atEnd.add(end);
        return true;
    }
}
