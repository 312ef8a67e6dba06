package dibs.demo;

import dibs.testsupport.RedisServer;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Shows dibs at work: starts a throwaway redis-server, races three {@link TickInstance} JVMs on
 * ten one-second ticks, and prints who won each tick and a summary. Run it with
 * {@code scripts/demo.sh}. Args: {@code [instances] [ticks]} (default 3 and 10). Exits 1 if a
 * tick ran twice or not at all.
 */
public final class Demo {
    private Demo() {}

    public static void main(String[] args) throws Exception {
        int instances = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int ticks = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        boolean ok;
        try (RedisServer redis = RedisServer.launch()) {
            System.out.println("redis-server on " + redis.uri() + "; racing " + instances + " JVMs on " + ticks
                    + " ticks (each tick: Dibs.execute(uri, \"tick-<second>\", 5 s, 2 s, task))");
            TickRace.Result r = TickRace.run(redis.uri(), instances, ticks, 4);
            for (Map.Entry<Long, List<String>> e : r.winners.entrySet()) {
                List<String> w = e.getValue();
                List<String> lost = r.skipped.getOrDefault(e.getKey(), List.of());
                String mark = w.size() == 1 ? "" : w.isEmpty() ? "   <-- MISSED" : "   <-- OVERLAP";
                System.out.println("tick " + e.getKey() + " (" + Instant.ofEpochSecond(e.getKey()) + "): ran on "
                        + (w.isEmpty() ? "nobody" : String.join(", ", w))
                        + (lost.isEmpty() ? "" : "; skipped on " + String.join(", ", lost)) + mark);
            }
            System.out.println("summary: ticks=" + r.ticks + " executions=" + r.executions()
                    + " overlaps=" + r.overlaps() + " missed=" + r.missed()
                    + " exit codes=" + r.exitCodes);
            ok = r.overlaps() == 0 && r.missed() == 0 && r.exitCodes.stream().allMatch(c -> c == 0);
            if (!ok) {
                System.out.println("instance output:");
                r.output.forEach(line -> System.out.println("  " + line));
            }
        }
        System.exit(ok ? 0 : 1);
    }
}
