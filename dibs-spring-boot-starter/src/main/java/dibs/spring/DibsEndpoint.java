package dibs.spring;

import dibs.DibsClient;
import dibs.DibsException;
import dibs.DibsRun;
import dibs.LockInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code /actuator/dibs}, read only: the locks whose tasks run on this instance now, with how long
 * each has been held, its remaining TTL in Redis (one {@code inspect} per lock) and whether
 * keep-alive extends it; and the fleet view: each job's last runs on any instance (which instance
 * ran each tick, how it ended) and whether it is overdue. {@code /actuator/dibs/{name}} shows who
 * holds a lock fleet-wide: its host, pid and when it was acquired, which is what
 * {@link DibsReleaseEndpoint} takes to force-release it. No output shows a lock's token (its
 * release key) or a password. Expose it as any endpoint
 * ({@code management.endpoints.web.exposure.include=health,dibs}); it reveals lock and job names,
 * hosts and pids to whoever may read it.
 */
@Endpoint(id = "dibs")
public final class DibsEndpoint {
    /** Jobs shown, at most. */
    private static final int JOBS = 100;

    private final DibsHeldLocks held;
    private final DibsClient client;
    private final boolean keepAlive;
    private final DibsJobs jobs;

    /**
     * @param held the locks held now
     * @param client the client, for each lock's remaining TTL
     * @param properties for keep-alive
     */
    public DibsEndpoint(DibsHeldLocks held, DibsClient client, DibsProperties properties) {
        this(held, client, properties, null);
    }

    DibsEndpoint(DibsHeldLocks held, DibsClient client, DibsProperties properties, DibsJobs jobs) {
        this.held = held;
        this.client = client;
        this.keepAlive = properties.keepAlive();
        this.jobs = jobs;
    }

    /** @return the locks held now */
    @ReadOperation
    public Locks locks() {
        List<HeldLock> locks = new ArrayList<>();
        for (DibsHeldLocks.Entry e : held.snapshot()) {
            Long remaining = null;
            try {
                LockInfo info = client.inspect(e.name());
                remaining = info.remaining().map(Duration::toMillis).orElse(null);
            } catch (DibsException | IllegalStateException ignored) {
                // Redis unreachable: the entry is still ours to show, its TTL unknown (null).
            }
            locks.add(new HeldLock(
                    e.name(), e.since().toString(), e.heldFor().toMillis(), remaining, keepAlive, e.fencingToken()));
        }
        List<JobView> views = new ArrayList<>();
        String[] partial = new String[1];
        String failure = jobs(views, partial);
        return new Locks(locks.size(), locks, views, partial[0], failure);
    }

    /**
     * Fills {@code views} with the fleet view, and {@code partial[0]} with the note of a scan for
     * jobs cut short; returns why it could not be read, or null.
     */
    private String jobs(List<JobView> views, String[] partial) {
        if (jobs == null) {
            return null;
        }
        try {
            DibsJobs.Fleet fleet = jobs.all(JOBS);
            partial[0] = fleet.partial();
            for (DibsJobs.Job j : fleet.jobs()) {
                List<RunView> runs = j.runs().stream().map(RunView::of).toList();
                views.add(new JobView(
                        j.name(),
                        j.expected() == null ? null : j.expected().every().toMillis(),
                        j.overdueOrNull(),
                        j.unknown().orElse(null),
                        j.lastSuccess().map(r -> r.recordedAt().toString()).orElse(null),
                        j.lastSuccessAge().map(Duration::toMillis).orElse(null),
                        j.held()
                                .map(h ->
                                        h.host().orElse("?") + " pid " + h.pid().orElse(-1))
                                .orElse(null),
                        j.suspectOrNull(),
                        j.tooLongOrNull(),
                        runs));
            }
        } catch (DibsException | IllegalArgumentException | IllegalStateException e) {
            return e.getMessage(); // Redis unreachable
        }
        return null;
    }

    /**
     * Who holds a lock now, fleet-wide; never its token.
     *
     * @param name the lock's name
     * @return its holder, or {@code held=false}
     */
    @ReadOperation
    public LockHolder holder(@Selector String name) {
        return client.heldLock(name).map(lock -> LockHolder.of(name, lock)).orElse(LockHolder.free(name));
    }

    /**
     * A job in the fleet view.
     *
     * @param name the job (a lock name without its per-tick part)
     * @param expectEveryMs its expected period, if any
     * @param overdue whether it is proven overdue; null without an expected period
     * @param unknown why dibs cannot judge the job (a run may be missing from the history, or
     *     from a scan cut short); null when it can
     * @param lastSuccessAt when its last successful run was recorded
     * @param lastSuccessAgeMs how long ago
     * @param runningOn the holder of its lock now ({@code host pid N}), for a job locked by its own
     *     name, while a run holds it; null when free, or kept after its run
     * @param suspect whether its last success took less than its minimum duration; null without one
     * @param runningTooLong whether a run has held its lock longer than its maximum duration; null
     *     without one
     * @param runs its last runs on any instance, newest first
     */
    public record JobView(
            String name,
            Long expectEveryMs,
            Boolean overdue,
            String unknown,
            String lastSuccessAt,
            Long lastSuccessAgeMs,
            String runningOn,
            Boolean suspect,
            Boolean runningTooLong,
            List<RunView> runs) {}

    /**
     * One recorded run.
     *
     * @param lockName the lock's whole name (its tick included)
     * @param recordedAt when its release recorded it
     * @param instanceId the instance id of the instance that ran it, if set
     * @param host its host
     * @param pid its process id
     * @param durationMs from acquisition to release
     * @param task {@code ok}, {@code failed}, or null for a forced release
     * @param ended what became of the lock ({@code released}, {@code kept}, {@code forced}, ...)
     * @param forcedBy who forced a forced release
     * @param catchUp whether it was a catch-up's run: a tick no instance ran in its time, run later
     */
    public record RunView(
            String lockName,
            String recordedAt,
            String instanceId,
            String host,
            long pid,
            long durationMs,
            String task,
            String ended,
            String forcedBy,
            boolean catchUp) {
        static RunView of(DibsRun r) {
            String task = "forced".equals(r.ended()) ? null : r.succeeded() ? "ok" : "failed";
            return new RunView(
                    r.lockName(),
                    r.recordedAt().toString(),
                    r.instanceId().orElse(null),
                    r.host(),
                    r.pid(),
                    r.duration().toMillis(),
                    task,
                    r.ended(),
                    r.forcedBy().orElse(null),
                    r.catchUp());
        }
    }

    /**
     * A lock's holder, fleet-wide: who, never its token.
     *
     * @param name the lock's name
     * @param held whether anyone holds it
     * @param holderId this holding's id: the first 16 hex digits of the SHA-256 of its token, the
     *     same for every reader, another for each acquisition, and no use to release it with; what
     *     {@link DibsReleaseEndpoint} takes to name the holding to release
     * @param host the holder's host
     * @param pid the holder's process id
     * @param acquiredAt when the holder acquired it
     * @param remainingTtlMs its remaining TTL
     */
    public record LockHolder(
            String name, boolean held, String holderId, String host, Long pid, String acquiredAt, Long remainingTtlMs) {
        static LockHolder of(String name, dibs.HeldLock lock) {
            return new LockHolder(
                    name,
                    true,
                    idOf(lock),
                    lock.host().orElse(null),
                    lock.pid().isPresent() ? lock.pid().getAsLong() : null,
                    lock.acquiredAt().map(Object::toString).orElse(null),
                    lock.remaining().map(Duration::toMillis).orElse(null));
        }

        static LockHolder free(String name) {
            return new LockHolder(name, false, null, null, null, null, null);
        }

        /** The holding's id; null for a value dibs did not write (no token). */
        static String idOf(dibs.HeldLock lock) {
            return lock.token().map(LockHolder::digest).orElse(null);
        }

        private static String digest(String token) {
            try {
                byte[] hash = java.security.MessageDigest.getInstance("SHA-256")
                        .digest(token.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                return java.util.HexFormat.of().formatHex(hash, 0, 8);
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException("every JVM has SHA-256", e);
            }
        }
    }

    /**
     * The endpoint's answer.
     *
     * @param count how many locks are held
     * @param locks the locks, the longest-held first
     * @param jobs each job with a recorded run, and each expected job: its last runs fleet-wide
     * @param jobsPartial null when the scan for jobs reached the end of the keyspace; else
     *     {@code partial: scanned about N of M keys}, and a job may be missing from {@code jobs}
     * @param jobsFailure why the jobs could not be read, or null
     */
    public record Locks(int count, List<HeldLock> locks, List<JobView> jobs, String jobsPartial, String jobsFailure) {}

    /**
     * One lock held now.
     *
     * @param name the lock's name
     * @param acquiredAt when this instance acquired it (ISO-8601)
     * @param heldForMs how long it has been held, in milliseconds
     * @param remainingTtlMs its remaining TTL in Redis, in milliseconds; null when unknown
     * @param keepAlive whether keep-alive extends it while its task runs
     * @param fencingToken the fencing token its task runs under
     */
    public record HeldLock(
            String name,
            String acquiredAt,
            long heldForMs,
            Long remainingTtlMs,
            boolean keepAlive,
            long fencingToken) {}
}
