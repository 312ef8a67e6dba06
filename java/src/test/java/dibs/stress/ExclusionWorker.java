package dibs.stress;

import dibs.Dibs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * One process of the cross-process, cross-language mutual exclusion stress test
 * ({@code ExclusionStressTest}); {@code examples/exclusion_worker.rs} is its Rust twin and
 * behaves the same.
 *
 * <p>Args: {@code <redis-uri> <dir> <name,name,...> <threads> <attempts-per-thread>}.
 *
 * <p>It prints {@code READY} once the native library is loaded and a connection is up, then
 * waits until the file {@code <dir>/go} exists (the start barrier shared by every process).
 * Each thread then makes its quota of {@code Dibs.execute} calls, each on a lock name picked at
 * random from the list, with atMost 10 s and atLeast 0, so a holder releases at once and the
 * others compete often. The task is the overlap detector, which works across processes: it
 * creates {@code <dir>/<name>.held} exclusively, sleeps {@link #HOLD_NANOS}, and deletes it. If
 * the file already exists, another holder of the same lock is inside its task right now: an
 * overlap, counted (the run goes on).
 *
 * <p>Any exception is an error, counted, and so is any WARNING dibs logs (a failed release, or
 * a lock that had expired before its release: neither can happen here with a 10 s atMost).
 * The last line is {@code RESULT attempts=.. wins=.. skips=.. overlaps=.. errors=.. startMs=..
 * endMs=..} (the times in Unix milliseconds). Exit status: 0 when clean, 1 with overlaps or
 * errors, 2 when the run could not happen at all.
 */
public final class ExclusionWorker {
    /** How long a winner stays inside its task: the window in which an overlap shows. */
    static final long HOLD_NANOS = TimeUnit.MICROSECONDS.toNanos(300);

    static final Duration AT_MOST = Duration.ofSeconds(10);
    static final Duration AT_LEAST = Duration.ZERO;
    /** How long to wait for the go file before giving up. */
    static final long GO_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(120);
    /** Errors whose message is printed; the rest are only counted. */
    private static final int ERRORS_SHOWN = 5;

    private final AtomicLong attempts = new AtomicLong();
    private final AtomicLong wins = new AtomicLong();
    private final AtomicLong skips = new AtomicLong();
    private final AtomicLong overlaps = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();

    private final String uri;
    private final Path dir;
    private final String[] names;

    private ExclusionWorker(String uri, Path dir, String[] names) {
        this.uri = uri;
        this.dir = dir;
        this.names = names;
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 5) {
            System.err.println(
                    "usage: ExclusionWorker <redis-uri> <dir> <name,name,...> <threads> <attempts-per-thread>");
            System.exit(2);
        }
        ExclusionWorker worker = new ExclusionWorker(args[0], Paths.get(args[1]), args[2].split(","));
        int threads = Integer.parseInt(args[3]);
        int perThread = Integer.parseInt(args[4]);
        System.exit(worker.run(threads, perThread));
    }

    private int run(int threads, int perThread) throws InterruptedException {
        Logger dibsLog = Logger.getLogger("dibs"); // a strong reference while the handler is on it
        Handler warnings = new WarningCounter();
        dibsLog.addHandler(warnings);
        try {
            // Load the native library and open a connection before the start line.
            Dibs.execute(uri, "exclusion-warmup-" + ProcessHandle.current().pid(), AT_MOST, AT_LEAST, () -> {});
        } catch (RuntimeException e) {
            System.out.println("FAILED warm-up: " + e);
            return 2;
        }

        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread thread = new Thread(
                    () -> {
                        try {
                            go.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            error(e);
                            return;
                        }
                        for (int i = 0; i < perThread; i++) {
                            attempt(names[ThreadLocalRandom.current().nextInt(names.length)]);
                        }
                    },
                    "exclusion-" + t);
            thread.start();
            workers.add(thread);
        }

        System.out.println("READY");
        System.out.flush();
        if (!awaitGoFile()) {
            System.out.println("FAILED no " + dir.resolve("go") + " within "
                    + TimeUnit.NANOSECONDS.toSeconds(GO_TIMEOUT_NANOS) + " s");
            return 2; // main's System.exit ends the waiting threads
        }
        long startMs = System.currentTimeMillis();
        go.countDown();
        for (Thread thread : workers) {
            thread.join();
        }
        long endMs = System.currentTimeMillis();
        dibsLog.removeHandler(warnings);

        System.out.println("RESULT attempts=" + attempts + " wins=" + wins + " skips=" + skips + " overlaps=" + overlaps
                + " errors=" + errors + " startMs=" + startMs + " endMs=" + endMs);
        System.out.flush();
        return overlaps.get() == 0 && errors.get() == 0 ? 0 : 1;
    }

    private void attempt(String name) {
        attempts.incrementAndGet();
        try {
            boolean won = Dibs.execute(uri, name, AT_MOST, AT_LEAST, () -> critical(name));
            (won ? wins : skips).incrementAndGet();
        } catch (RuntimeException | Error e) {
            error(e);
        }
    }

    /** The task: proves no one else is inside a task of the same lock name. */
    private void critical(String name) {
        Path held = dir.resolve(name + ".held");
        try {
            Files.createFile(held);
        } catch (FileAlreadyExistsException e) {
            overlaps.incrementAndGet();
            return; // the file is the other holder's: theirs to delete
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            pause(HOLD_NANOS);
        } finally {
            try {
                Files.delete(held);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private boolean awaitGoFile() throws InterruptedException {
        Path goFile = dir.resolve("go");
        long deadline = System.nanoTime() + GO_TIMEOUT_NANOS;
        while (!Files.exists(goFile)) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }

    /** Sleeps at least {@code nanos}; parkNanos may return early. */
    private static void pause(long nanos) {
        long until = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = until - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    private void error(Throwable e) {
        if (errors.incrementAndGet() <= ERRORS_SHOWN) {
            System.out.println("ERROR " + e);
            System.out.flush();
        }
    }

    /** Counts dibs's WARNINGs as errors: each is a release that failed or found the lock gone. */
    private final class WarningCounter extends Handler {
        WarningCounter() {
            setLevel(Level.WARNING);
        }

        @Override
        public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                error(new IllegalStateException("dibs logged " + record.getLevel() + ": " + record.getMessage()));
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }
}
