package dibs;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tells leases that keep-alive found their lock lost. Keep-alive runs in Rust and never calls
 * into the JVM; one daemon platform thread here waits in {@link NativeLib#awaitLost} and, in
 * plain Java, runs what each watched lease does on a loss (complete its future, interrupt its
 * holder). Started by the first lease watched.
 */
final class LostWatch {
    private static final Map<Long, Runnable> WATCHED = new ConcurrentHashMap<>();
    private static boolean started; // guarded by LostWatch.class

    private LostWatch() {}

    /**
     * Runs {@code onLost} once, on the watcher's thread, if lease {@code id}'s lock is found lost.
     * A lease without keep-alive is not kept here, and starts no thread: nothing watches it.
     */
    static void watch(long id, Runnable onLost) {
        WATCHED.put(id, onLost); // before Rust can tell of a loss
        if (NativeLib.watchLost(id)) {
            start(); // a loss told before it runs waits in Rust's queue
        } else {
            WATCHED.remove(id);
        }
    }

    /** The lease {@code id} is released: a loss found from now on is no one's news. */
    static void unwatch(long id) {
        WATCHED.remove(id);
    }

    private static synchronized void start() {
        if (started) {
            return;
        }
        Thread t = new Thread(LostWatch::run, "dibs-lost-watch");
        t.setDaemon(true);
        t.start();
        started = true;
    }

    private static void run() {
        while (true) {
            long[] lost;
            try {
                lost = NativeLib.awaitLost(1000);
            } catch (RuntimeException | Error e) {
                Log.warning("dibs: waiting for lost locks failed; trying again in a second", e);
                pause();
                continue;
            }
            for (long id : lost) {
                Runnable onLost = WATCHED.remove(id);
                if (onLost != null) {
                    try {
                        onLost.run();
                    } catch (RuntimeException | Error e) {
                        Log.warning("dibs: telling a lease of its lost lock threw; ignored", e);
                    }
                }
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(1000);
        } catch (InterruptedException e) {
            // a daemon thread: nobody interrupts it to stop it
        }
    }
}
