package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.demo.TickRace;
import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Separate JVM processes racing on the same ticks: exactly one runs each tick. */
@Tag("slow")
@Timeout(120)
class MultiJvmTest {
    private static final int TICKS = 10;

    @Test
    void twoJvmsRacingOnTenTicksRunEachTickExactlyOnce() throws IOException, InterruptedException {
        try (RedisServer redis = RedisServer.launch()) {
            TickRace.Result r = TickRace.run(redis.uri(), 2, TICKS, 3);
            String output = String.join("\n", r.output);
            assertEquals(List.of(0, 0), r.exitCodes, output);
            assertEquals(TICKS, r.winners.size(), "only the planned ticks ran: " + r.winners + "\n" + output);
            for (Map.Entry<Long, List<String>> e : r.winners.entrySet()) {
                assertEquals(1, e.getValue().size(), "tick " + e.getKey() + " ran on " + e.getValue() + "\n" + output);
            }
            int skips = r.skipped.values().stream().mapToInt(List::size).sum();
            assertTrue(skips >= TICKS / 2, "both JVMs should race on most ticks, skips=" + skips + "\n" + output);
            assertFalse(
                    output.contains("WARNING in native method") || output.contains("FATAL ERROR in native method"),
                    "JNI check failed in a child JVM:\n" + output);
        }
    }
}
