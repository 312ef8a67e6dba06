package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@link DibsClient#check}, the core's judge from Java (issue 45, 2): every bad duration refused
 * before any I/O naming itself, a job's standing as {@code dibs check} would exit, and each of the
 * border's standings a public one.
 */
class DibsCheckTest extends RedisTestBase {
    @Test
    void aBadQuestionIsRefusedNamingItsArgumentBeforeAnyIo() throws Exception {
        try (DibsClient client = Dibs.client(local().build())) {
            String[] named = {
                "within",
                "period",
                "grace",
                "minDuration",
                "maxDuration",
                "graceAfterStart",
                "budget",
                "grace",
                "expectedSince",
                "expectedSince",
                "budget"
            };
            Supplier<?>[] asks = {
                () -> client.check("job", DibsCheck.within(Duration.ZERO)),
                () -> client.check("job", DibsCheck.every(Duration.ofMillis(-5))),
                () -> client.check("job", DibsCheck.every(Duration.ofHours(1)).grace(Duration.ofSeconds(-1))),
                () -> client.check("job", DibsCheck.rulesOnly().minDuration(Duration.ZERO)),
                () -> client.check("job", DibsCheck.rulesOnly().maxDuration(Duration.ofSeconds(-1))),
                () -> client.check("job", DibsCheck.within(Duration.ofHours(1)).graceAfterStart(Duration.ZERO)),
                () -> client.check("job", DibsCheck.rulesOnly().scanBudget(Duration.ofHours(2))),
                // Found by the attack: a grace without a period was ignored, a start in the
                // future silenced the check, one beyond a long threw ArithmeticException.
                () -> client.check("job", DibsCheck.within(Duration.ofHours(1)).grace(Duration.ofMinutes(5))),
                () -> client.check("job", DibsCheck.rulesOnly().expectedSince(Instant.now())),
                () -> client.check("job", DibsCheck.within(Duration.ofHours(1)).expectedSince(Instant.MAX)),
                () -> client.check("job", DibsCheck.rulesOnly().scanBudget(Duration.ofSeconds(-1))),
            };
            for (int i = 0; i < asks.length; i++) {
                Supplier<?> ask = asks[i];
                DibsArgumentException refused = assertThrows(DibsArgumentException.class, ask::get);
                assertEquals(named[i], refused.argument(), refused.getMessage());
                assertFalse(refused.getMessage().contains("got 0 ms"), refused.getMessage());
            }
            DibsArgumentException name =
                    assertThrows(DibsArgumentException.class, () -> client.check("", DibsCheck.rulesOnly()));
            assertEquals("lockName", name.argument());
            assertThrows(IllegalArgumentException.class, () -> client.check("job", null));
            assertThrows(IllegalArgumentException.class, () -> DibsClient.checkScanBudget(Duration.ZERO));
            // The default budget (found by the attack: the one-argument form always threw).
            assertTrue(client.running("job").complete());
            DibsArgumentException empty = assertThrows(DibsArgumentException.class, () -> client.running(""));
            assertEquals("lockName", empty.argument());
        }
    }

    @Test
    void aJobStandsAsDibsCheckWouldExit() throws Exception {
        String job = "checked-" + ProcessHandle.current().pid();
        try (DibsClient client = Dibs.client(local().build())) {
            DibsCheckResult never = client.check(job, DibsCheck.within(Duration.ofMinutes(1)));
            assertEquals(DibsCheckResult.Standing.OVERDUE, never.standing(), never.toString());
            assertTrue(never.overdue());
            assertTrue(client.execute(job, Duration.ofSeconds(10), Duration.ZERO, () -> {}));
            DibsCheckResult ran =
                    client.check(job, DibsCheck.within(Duration.ofMinutes(1)).minDuration(Duration.ofMinutes(1)));
            assertEquals(DibsCheckResult.Standing.SUSPECT, ran.standing(), ran.toString());
            assertEquals(job, ran.lastSuccess().orElseThrow().lockName());
            assertEquals(1, ran.runs().size());
            assertEquals(Duration.ofMinutes(1), ran.window().orElseThrow());
            assertFalse(ran.readAt().isAfter(Instant.now()));
            // Expected every hour since now: not due yet; held now, a run that excuses it.
            try (DibsLease held =
                    client.tryLock(job, Duration.ofMinutes(1), Duration.ZERO).orElseThrow()) {
                DibsCheckResult every =
                        client.check(job, DibsCheck.every(Duration.ofHours(1)).maxDuration(Duration.ofHours(1)));
                assertEquals(DibsCheckResult.Standing.OK, every.standing(), every.toString());
                assertEquals(Duration.ofMinutes(90), every.window().orElseThrow());
                assertEquals(job, every.held().orElseThrow().name());
                assertTrue(every.running().orElseThrow().complete());
            }
        }
    }

    @Test
    void everyStandingOfTheBorderIsAPublicOne() {
        for (Border.Standing standing : Border.Standing.values()) {
            assertEquals(
                    standing.name(),
                    DibsCheckResult.Standing.valueOf(standing.name()).name());
        }
        assertEquals(Border.Standing.values().length, DibsCheckResult.Standing.values().length);
    }
}
