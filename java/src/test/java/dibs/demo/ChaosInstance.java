package dibs.demo;

import dibs.Dibs;
import dibs.DibsClient;
import dibs.DibsListener;
import dibs.DibsOptions;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * One instance of the chaos run (issue 18, {@code ChaosRunTest}): a service whose scheduler fires
 * every one-second tick (tick id = epoch second), each up to {@code maxSkewMs} late, and calls
 * {@code executeOnce("chaos-job", tick, 30 s, task)} through Sentinel. Ticks fire on a pool of
 * threads, so a call stuck in a fault does not hold back the next tick.
 *
 * <p>The task records its run outside Redis, before it returns: it appends
 * {@code <tick> <instance> <fence> <callStartMs> <taskStartMs>} to {@code <runs-file>} and syncs it.
 * Every call's outcome goes to stdout:
 * {@code OUT <tick> <instance> RAN|SKIPPED|UNCONFIRMED|ERROR <fence|-> <callStartMs> <callEndMs> [detail]},
 * and what dibs logs as {@code LOG <ms> <level> <message>}.
 *
 * <p>Args: {@code <sentinels> <master-name> <instance-id> <durable: default|off|...> <first-tick>
 * <ticks> <max-skew-ms> <seed> <runs-file>}.
 */
public final class ChaosInstance {
    private ChaosInstance() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 9) {
            System.err.println("usage: ChaosInstance <sentinels> <master-name> <instance-id> <durable> "
                    + "<first-tick> <ticks> <max-skew-ms> <seed> <runs-file>");
            System.exit(2);
        }
        String sentinels = args[0];
        String masterName = args[1];
        String id = args[2];
        String durable = args[3];
        long first = Long.parseLong(args[4]);
        int ticks = Integer.parseInt(args[5]);
        int maxSkewMs = Integer.parseInt(args[6]);
        Random skews = new Random(Long.parseLong(args[7]) ^ id.hashCode());

        Logger dibsLog = Logger.getLogger("dibs");
        dibsLog.addHandler(new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.INFO.intValue()) {
                    print("LOG " + System.currentTimeMillis() + " " + r.getLevel() + " "
                            + String.valueOf(r.getMessage()).replace('\n', ' '));
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        });
        dibsLog.setUseParentHandlers(false); // no second copy on stderr

        ThreadLocal<boolean[]> unconfirmed = ThreadLocal.withInitial(() -> new boolean[1]);
        DibsOptions.Builder options = DibsOptions.builder()
                .sentinels(sentinels)
                .masterName(masterName)
                .readTimeout(Duration.ofMillis(1000))
                .connectTimeout(Duration.ofMillis(1000))
                .listener(new DibsListener() {
                    @Override
                    public void unconfirmed(String lockName) {
                        unconfirmed.get()[0] = true;
                    }
                });
        if (!durable.equals("default")) {
            options.durable(durable);
        }
        FileOutputStream runs = new FileOutputStream(args[8], true);
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(8);
        try (DibsClient client = Dibs.client(options.build())) {
            print("READY " + id + " " + first + " " + ticks + " durable=" + durable);
            for (long tick = first; tick < first + ticks; tick++) {
                long t = tick;
                long fireAt = tick * 1000 + skews.nextInt(maxSkewMs + 1);
                scheduler.schedule(
                        () -> fire(client, runs, unconfirmed, id, t),
                        fireAt - System.currentTimeMillis(),
                        TimeUnit.MILLISECONDS);
            }
            scheduler.shutdown();
            // Every call ends within a few timeouts; a stuck one is reported by its absence.
            if (!scheduler.awaitTermination(ticks + 60L, TimeUnit.SECONDS)) {
                print("STUCK " + id);
            }
        }
        print("DONE " + id);
        System.out.flush();
        System.exit(0);
    }

    private static void fire(
            DibsClient client, FileOutputStream runs, ThreadLocal<boolean[]> unconfirmed, String id, long tick) {
        long callStart = System.currentTimeMillis();
        long[] fence = {-1};
        unconfirmed.get()[0] = false;
        try {
            boolean ran = client.executeOnce("chaos-job", Long.toString(tick), Duration.ofSeconds(30), () -> {
                long taskStart = System.currentTimeMillis();
                fence[0] = Dibs.fencingToken();
                String line = tick + " " + id + " " + fence[0] + " " + callStart + " " + taskStart + "\n";
                synchronized (runs) {
                    try {
                        runs.write(line.getBytes(StandardCharsets.UTF_8));
                        runs.getFD().sync();
                    } catch (IOException e) {
                        throw new IllegalStateException("cannot record the run", e);
                    }
                }
            });
            long end = System.currentTimeMillis();
            String outcome = ran ? "RAN" : unconfirmed.get()[0] ? "UNCONFIRMED" : "SKIPPED";
            print("OUT " + tick + " " + id + " " + outcome + " " + (ran ? Long.toString(fence[0]) : "-") + " "
                    + callStart + " " + end);
        } catch (RuntimeException e) {
            long end = System.currentTimeMillis();
            String message = String.valueOf(e.getMessage()).replace('\n', ' ');
            print("OUT " + tick + " " + id + " ERROR - " + callStart + " " + end + " "
                    + e.getClass().getSimpleName() + ": " + message);
        }
    }

    private static synchronized void print(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
