package dibs.spring;

import dibs.DibsCheck;
import dibs.DibsCheckResult;
import dibs.DibsClient;
import dibs.DibsException;
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
 * The fleet view: each job's last runs on any instance, from the run history in Redis, and how
 * each job stands, judged by the core's one judge ({@link DibsClient#check}, the judge of
 * {@code dibs check}; this class keeps no rule of its own). A job with an expected period
 * ({@link DibsExpectations}) asks {@link DibsCheck#every} its period with {@code dibs.jobs.grace}
 * (by default half the period, at most an hour), expected since this instance began to expect
 * it; a job with a rule ({@code dibs.jobs.min-duration}, {@code max-duration},
 * {@code grace-after-start}) asks it too, its running locks scanned within
 * {@code dibs.jobs.scan-budget}. A job is unknown, never overdue or ok on a guess, where the judge
 * says so (why, in {@link Job#unknown}), and every job while a read fails (Redis down), until one
 * works again. Read every {@code dibs.jobs.refresh} (10 s by default) by a daemon thread: per job,
 * a round trip for its runs (two when its last few failed), one for its lock, or a scan of its
 * running locks where a rule needs them. Feeds the {@code dibs.job.*} gauges, the
 * {@code dibsJobs} health and {@code /actuator/dibs}.
 */
public final class DibsJobs implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dibs.spring");

    private final DibsClient client;
    private final DibsExpectations expectations;
    private final Duration grace;
    private final DibsProperties.Jobs rules;

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
                null, // its window is the judge's: not known before a read
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

    /**
     * One job, read now and judged by the core's judge ({@link DibsClient#check}, as
     * {@code dibs check}): {@code expected} is its expectation, or null.
     */
    private Job read(String name, DibsExpectations.Expectation expected) {
        DibsCheck question = expected == null
                ? DibsCheck.rulesOnly()
                : DibsCheck.every(expected.every()).grace(grace).expectedSince(expected.since());
        Duration minDuration = rules.minDuration().get(name);
        Duration maxDuration = rules.maxDuration().get(name);
        DibsCheckResult checked = client.check(
                name,
                question.minDuration(minDuration)
                        .maxDuration(maxDuration)
                        .graceAfterStart(rules.graceAfterStart().get(name))
                        .scanBudget(rules.scanBudget()));
        List<HeldLock> running = checked.running().map(l -> l.stream().toList()).orElse(List.of());
        return new Job(
                name,
                checked.runs(),
                checked.lastSuccess(),
                expected,
                checked.window().orElse(null),
                expected == null ? null : checked.overdue(),
                checked.unknown(),
                checked.held(),
                checked.readAt(),
                minDuration == null || checked.lastSuccess().isEmpty() ? null : checked.suspect(),
                maxDuration == null ? null : checked.tooLong(),
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
}
