package dibs.demo;

import dibs.Dibs;
import java.time.Duration;
import java.time.Instant;

/**
 * One instance of a service whose scheduler fires every second: for each tick it tries
 * {@code Dibs.execute} on the lock {@code tick-<epochSecond>} and prints {@code RAN <tick> <id>}
 * when it won. Several of these, started as separate JVMs, must print exactly one RAN per tick.
 *
 * <p>Args: {@code <redis-uri> <instance-id> <ticks> [<first-tick-epoch-second>]}. Without the
 * last argument the first tick is the next whole second. A tick that this instance reaches more
 * than a second late is skipped (printed as {@code LATE}), as a real scheduler would coalesce it:
 * atLeast (2 s) only guards against skew smaller than itself.
 *
 * <p>With a fifth argument {@code <max-skew-ms>}, the instance's scheduler fires each tick up to
 * that late (a random delay per instance and tick), and it runs each tick twice over: through
 * {@code executeOnce("skewed", tick, ...)}, printing {@code RAN}, and through the trap
 * {@code execute("direct-" + tick, 10 s, atLeast 0, ...)}, printing {@code DIRECT <tick> <id>}.
 */
public final class TickInstance {
    private TickInstance() {}

    public static void main(String[] args) throws InterruptedException {
        if (args.length < 3) {
            System.err.println("usage: TickInstance <redis-uri> <instance-id> <ticks> [<first-tick-epoch-second>]");
            System.exit(2);
        }
        String uri = args[0];
        String id = args[1];
        int ticks = Integer.parseInt(args[2]);
        long first = args.length > 3 ? Long.parseLong(args[3]) : Instant.now().getEpochSecond() + 1;
        long maxSkewMs = args.length > 4 ? Long.parseLong(args[4]) : -1;
        java.util.Random skews = new java.util.Random(id.hashCode());
        System.out.println("READY " + id + " " + first + " " + ticks);
        for (long tick = first; tick < first + ticks; tick++) {
            long wait = tick * 1000 - System.currentTimeMillis();
            if (wait > 0) {
                Thread.sleep(wait);
            } else if (wait < -1000) {
                System.out.println("LATE " + tick + " " + id);
                continue;
            }
            long t = tick;
            if (maxSkewMs >= 0) {
                Thread.sleep((long) (skews.nextDouble() * maxSkewMs));
                if (!Dibs.executeOnce(
                        uri,
                        "skewed",
                        Long.toString(t),
                        Duration.ofSeconds(10),
                        () -> System.out.println("RAN " + t + " " + id))) {
                    System.out.println("SKIPPED " + t + " " + id);
                }
                Dibs.execute(
                        uri,
                        "direct-" + t,
                        Duration.ofSeconds(10),
                        Duration.ZERO,
                        () -> System.out.println("DIRECT " + t + " " + id));
                System.out.flush();
                continue;
            }
            boolean won = Dibs.execute(
                    uri,
                    "tick-" + t,
                    Duration.ofSeconds(5),
                    Duration.ofSeconds(2),
                    () -> System.out.println("RAN " + t + " " + id));
            if (!won) {
                System.out.println("SKIPPED " + t + " " + id);
            }
            System.out.flush();
        }
        System.out.println("DONE " + id);
    }
}
