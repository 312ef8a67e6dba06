package dibs.robustness;

import dibs.Dibs;
import dibs.DibsCatchUp;
import dibs.DibsClient;
import dibs.spring.CatchUp;
import dibs.spring.DibsScheduledTick;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The starter's jobs of {@link SpringWorker}: {@code spring-once}, a cron every second whose tick
 * runs once across the instances, and {@code spring-catchup}, a cron every second with
 * {@link CatchUp} (policy all, 30 s), whose ticks that no instance ran in their time run once
 * later. Both report to the ledger as the library's front ends do; the tick is the starter's
 * name for it: a local date-time in {@link HarnessZone}, such as {@code 2026-12-07T10:15:02},
 * with its offset in the second pass of a fall-back ({@code 2026-12-07T10:15:02Z}).
 *
 * <p>Not proxied (ShedLock's job is a bean of its own): {@code DibsScheduledTick.catchUp()} finds
 * its {@code @Scheduled} method on the stack.
 */
@Component
public class SpringJobs {
    private final DibsClient dibs;
    private final Ledger ledger;
    private final String instance;
    private final Random onceWork;
    private final Random catchUpWork;
    /** The crons' zone (the scheduler's clock's): {@link HarnessZone}. */
    private final ZoneId zone;

    public SpringJobs(
            DibsClient dibs,
            Ledger ledger,
            @Value("${dibs.harness.instance}") String instance,
            @Value("${dibs.harness.seed:1}") long seed,
            @Value("${dibs.harness.dst-anchor}") long anchor) {
        this.dibs = dibs;
        this.ledger = ledger;
        this.instance = instance;
        this.onceWork = workTimes(seed, instance, "spring-once");
        this.catchUpWork = workTimes(seed, instance, "spring-catchup");
        this.zone = HarnessZone.register(anchor);
    }

    @Scheduled(cron = "* * * * * *")
    public void once() {
        String tick = DibsScheduledTick.current().orElseThrow();
        long due = dueOf(tick);
        String lock = "s-once@" + tick;
        long workMs = work(onceWork);
        Call call = Call.next(ledger, instance, "spring-once", "s-once");
        call.called(lock, tick, due);
        try {
            boolean ran = dibs.executeOnce(
                    "s-once",
                    tick,
                    Duration.ofSeconds(5),
                    () -> HarnessTask.run(call, lock, tick, due, Dibs.fencingToken(), workMs));
            call.outcome(lock, tick, due, ran ? "ran" : "skipped");
        } catch (Throwable e) {
            call.failed(lock, tick, due, e);
        }
    }

    // Every second, not every 2: Spring's CronExpression fires a step in the seconds field
    // irregularly across a DST change of a few seconds (docs/reliability.md, finding 9).
    @Scheduled(cron = "* * * * * *")
    @CatchUp(policy = "all", window = "PT30S")
    public void catchUp() {
        long workMs = work(catchUpWork);
        Call call = Call.next(ledger, instance, "spring-catchup", "s-catchup");
        DibsCatchUp ticks;
        try {
            ticks = DibsScheduledTick.catchUp();
        } catch (Throwable e) { // no tick to name: the call is the attempt to make them
            call.called("s-catchup", "", 0);
            call.failed("s-catchup", "", 0, e);
            return;
        }
        // Each tick's due time as the starter computed it (the fire time of the cron in UTC).
        Map<String, Long> dueByTick = new HashMap<>();
        ticks.ticks().forEach((due, name) -> dueByTick.put(name, due.toEpochMilli()));
        // The call's own tick: the one due now (or, in the run at start-up, the latest past one).
        String now = ticks.ticks().lastEntry().getValue();
        long due = dueByTick.get(now);
        String lock = "s-catchup@" + now;
        call.called(lock, now, due);
        try {
            List<String> ran = dibs.executeOnce(
                    "s-catchup",
                    ticks,
                    Duration.ofSeconds(5),
                    tick -> HarnessTask.run(
                            call,
                            "s-catchup@" + tick,
                            tick,
                            dueByTick.getOrDefault(tick, dueOf(tick)),
                            Dibs.fencingToken(),
                            workMs));
            call.outcome(lock, now, due, "ran:" + ran.size());
        } catch (Throwable e) {
            call.failed(lock, now, due, e);
        }
    }

    /** A job's work times: 50 to 300 ms, from the run's seed, this instance and the job. */
    static Random workTimes(long seed, String instance, String job) {
        return new Random(seed * 1_000_003L + (instance + "/" + job).hashCode());
    }

    static long work(Random times) {
        return 50 + times.nextInt(251);
    }

    /**
     * A starter tick's due time in epoch ms, as the harness reads its name (apart from dibs): a
     * local date-time in the crons' zone, the earlier instant where a fall-back repeats it (the
     * first pass keeps the plain name), or with its own offset (the repeat's); 0 for a name that
     * is neither.
     */
    long dueOf(String tick) {
        try {
            return LocalDateTime.parse(tick)
                    .atZone(zone)
                    .withEarlierOffsetAtOverlap()
                    .toInstant()
                    .toEpochMilli();
        } catch (DateTimeParseException local) {
            try {
                return OffsetDateTime.parse(tick).toInstant().toEpochMilli();
            } catch (DateTimeParseException offset) {
                return 0;
            }
        }
    }
}
