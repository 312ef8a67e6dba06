package dibs.spring;

import static dibs.spring.FleetViews.await;
import static dibs.spring.FleetViews.check;
import static dibs.spring.FleetViews.job;
import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.DibsLease;
import dibs.testsupport.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One judge (issue 45, 2): the same histories, read by the starter's job health and by
 * {@code dibs check} asked the same question ({@code --every} its period, {@code --grace}
 * {@code dibs.jobs.grace}, {@code --expected-for} how long the starter has expected it, its rules
 * as flags), give the same answer, for each way a job can stand: ok, overdue, a lock kept for the
 * rest of atLeast (ok: no run could start), suspect, too long, a run whose outcome was not told
 * (not due yet), running within the grace after start or holding its own lock, and a job that
 * never ran.
 */
class OneJudgeTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    /** The global grace of every expected job here. */
    private static final long GRACE_MS = 50;

    /** The starter's answer as {@code dibs check} exits with it. */
    private static int exitOf(DibsJobs.Job job) {
        if (job.tooLong()) {
            return 5;
        }
        if (job.overdue()) {
            return 1;
        }
        if (job.suspect()) {
            return 4;
        }
        return job.unknown().isPresent() ? 3 : 0;
    }

    @Test
    void theStarterAndDibsCheckAnswerTheSameHistoriesTheSameWay() {
        Contexts.runner()
                .withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "dibs.jobs.refresh=100ms",
                        "dibs.jobs.grace=" + GRACE_MS + "ms",
                        "dibs.jobs.expect-every.fresh=1h",
                        "dibs.jobs.expect-every.stale=100ms",
                        "dibs.jobs.expect-every.kept=100ms",
                        "dibs.jobs.expect-every.brief=1h",
                        "dibs.jobs.min-duration.brief=300ms",
                        "dibs.jobs.expect-every.stuck=1h",
                        "dibs.jobs.max-duration.stuck=200ms",
                        "dibs.jobs.expect-every.untold=1h",
                        "dibs.jobs.expect-every.started=100ms",
                        "dibs.jobs.grace-after-start.started=1h",
                        "dibs.jobs.expect-every.never=100ms",
                        "dibs.jobs.expect-every.holding=100ms")
                .run(context -> {
                    DibsClient dibs = context.getBean(DibsClient.class);
                    assertThat(dibs.execute("fresh", 10, 0, () -> {})).isTrue();
                    assertThat(dibs.execute("stale", 10, 0, () -> {})).isTrue();
                    assertThat(dibs.execute("kept", 3600, 3600, () -> {})).isTrue();
                    assertThat(dibs.execute("brief", 10, 0, () -> {})).isTrue();
                    assertThat(dibs.execute("started", 10, 0, () -> {})).isTrue();
                    assertThat(dibs.execute("holding", 10, 0, () -> {})).isTrue();
                    dibs.tryLock("untold", Duration.ofMinutes(1), Duration.ZERO)
                            .orElseThrow()
                            .release();
                    DibsLease stuck = dibs.tryLock("stuck", Duration.ofMinutes(1), Duration.ZERO)
                            .orElseThrow();
                    // Past every short window (period 100 ms and the grace) and stuck's 200 ms.
                    Instant settled = Instant.now().plusMillis(300);
                    await("the short windows pass", () -> Instant.now().isAfter(settled));
                    DibsLease started = dibs.tryLock("started@tick-2", Duration.ofMinutes(1), Duration.ZERO)
                            .orElseThrow();
                    DibsLease holding = dibs.tryLock("holding", Duration.ofMinutes(1), Duration.ZERO)
                            .orElseThrow();
                    Instant ready = Instant.now();
                    await(
                            "a read of every job after all that",
                            () -> context.getBean(DibsJobs.class).expected().values().stream()
                                            .filter(j -> j.readAt().isAfter(ready))
                                            .count()
                                    == 9);

                    // The starter's question, as dibs check's flags: its period, its grace, how
                    // long it has expected the job, and the job's rules.
                    Map<String, String[]> flags = new LinkedHashMap<>();
                    flags.put("fresh", new String[] {"--every", "1h"});
                    flags.put("stale", new String[] {"--every", "100ms"});
                    flags.put("kept", new String[] {"--every", "100ms"});
                    flags.put("brief", new String[] {"--every", "1h", "--min-duration", "300ms"});
                    flags.put("stuck", new String[] {"--every", "1h", "--max-duration", "200ms"});
                    flags.put("untold", new String[] {"--every", "1h"});
                    flags.put("started", new String[] {"--every", "100ms", "--grace-after-start", "1h"});
                    flags.put("never", new String[] {"--every", "100ms"});
                    flags.put("holding", new String[] {"--every", "100ms"});
                    Map<String, Integer> starter = new LinkedHashMap<>();
                    Map<String, Integer> cli = new LinkedHashMap<>();
                    for (Map.Entry<String, String[]> e : flags.entrySet()) {
                        DibsJobs.Job read = job(context, e.getKey());
                        System.out.println(e.getKey() + ": " + read);
                        starter.put(e.getKey(), exitOf(read));
                        long expectedFor = Duration.between(read.expected().since(), Instant.now())
                                .toMillis();
                        List<String> args = new ArrayList<>(List.of("check", e.getKey()));
                        args.addAll(List.of(e.getValue()));
                        args.addAll(List.of("--grace", GRACE_MS + "ms", "--expected-for", expectedFor + "ms"));
                        cli.put(e.getKey(), check(redis, args.toArray(String[]::new)));
                    }
                    assertThat(starter).isEqualTo(cli);
                    // And each answer is the one its history calls for (not merely the same).
                    assertThat(cli)
                            .containsEntry("fresh", 0)
                            .containsEntry("stale", 1)
                            .containsEntry("kept", 0)
                            .containsEntry("brief", 4)
                            .containsEntry("stuck", 5)
                            .containsEntry("untold", 0) // expected for less than its window: not due
                            .containsEntry("started", 0)
                            .containsEntry("never", 1)
                            .containsEntry("holding", 0); // late, but its own lock is held: running
                    assertThat(job(context, "started").unknown()).isEmpty();
                    stuck.close();
                    holding.close();
                    started.close();
                });
    }
}
