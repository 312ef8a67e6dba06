package dibs.spring;

import java.time.Duration;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code dibs.*} properties: what Spring's Redis properties cannot say. Bound by Spring
 * ({@code @ConfigurationProperties}), which also generates their IDE metadata. The native
 * library checks the values and owns the defaults that are left unset.
 *
 * <p>The {@code @param} texts below are the IDE's descriptions, hence their style.
 *
 * @param enabled Whether to auto-configure a DibsClient (and dibs's meters, health indicator and
 *     endpoint).
 * @param keyPrefix What every lock key starts with. Unset, dibs's own default applies ("dibs:").
 * @param keepAlive Whether to extend a held lock every atMost / 3 while its task runs, so that a
 *     task may outlive atMost and still hold it.
 * @param interruptOnLost With keep-alive: whether a lock found lost (taken by another holder, or
 *     not extended before it would lapse) interrupts the thread that runs its task.
 * @param durable Durable acquire: "auto" (wait for 1 replica behind Sentinel, and elsewhere where the master reports one),
 *     "off", a number of replicas, "aof" or "aof:N" (WAITAOF, Redis 7.2+). Unset, dibs's own
 *     default applies ("auto").
 * @param metrics dibs's Micrometer meters.
 * @param history Whether each release records its run in its job's history in Redis (about 100
 *     runs per job, kept 40 days; no extra round trip). Unset, dibs's own default applies (true).
 * @param instanceId Names this instance in the run history, beside its host and pid: a pod name.
 * @param retryFailedTicks Whether the lock of a tick (executeOnce) whose task threw is let go at
 *     once, so that another instance's later fire of the same tick runs it again. Off: a tick is
 *     run once, however it ended, and stays done for atMost.
 * @param retryUnendedTicks Whether catch-up (@CatchUp) runs again a missed tick whose run started
 *     but never recorded its end (its instance died mid-run, or its release failed). Off: that run
 *     may have done its work, and a tick that started runs at most once.
 * @param jobs The fleet view: expected periods and the overdue check.
 * @param actuator What /actuator/dibs may change.
 */
@ConfigurationProperties(DibsProperties.PREFIX)
public record DibsProperties(
        @DefaultValue("true") boolean enabled,
        String keyPrefix,
        boolean keepAlive,
        boolean interruptOnLost,
        String durable,
        @DefaultValue Metrics metrics,
        Boolean history,
        String instanceId,
        boolean retryFailedTicks,
        boolean retryUnendedTicks,
        @DefaultValue Jobs jobs,
        @DefaultValue Actuator actuator) {
    static final String PREFIX = "dibs";

    /**
     * {@code dibs.jobs.*}.
     *
     * @param expectEvery How often each job must run, by job name (a lock name without its
     *     per-tick part): dibs.jobs.expect-every.nightly-report=24h. Jobs locked from a
     *     {@code @Scheduled} method get theirs from it.
     * @param grace How much longer than its period a job may go without a successful run before it
     *     is overdue. Unset: half the period, at most 1 hour.
     * @param refresh How often the expected jobs' last runs are read from Redis.
     * @param overdueStatus The status of the dibsJobs health contributor while a job is overdue,
     *     suspect or running too long.
     * @param minDuration The shortest run of each job that is trusted, by job name: its last
     *     success, when shorter, is suspect (dibs.jobs.min-duration.backup=1m).
     * @param maxDuration The longest each job's run may hold its lock, by job name: a run held
     *     longer is flagged as running too long (dibs.jobs.max-duration.backup=2h).
     * @param graceAfterStart How long a run that started may take to finish before its late job
     *     is overdue anyway, by job name (dibs.jobs.grace-after-start.backup=3h). Unset, a run in
     *     progress under the job's own lock name excuses it for as long as it runs.
     * @param scanBudget How long each read of a job's running locks (for its maximum duration or
     *     grace after start) may scan the keyspace: more than 0, at most 1 hour; 5 s by default. A
     *     scan cut short settles no rule that a run it missed could change: the job is unknown.
     */
    public record Jobs(
            @DefaultValue Map<String, Duration> expectEvery,
            Duration grace,
            @DefaultValue("10s") Duration refresh,
            @DefaultValue("OUT_OF_SERVICE") String overdueStatus,
            @DefaultValue Map<String, Duration> minDuration,
            @DefaultValue Map<String, Duration> maxDuration,
            @DefaultValue Map<String, Duration> graceAfterStart,
            // DibsClient.running(job)'s budget: an annotation takes no other constant.
            @DefaultValue("5s") Duration scanBudget) {}

    /**
     * {@code dibs.actuator.*}.
     *
     * @param forceRelease Whether to make the endpoint dibsrelease (POST /actuator/dibsrelease/{name}),
     *     an operator's forced release of any lock; reachable once exposed by its own id, and to be
     *     guarded by a role.
     */
    public record Actuator(boolean forceRelease) {}

    /**
     * {@code dibs.metrics.*}.
     *
     * @param enabled Whether to register dibs's Micrometer meters (dibs.lock.*) when there is a
     *     MeterRegistry.
     * @param maxTags The most values of the meters' and observations' lock tag: the calls of any
     *     later one are counted under lock=_other (a time series per order id otherwise).
     */
    public record Metrics(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("1000") int maxTags) {}
}
