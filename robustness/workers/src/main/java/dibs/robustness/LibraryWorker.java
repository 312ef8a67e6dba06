package dibs.robustness;

import dibs.Dibs;
import dibs.DibsClient;
import dibs.DibsOptions;
import java.time.Duration;
import java.util.List;

/**
 * A worker of the robustness harness on the plain library: one {@link DibsClient}, and four
 * front ends ({@link LibraryFrontEnds}) that call it on their own schedules, reporting every call,
 * run, fenced write and outcome to the harness's ledger ({@link Ledger}). The harness starts
 * several, faults them and their Redis, and audits the ledger afterwards.
 *
 * <p>Args: {@code <instance-id> <redis-uri> <ledger-url> <seconds> <seed>}. The URI is any that
 * dibs takes: {@code redis://h:p}, {@code redis+sentinel://h1:p1,h2:p2,h3:p3/mymaster},
 * {@code redis+cluster://h1:p1,h2:p2,...}. The client has keep-alive on (the lease front end holds
 * its lock past atMost) and 1 s connect and read timeouts, so that a fault shows within a tick.
 *
 * <p>Stdout: {@code READY <id>} once the client is built, then the fires of {@code <seconds>}
 * epoch seconds from the next one on, aligned to this instance's wall clock (a clock the harness
 * may have shifted); then up to 30 s for the calls in flight ({@code STUCK <id> <front end> <n>}
 * for those still running), {@code DONE <id>}, and exit 0. dibs's log comes as
 * {@code LOG <epoch ms> <level> <message>}; a failed ledger event as {@code LEDGER-ERROR ...}.
 */
public final class LibraryWorker {
    /** How long the calls in flight may take to end after the last fire. */
    private static final long DRAIN_MS = 30_000;

    private LibraryWorker() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: LibraryWorker <instance-id> <redis-uri> <ledger-url> <seconds> <seed>");
            System.exit(2);
        }
        String id = args[0];
        String uri = args[1];
        Ledger ledger = new Ledger(args[2]);
        int seconds = Integer.parseInt(args[3]);
        long seed = Long.parseLong(args[4]);
        Out.routeDibsLog();

        DibsOptions options = DibsOptions.builder()
                .uri(uri)
                .instanceId(id)
                .keepAlive(true)
                .readTimeout(Duration.ofSeconds(1))
                .connectTimeout(Duration.ofSeconds(1))
                .build();
        DibsClient client = Dibs.client(options);
        Out.line("READY " + id);

        List<FrontEnd> frontEnds = new LibraryFrontEnds(client, ledger, id).all(seed);
        long first = System.currentTimeMillis() / 1000 + 1;
        for (long second = first; second < first + seconds; second++) {
            // Each second's fires are scheduled at its start, from the wall clock read then: a
            // pool's own delays run on the monotonic clock, which a step of the wall clock
            // (the harness's clock faults) would not move.
            sleepUntil(second * 1000);
            for (FrontEnd frontEnd : frontEnds) {
                if (frontEnd.firesAt(second)) {
                    frontEnd.schedule(second);
                }
            }
        }
        frontEnds.forEach(FrontEnd::shutdown);
        long deadline = System.currentTimeMillis() + FrontEnd.MAX_LATE_MS + DRAIN_MS;
        boolean drained = true;
        for (FrontEnd frontEnd : frontEnds) {
            if (!frontEnd.awaitUntil(deadline)) {
                drained = false;
                Out.line("STUCK " + id + " " + frontEnd.name + " " + frontEnd.active());
            }
        }
        if (drained) {
            client.close(); // not under a call still stuck in dibs: exit says goodbye for it
        }
        Out.line("DONE " + id);
        System.exit(0);
    }

    /** Sleeps until the wall clock reads {@code epochMs}. */
    private static void sleepUntil(long epochMs) throws InterruptedException {
        for (long left = epochMs - System.currentTimeMillis(); left > 0; left = epochMs - System.currentTimeMillis()) {
            Thread.sleep(left);
        }
    }
}
