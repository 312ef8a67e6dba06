package dibs.robustness;

import dibs.Dibs;
import dibs.DibsCatchUp;
import dibs.DibsClient;
import dibs.DibsLease;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The four front ends of {@link LibraryWorker}, each one way of calling the plain library:
 * {@code execute} (a lock by name, with atLeast), {@code once} ({@code executeOnce} per tick),
 * {@code catchup} ({@code executeOnce} with {@link DibsCatchUp}) and {@code lease}
 * ({@code tryLock} held past its atMost by keep-alive). Each reports its call, runs and outcome
 * to the ledger; what dibs throws becomes the outcome {@code error:<ExceptionSimpleName>}.
 */
final class LibraryFrontEnds {
    /** Catch-up's window: the tick due now and the 14 even seconds before it. */
    static final int CATCH_UP_TICKS = 15;

    static final Duration LEASE_AT_MOST = Duration.ofMillis(1500);
    static final long LEASE_HOLD_MS = 2500;
    static final long LEASE_WRITE_EVERY_MS = 250;

    private final DibsClient client;
    private final Ledger ledger;
    private final String instance;

    LibraryFrontEnds(DibsClient client, Ledger ledger, String instance) {
        this.client = client;
        this.ledger = ledger;
        this.instance = instance;
    }

    /** @return the four front ends, on the run's {@code seed} */
    List<FrontEnd> all(long seed) {
        return List.of(execute(seed), once(seed), catchUp(seed), lease(seed));
    }

    /** Every second: the lock "h-exec" by name, atMost 4 s, atLeast 500 ms. */
    private FrontEnd execute(long seed) {
        return new FrontEnd("execute", 50, 300, seed, instance) {
            @Override
            boolean firesAt(long second) {
                return true;
            }

            @Override
            void fire(long second, long workMs) {
                Call call = Call.next(ledger, instance, name, "h-exec");
                call.called("h-exec", "", 0);
                try {
                    boolean ran = client.execute(
                            "h-exec",
                            Duration.ofSeconds(4),
                            Duration.ofMillis(500),
                            () -> HarnessTask.run(call, "h-exec", "", 0, Dibs.fencingToken(), workMs));
                    call.outcome("h-exec", "", 0, ran ? "ran" : "skipped");
                } catch (Throwable e) {
                    call.failed("h-exec", "", 0, e);
                }
            }
        };
    }

    /** Every second T: the tick T of "h-once", atMost 5 s. */
    private FrontEnd once(long seed) {
        return new FrontEnd("once", 50, 400, seed, instance) {
            @Override
            boolean firesAt(long second) {
                return true;
            }

            @Override
            void fire(long second, long workMs) {
                String tick = Long.toString(second);
                long due = second * 1000;
                String lock = "h-once@" + tick;
                Call call = Call.next(ledger, instance, name, "h-once");
                call.called(lock, tick, due);
                try {
                    boolean ran = client.executeOnce(
                            "h-once",
                            tick,
                            Duration.ofSeconds(5),
                            () -> HarnessTask.run(call, lock, tick, due, Dibs.fencingToken(), workMs));
                    call.outcome(lock, tick, due, ran ? "ran" : "skipped");
                } catch (Throwable e) {
                    call.failed(lock, tick, due, e);
                }
            }
        };
    }

    /**
     * Every even second T: "h-catchup" with policy ALL over T, T-2, ..., T-28 (the last, T, due
     * now), so that the ticks a fault kept every instance from running are run once afterwards.
     * One run in 8 outlasts the period (2.2 to 3 s): a later fire then looks back at its tick.
     */
    private FrontEnd catchUp(long seed) {
        return new FrontEnd("catchup", 50, 300, 8, seed, instance) {
            @Override
            boolean firesAt(long second) {
                return second % 2 == 0;
            }

            @Override
            void fire(long second, long workMs) {
                Map<Instant, String> ticks = new TreeMap<>();
                for (int k = 0; k < CATCH_UP_TICKS; k++) {
                    long tick = second - 2L * k;
                    ticks.put(Instant.ofEpochSecond(tick), Long.toString(tick));
                }
                String now = Long.toString(second);
                long due = second * 1000;
                String lock = "h-catchup@" + now;
                Call call = Call.next(ledger, instance, name, "h-catchup");
                call.called(lock, now, due);
                try {
                    List<String> ran = client.executeOnce(
                            "h-catchup",
                            DibsCatchUp.all(ticks),
                            Duration.ofSeconds(5),
                            tick -> HarnessTask.run(
                                    call,
                                    "h-catchup@" + tick,
                                    tick,
                                    Long.parseLong(tick) * 1000,
                                    Dibs.fencingToken(),
                                    workMs));
                    call.outcome(lock, now, due, "ran:" + ran.size());
                } catch (Throwable e) {
                    call.failed(lock, now, due, e);
                }
            }
        };
    }

    /**
     * Every third second: the lease "h-lease" for atMost 1.5 s, held 2.5 s with a write every
     * 250 ms, so that only keep-alive keeps it; a lease found lost stops writing.
     */
    private FrontEnd lease(long seed) {
        return new FrontEnd("lease", 0, 0, seed, instance) {
            @Override
            boolean firesAt(long second) {
                return second % 3 == 0;
            }

            @Override
            void fire(long second, long workMs) {
                Call call = Call.next(ledger, instance, name, "h-lease");
                call.called("h-lease", "", 0);
                Optional<DibsLease> got;
                try {
                    got = client.tryLock("h-lease", LEASE_AT_MOST, Duration.ZERO);
                } catch (Throwable e) {
                    call.failed("h-lease", "", 0, e);
                    return;
                }
                if (got.isEmpty()) {
                    call.outcome("h-lease", "", 0, "skipped");
                    return;
                }
                DibsLease lease = got.get();
                Throwable thrown = null;
                try {
                    hold(call, lease);
                } catch (Throwable e) {
                    thrown = e;
                } finally {
                    try {
                        // With the task's ending, so that the run history says how it ended.
                        lease.release(thrown);
                    } catch (Throwable e) {
                        Out.line("WORKER-ERROR lease release " + e);
                    }
                }
                if (thrown == null) {
                    call.outcome("h-lease", "", 0, "ran");
                } else {
                    call.failed("h-lease", "", 0, thrown);
                }
            }
        };
    }

    /** The lease's task: start, a write every 250 ms until 2.5 s (or the lock is lost), end. */
    private static void hold(Call call, DibsLease lease) {
        long token = lease.fencingToken();
        String run = call.runId("");
        call.event("start", "h-lease", "", 0, token, run, null);
        boolean ok = false;
        try {
            long start = System.currentTimeMillis();
            for (long at = 0; at <= LEASE_HOLD_MS; at += LEASE_WRITE_EVERY_MS) {
                // At fixed offsets from the start, so that slow ledger answers do not stretch the hold.
                HarnessTask.sleep(start + at - System.currentTimeMillis());
                if (lease.isLost()) {
                    call.event("lost", "h-lease", "", 0, token, run, null);
                    break;
                }
                call.event("write", "h-lease", "", 0, token, run, null);
            }
            ok = true;
        } finally {
            call.event("end", "h-lease", "", 0, token, run, ok ? "ok" : "threw");
        }
    }
}
