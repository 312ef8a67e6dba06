package dibs.spring;

import dibs.DibsClient;
import dibs.DibsException;
import dibs.DibsHistory;
import dibs.DibsJob;
import dibs.DibsListing;
import dibs.DibsRun;
import dibs.HeldLock;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The fleet view: each job's last runs on any instance, from the run history in Redis, and
 * whether a job with an expected period ({@link DibsExpectations}) is overdue: no run holds its
 * lock now (a lock kept for the rest of its atLeast after its run is held by none), and its lock
 * has been free for longer than its period plus a grace
 * ({@code dibs.jobs.grace}, by default half the period and at most an hour) since its last run
 * that succeeded, or since this instance began to expect it when none is recorded. A lock is
 * free from its run's release, or, for a job locked by its own name, from the end of the run's
 * atLeast (no run could start before): so a job whose atLeast exceeds its period, or whose run
 * outlasts it, is not called overdue while it does just that. A late job is {@code unknown}
 * rather than overdue where a run may be missing from the history: none recorded and the history
 * incomplete over the window, or this instance's own runs not recorded at all (its conn's
 * {@code history} false, {@link DibsClient#keepsHistory}); and where the scan for its running
 * locks ({@code dibs.jobs.scan-budget}) was cut short, so that a run it missed could excuse it
 * (a grace after start) or run too long (a maximum duration); and every job while a read fails
 * (Redis down), until one works again. A job's last success is suspect when
 * it took less than its minimum duration, and, for an expected job, is not older than the window.
 * Read every
 * {@code dibs.jobs.refresh} (10 s by default) by a daemon thread: per expected job, a round
 * trip for its runs (two when its last few failed) and one for its lock, or a scan of its running
 * locks where it has a rule that needs them. Feeds the {@code dibs.job.*} gauges, the {@code dibsJobs} health and
 * {@code /actuator/dibs}.
 */
public final class DibsJobs implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dibs.spring");
    /** Runs read per job. */
    static final int RUNS = 5;
    /** Why nothing the history lacks proves anything, where this instance records no runs. */
    private static final String NOT_RECORDED =
            "this instance records no runs (its conn's history is false), so the history cannot prove what it lacks";

    private final DibsClient client;
    private final DibsExpectations expectations;
    private final Duration grace;
    private final DibsProperties.Jobs rules;
    /** Whether this instance's runs are recorded: if not, no absence in the history proves anything. */
    private final boolean keepsHistory;

    private final Clock clock;
    private final ScheduledExecutorService refresher;
    private volatile Map<String, Job> view = Map.of();
    private volatile String failure;
    /** By job: when its reads began to fail (the first failure since its last read that worked). */
    private final Map<String, Instant> unreadSince = new java.util.concurrent.ConcurrentHashMap<>();

    private final List<java.util.function.Consumer<Map<String, Job>>> hooks =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    DibsJobs(DibsClient client, DibsExpectations expectations, DibsProperties.Jobs properties, Clock clock) {
        this.client = client;
        this.expectations = expectations;
        this.grace = properties.grace();
        this.rules = properties;
        this.keepsHistory = client.keepsHistory();
        try {
            DibsClient.checkScanBudget(properties.scanBudget());
        } catch (IllegalArgumentException e) {
            throw new DibsStartupException("dibs.jobs.scan-budget", "cannot be used: " + e.getMessage(), e);
        }
        this.clock = clock;
        this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dibs-jobs");
            t.setDaemon(true);
            return t;
        });
        long every = properties.refresh().toMillis();
        refresher.scheduleWithFixedDelay(this::refreshQuietly, 0, every, TimeUnit.MILLISECONDS);
    }

    /** @return the jobs as last read (those expected, and those with a rule), by name */
    public Map<String, Job> expected() {
        return view;
    }

    /** @return the methods expected from start-up whose job is not known yet ({@link DibsExpectations#unnamed}) */
    Map<String, java.util.List<DibsExpectations.Expectation>> unnamed() {
        return expectations.unnamed();
    }

    /** @return the expected jobs that are overdue now */
    public List<Job> overdue() {
        List<Job> overdue = new ArrayList<>();
        for (Job j : view.values()) {
            if (j.overdue()) {
                overdue.add(j);
            }
        }
        return overdue;
    }

    /** Calls {@code hook} with the view after each read (the gauges register new jobs so). */
    void onRefresh(java.util.function.Consumer<Map<String, Job>> hook) {
        hooks.add(hook);
    }

    /** @return why the last read failed (Redis unreachable), for every job or some, or null */
    public String failure() {
        return failure;
    }

    /**
     * Every job with a recorded run (the most recent first, at most {@code limit}), and every
     * expected job, read now: for the endpoint.
     */
    Fleet all(int limit) {
        Map<String, DibsExpectations.Expectation> expected = expectations.all();
        Map<String, Job> jobs = new LinkedHashMap<>();
        DibsListing<DibsJob> recorded = client.jobs(limit);
        for (DibsJob job : recorded) {
            jobs.put(job.name(), read(job.name(), expected.get(job.name())));
        }
        expected.forEach((name, e) -> jobs.computeIfAbsent(name, n -> read(n, e)));
        ruled().forEach(name -> jobs.computeIfAbsent(name, n -> read(n, expected.get(n))));
        return new Fleet(new ArrayList<>(jobs.values()), recorded.complete() ? null : recorded.partialNote());
    }

    /**
     * The fleet view as read for the endpoint.
     *
     * @param jobs every job with a recorded run, and every expected job
     * @param partial null when the scan for jobs reached the end of the keyspace, else what
     *     {@link DibsListing#partialNote} says
     */
    record Fleet(List<Job> jobs, String partial) {}

    /**
     * Reads the expected jobs, and those with a rule, now (the refresher's work, also for tests).
     * A job that cannot be read (Redis down, a key its ACL denies, a name the core refuses) is
     * {@code unknown}, with why; the others are judged.
     */
    void refresh() {
        Map<String, DibsExpectations.Expectation> expected = expectations.all();
        java.util.Set<String> names = new java.util.LinkedHashSet<>(expected.keySet());
        names.addAll(ruled());
        Map<String, Job> fresh = new LinkedHashMap<>();
        Map<String, String> failed = new LinkedHashMap<>();
        for (String name : names) {
            try {
                fresh.put(name, read(name, expected.get(name)));
                unreadSince.remove(name);
            } catch (RuntimeException e) {
                String why = e instanceof DibsException ? e.getMessage() : String.valueOf(e);
                failed.put(name, why);
                fresh.put(name, unread(name, expected.get(name), why));
            }
        }
        publish(fresh, failed);
    }

    private void refreshQuietly() {
        try {
            refresh();
        } catch (RuntimeException e) { // outside a job's read: every job known is unknown
            Map<String, Job> fresh = new LinkedHashMap<>();
            Map<String, String> failed = new LinkedHashMap<>();
            for (String name : view.keySet()) {
                Job last = view.get(name);
                failed.put(name, String.valueOf(e));
                fresh.put(name, unread(name, last.expected(), String.valueOf(e)));
            }
            publish(fresh, failed);
        }
    }

    /** Makes {@code fresh} the view, says what failed, and calls the hooks (the gauges register so). */
    private void publish(Map<String, Job> fresh, Map<String, String> failed) {
        String now = failed.isEmpty()
                ? null
                : (failed.size() == fresh.size() ? "" : failed.size() + " of " + fresh.size() + " jobs: ")
                        + failed.entrySet().iterator().next().getKey() + ": "
                        + failed.values().iterator().next();
        if (now != null && failure == null) {
            LOG.log(System.Logger.Level.WARNING, "dibs: the fleet view could not be read: " + now);
        }
        failure = now;
        view = Map.copyOf(fresh);
        for (java.util.function.Consumer<Map<String, Job>> hook : hooks) {
            hook.accept(view);
        }
    }

    /**
     * A job whose read failed: unknown, since the last read proves nothing of now (a job that
     * could not run while Redis was down read as on time). What the last read found of its runs
     * stays, as of that read; a job never read has none.
     */
    private Job unread(String name, DibsExpectations.Expectation expected, String why) {
        Instant since = unreadSince.computeIfAbsent(name, n -> clock.instant());
        String unknown = "it could not be read since " + since + ": " + why;
        Job last = view.get(name);
        if (last != null) {
            return last.unknownBecause(unknown);
        }
        return new Job(
                name,
                List.of(),
                Optional.empty(),
                expected,
                expected == null ? null : expected.every().plus(graceFor(expected.every())),
                expected == null ? null : false,
                Optional.of(unknown),
                Optional.empty(),
                clock.instant(),
                null,
                null,
                List.of());
    }

    /** @return whether the last read of job {@code name} failed (its age is then not known) */
    boolean unread(String name) {
        return unreadSince.containsKey(name);
    }

    /** One job, read now; {@code expected} is its expectation, or null. */
    private Job read(String name, DibsExpectations.Expectation expected) {
        DibsHistory runs = client.history(name, RUNS);
        DibsHistory proof = runs;
        DibsRun lastSuccess =
                runs.stream().filter(DibsRun::succeeded).findFirst().orElse(null);
        if (lastSuccess == null && runs.size() == RUNS && expected != null) {
            // Its last few runs failed: its last success may lie further back.
            proof = client.history(name, 100);
            lastSuccess = proof.stream().filter(DibsRun::succeeded).findFirst().orElse(null);
        }
        Instant now = clock.instant();
        Boolean overdue = null;
        String unknown = null;
        Duration allowed = null;
        Optional<HeldLock> held = Optional.empty();
        Duration maxDuration = rules.maxDuration().get(name);
        Duration graceAfterStart = rules.graceAfterStart().get(name);
        // The runs holding the job's locks now, its ticks' included: a scan, only for the rules.
        DibsListing<HeldLock> scan =
                maxDuration != null || graceAfterStart != null ? client.running(name, rules.scanBudget()) : null;
        List<HeldLock> running = scan == null ? List.of() : scan.stream().toList();
        // A run the scan missed could excuse the job, or run too long: then neither is proven.
        String missed =
                scan == null || scan.complete() ? null : "; the scan for its running locks was " + scan.partialNote();
        Boolean tooLong = maxDuration == null
                ? null
                : running.stream().anyMatch(l -> age(l, now).compareTo(maxDuration) > 0);
        // Whether the last success is older than the window: then it says nothing of the window.
        boolean stale = false;
        if (expected != null) {
            allowed = expected.every().plus(graceFor(expected.every()));
            // A job locked by its own name runs now if a run holds its lock; with a grace after
            // start, any run of it excuses it, for that long after its start.
            // A complete scan found the lock of its own name already (as one of its running locks).
            held = scan != null && scan.complete()
                    ? running.stream().filter(l -> l.name().equals(name)).findFirst()
                    : client.heldLock(name).filter(HeldLock::running);
            boolean excused = graceAfterStart == null
                    ? held.isPresent()
                    : running.stream().anyMatch(l -> age(l, now).compareTo(graceAfterStart) <= 0);
            stale = Duration.between(freeSince(name, lastSuccess, expected), now)
                            .compareTo(allowed)
                    > 0;
            boolean late = !excused && stale;
            if (late && !keepsHistory) {
                unknown = NOT_RECORDED;
            } else if (late && proof.completeSince().isAfter(now.minus(allowed))) {
                // Late with no success recorded proves nothing where a run of the window may be
                // missing from the history (trimmed, expired, or dropped with its job's stream),
                // or where a run's outcome was not seen (its end never recorded, or not told): the
                // core's History::complete_since_unix_ms starts after such a run.
                Optional<DibsRun> unseen = proof.stream()
                        .filter(r -> !r.succeeded() && !r.failed() && !"forced".equals(r.ended()))
                        .filter(r -> !"running".equals(r.ended()))
                        .findFirst();
                unknown = unseen.isPresent() && !unseen.get().recordedAt().isBefore(now.minus(allowed))
                        ? "how its run " + unseen.get().lockName() + " of "
                                + unseen.get().recordedAt()
                                + " ended is not known ("
                                + ("unended".equals(unseen.get().ended())
                                        ? "its end was never recorded: its instance died, or its release failed"
                                        : "its task's outcome was not told to dibs")
                                + ")" + (missed == null ? "" : missed)
                        : "no success of it is recorded, but the history holds every run only since "
                                + proof.completeSince()
                                + evicted(proof)
                                + (missed == null ? "" : missed);
            } else if (late && missed != null && graceAfterStart != null) {
                unknown =
                        "it is late, but a run of it that started within its grace after start may be missing" + missed;
            }
            overdue = late && unknown == null;
        }
        Duration minDuration = rules.minDuration().get(name);
        Boolean suspect = minDuration == null || lastSuccess == null
                ? null
                : !stale && lastSuccess.duration().compareTo(minDuration) < 0;
        if (Boolean.TRUE.equals(suspect) && !keepsHistory) {
            // A later success of this instance, long enough, would be missing from the history.
            suspect = false;
            unknown = unknown == null ? NOT_RECORDED : unknown;
        }
        // The twin of the core's Judgement::unproven (src/check.rs): change both together.
        if (unknown == null
                && missed != null
                && maxDuration != null
                && !tooLong
                && !Boolean.TRUE.equals(overdue)
                && !Boolean.TRUE.equals(suspect)) {
            unknown = "no run of it found has held its lock longer than its maximum duration, but one may be missing"
                    + missed;
        }
        return new Job(
                name,
                runs,
                Optional.ofNullable(lastSuccess),
                expected,
                allowed,
                overdue,
                Optional.ofNullable(unknown),
                held,
                now,
                suspect,
                tooLong,
                running);
    }

    /** The jobs with a rule of their own (a minimum or maximum duration, a grace after start). */
    private java.util.Set<String> ruled() {
        java.util.Set<String> names =
                new java.util.LinkedHashSet<>(rules.minDuration().keySet());
        names.addAll(rules.maxDuration().keySet());
        names.addAll(rules.graceAfterStart().keySet());
        return names;
    }

    /** How long a run has held its lock, by its holder's clock. */
    private static Duration age(HeldLock lock, Instant now) {
        return lock.acquiredAt().map(at -> Duration.between(at, now)).orElse(Duration.ZERO);
    }

    /** Since when the job's lock has been free for another run (see the class's comment). */
    private static Instant freeSince(String job, DibsRun lastSuccess, DibsExpectations.Expectation expected) {
        if (lastSuccess == null) {
            return expected.since();
        }
        Instant released = lastSuccess.recordedAt();
        if (!lastSuccess.lockName().equals(job)) {
            return released; // a per-tick name: the next tick's lock is another one
        }
        // Kept for what was left of atLeast after the release (the server's clock throughout).
        Duration kept = lastSuccess.atLeast().minus(lastSuccess.duration());
        return kept.isNegative() ? released : released.plus(kept);
    }

    Duration graceFor(Duration period) {
        if (grace != null) {
            return grace;
        }
        Duration half = period.dividedBy(2);
        return half.compareTo(Duration.ofHours(1)) > 0 ? Duration.ofHours(1) : half;
    }

    @Override
    public void close() {
        refresher.shutdownNow();
    }

    /**
     * One job as read.
     *
     * @param name the job
     * @param runs its last runs fleet-wide, newest first
     * @param lastSuccess its last run whose task succeeded
     * @param expected its expected period, if any
     * @param allowed the period plus the grace: the longest time without a success
     * @param overdueOrNull whether it is proven overdue; null without an expected period
     * @param unknown why dibs cannot judge the job: the history cannot tell whether a late job
     *     ran, or whether a success was too short (a run may be missing from it), or the scan for
     *     its running locks was cut short where a run it missed could change the answer; then it
     *     is neither overdue nor suspect
     * @param held its lock, when a run holds it now (a job locked by its own name)
     * @param readAt when it was read
     * @param suspectOrNull whether its last success took less than its minimum duration (for an
     *     expected job, a success older than the window is not judged); null without a minimum
     *     (or without a success)
     * @param tooLongOrNull whether a run has held its lock longer than its maximum duration; null
     *     without one
     * @param running the runs holding its locks now (read only with a maximum duration or a
     *     grace after start)
     */
    public record Job(
            String name,
            List<DibsRun> runs,
            Optional<DibsRun> lastSuccess,
            DibsExpectations.Expectation expected,
            Duration allowed,
            Boolean overdueOrNull,
            Optional<String> unknown,
            Optional<HeldLock> held,
            Instant readAt,
            Boolean suspectOrNull,
            Boolean tooLongOrNull,
            List<HeldLock> running) {
        /** The job as last read, judged neither way now: {@code why} no judgement holds. */
        Job unknownBecause(String why) {
            return new Job(
                    name,
                    runs,
                    lastSuccess,
                    expected,
                    allowed,
                    expected == null ? null : false,
                    Optional.of(why),
                    held,
                    readAt,
                    suspectOrNull == null ? null : false,
                    tooLongOrNull == null ? null : false,
                    running);
        }

        /** @return whether the job is overdue (false without an expected period) */
        public boolean overdue() {
            return Boolean.TRUE.equals(overdueOrNull);
        }

        /** @return whether its last success took less than its minimum duration */
        public boolean suspect() {
            return Boolean.TRUE.equals(suspectOrNull);
        }

        /** @return whether a run has held its lock longer than its maximum duration */
        public boolean tooLong() {
            return Boolean.TRUE.equals(tooLongOrNull);
        }

        /** @return how long ago its last success was recorded, as of the read */
        public Optional<Duration> lastSuccessAge() {
            return lastSuccess.map(r -> Duration.between(r.recordedAt(), readAt));
        }
    }

    /** What the history's evictions say of a job's proof: its own runs dropped, or another job's. */
    private static String evicted(DibsHistory proof) {
        return proof.ownRunsEvictedAt()
                .map(at -> " (its own runs were dropped from the history at " + at
                        + ": more than about 1000 jobs record under this key prefix)")
                .or(() -> proof.evictedAt()
                        .map(at -> " (it dropped the runs of the least recently run job at " + at
                                + ", to keep within its jobs)"))
                .orElse("");
    }
}
