package dibs.spring;

import dibs.DibsCatchUp;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.zone.ZoneOffsetTransition;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.Schedules;
import org.springframework.scheduling.support.CronExpression;

/**
 * The tick of the {@code @Scheduled(cron = ...)} method running on this thread: its fire time, the
 * same on every instance whose scheduler fires it, for {@code DibsClient.executeOnce}:
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 2 * * *")
 * void nightlyReport() {
 *     dibs.executeOnce("nightly-report", DibsScheduledTick.current().orElseThrow(), Duration.ofHours(1), this::build);
 * }
 * }</pre>
 *
 * <p>The tick is the fire time that the scheduler's trigger computed for this run, in the cron's
 * zone (the annotation's {@code zone}, else the system's), as an ISO-8601 local date-time
 * ({@code 2026-12-02T02:00}), with its offset in the repeat of an hour that a fall-back repeats
 * ({@code 2026-11-01T01:15-05:00}; see {@link #name}): the starter records it as each run begins
 * ({@link DibsTickScheduler}). So an instance whose scheduler fires early or late (its clock
 * ahead or behind) names its own tick. Where no trigger recorded it (a method called directly, a
 * scheduler of the application's own outside Spring's registrar), the tick is the fire time
 * nearest to now: the next one when it is at most {@link #EARLY} away (and less than half the gap
 * between fires), else the latest one at or before now.
 * Only a cron can be derived: a {@code fixedRate} or {@code fixedDelay} counts from each
 * instance's own start, so its runs share no tick across instances.
 */
public final class DibsScheduledTick {
    /** How early a fire may come and still name its own tick, when no trigger recorded it. */
    static final Duration EARLY = Duration.ofSeconds(1);

    /** The fire time of the scheduled run on this thread, as its trigger computed it. */
    private static final ThreadLocal<Instant> FIRE = new ThreadLocal<>();

    /**
     * The zone of the clock of the scheduler that fired the run on this thread: a cron without a
     * {@code zone} fires in it (Spring's {@code CronTrigger}), the system's by default.
     */
    private static final ThreadLocal<ZoneId> CLOCK_ZONE = new ThreadLocal<>();

    /** Set while the starter runs a {@link CatchUp} method at start-up: past ticks only. */
    private static final ThreadLocal<Boolean> AT_START = new ThreadLocal<>();

    /** Resolves {@code ${...}} in a cron: the application's Environment, set by the starter. */
    private static volatile UnaryOperator<String> placeholders = UnaryOperator.identity();

    private DibsScheduledTick() {}

    static void resolvePlaceholdersWith(UnaryOperator<String> resolver) {
        placeholders = resolver;
    }

    /**
     * The zone of a {@code @Scheduled} cron: its {@code zone} (placeholders resolved), else the
     * zone of the clock of the scheduler that fired it, else the system's.
     */
    static ZoneId zoneOf(Scheduled scheduled) {
        return zoneOf(scheduled, CLOCK_ZONE.get());
    }

    /** As {@link #zoneOf(Scheduled)}, with {@code clock} (or null) for the scheduler's clock's zone. */
    static ZoneId zoneOf(Scheduled scheduled, ZoneId clock) {
        String zone = placeholders.apply(scheduled.zone());
        return !zone.isEmpty() ? ZoneId.of(zone) : clock != null ? clock : ZoneId.systemDefault();
    }

    /** {@code text} with its {@code ${...}} placeholders resolved. */
    static String resolve(String text) {
        return placeholders.apply(text);
    }

    /** @return the fire time the trigger of the scheduled run on this thread computed, if any */
    static Optional<Instant> recordedFire() {
        return Optional.ofNullable(FIRE.get());
    }

    /** Runs {@code run} as the scheduled run due at {@code fire} (see {@link DibsTickScheduler}). */
    static void runFiredAt(Instant fire, Runnable run) {
        runFiredAt(fire, CLOCK_ZONE.get(), run);
    }

    /** The same, fired by a scheduler whose clock is in {@code clockZone}. */
    static void runFiredAt(Instant fire, ZoneId clockZone, Runnable run) {
        Instant outer = FIRE.get();
        ZoneId outerZone = CLOCK_ZONE.get();
        FIRE.set(fire);
        CLOCK_ZONE.set(clockZone);
        try {
            run.run();
        } finally {
            if (outer == null) {
                FIRE.remove();
            } else {
                FIRE.set(outer);
            }
            if (outerZone == null) {
                CLOCK_ZONE.remove();
            } else {
                CLOCK_ZONE.set(outerZone);
            }
        }
    }

    /**
     * The ticks for {@code DibsClient.executeOnce} with catch-up: those of the innermost
     * {@code @Scheduled} cron method on this thread's stack, due within its {@link CatchUp}'s
     * window, the last being {@link #current()}'s tick, with the annotation's policy. A method
     * without {@link CatchUp} gets the tick due now alone, policy {@code SKIP}. In the run the
     * starter makes when the application is ready, every tick is past: the window then ends at
     * the latest fire time and runs nothing due later.
     *
     * @return the ticks and the policy
     * @throws IllegalStateException outside a {@code @Scheduled} cron method
     * @throws IllegalArgumentException if the policy or window cannot be read
     */
    public static DibsCatchUp catchUp() {
        Method method = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .walk(frames -> frames.map(f -> cronMethodOf(f.getDeclaringClass(), f.getMethodName()))
                        .flatMap(Optional::stream)
                        .findFirst())
                .orElseThrow(() -> new IllegalStateException(
                        "DibsScheduledTick.catchUp() is for a @Scheduled cron method, on its thread"));
        Scheduled scheduled = cronOf(method).orElseThrow();
        String cron = placeholders.apply(scheduled.cron());
        ZoneId zoneId = zoneOf(scheduled);
        CronExpression expression = CronExpression.parse(cron);
        Instant fire = FIRE.get();
        ZonedDateTime now = ZonedDateTime.now(zoneId);
        ZonedDateTime due = fire != null
                ? fire.atZone(zoneId)
                : nearestFire(expression, now)
                        .orElseThrow(() -> new IllegalStateException("cron '" + cron + "' has no fire time"));
        CatchUp annotation = method.getAnnotation(CatchUp.class);
        if (annotation == null) {
            return DibsCatchUp.skip(due.toInstant(), name(due));
        }
        DibsCatchUp.Policy policy = policyOf(annotation);
        Duration window = windowOf(annotation);
        boolean atStart = Boolean.TRUE.equals(AT_START.get());
        Map<Instant, String> ticks = new TreeMap<>();
        ZonedDateTime from = oldestTick(atStart ? now : due, window);
        for (ZonedDateTime t = firstFireFrom(expression, from, due);
                t != null && !t.isAfter(due);
                t = expression.next(t)) {
            ticks.put(t.toInstant(), name(t));
        }
        ticks.put(due.toInstant(), name(due));
        return atStart ? DibsCatchUp.ofPast(policy, ticks) : DibsCatchUp.of(policy, ticks);
    }

    /**
     * The first fire at or after {@code from}, but no earlier than the {@link
     * DibsCatchUp#MAX_TICKS}-th fire before {@code due}: a window of a second's cron over days
     * is not walked from its start.
     */
    private static ZonedDateTime firstFireFrom(CronExpression cron, ZonedDateTime from, ZonedDateTime due) {
        Duration back = Duration.ofSeconds(2);
        while (true) {
            ZonedDateTime start = due.minus(back);
            if (!start.isAfter(from)) {
                return cron.next(from.minusNanos(1));
            }
            int count = 0;
            for (ZonedDateTime t = cron.next(start.minusNanos(1)); t != null && !t.isAfter(due); t = cron.next(t)) {
                count++;
            }
            if (count > DibsCatchUp.MAX_TICKS) {
                return cron.next(start.minusNanos(1));
            }
            back = back.multipliedBy(2);
        }
    }

    static DibsCatchUp.Policy policyOf(CatchUp annotation) {
        String policy = placeholders.apply(annotation.policy()).trim();
        try {
            return DibsCatchUp.Policy.valueOf(policy.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("@CatchUp policy must be skip, latest or all, got '" + policy + "'", e);
        }
    }

    static Duration windowOf(CatchUp annotation) {
        String text = placeholders.apply(annotation.window()).trim();
        Duration window;
        try {
            window = Duration.parse(text);
        } catch (java.time.format.DateTimeParseException e) {
            throw new IllegalArgumentException(
                    "@CatchUp window must be an ISO-8601 duration (PT12H), got '" + text + "'", e);
        }
        if (window.isNegative() || window.isZero() || window.compareTo(MAX_WINDOW) > 0) {
            throw new IllegalArgumentException(
                    "@CatchUp window must be more than 0 and at most " + MAX_WINDOW.toDays() + " days, got " + text);
        }
        return window;
    }

    /** How far back catch-up looks at most: the core's limit ({@link dibs.DibsCatchUp#MAX_WINDOW}). */
    static final Duration MAX_WINDOW = dibs.DibsCatchUp.MAX_WINDOW;

    /**
     * The oldest due time a catch-up lists: {@code window} before {@code end}. A tick the core
     * finds past its limit (30 days) by the time it looks at it is beyond its reach, not looked
     * at and not run, without an error: the core owns that limit.
     */
    static ZonedDateTime oldestTick(ZonedDateTime end, Duration window) {
        return end.minus(window);
    }

    /**
     * Runs {@code run} as the starter's catch-up at start-up, for the fire {@code latest} of a
     * scheduler whose clock is in {@code clockZone} (null: the system's), the zone of its fires.
     */
    static void runAtStart(Instant latest, ZoneId clockZone, Runnable run) {
        AT_START.set(Boolean.TRUE);
        try {
            runFiredAt(latest, clockZone, run);
        } finally {
            AT_START.remove();
        }
    }

    /**
     * @return the tick of the innermost {@code @Scheduled} method with a cron on this thread's
     *     stack; empty outside one, or for one whose trigger is not a cron ({@code fixedRate},
     *     {@code fixedDelay}, a cron that cannot be parsed, or {@code "-"})
     */
    public static Optional<String> current() {
        return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .walk(frames -> frames.map(f -> cronOf(f.getDeclaringClass(), f.getMethodName()))
                        .flatMap(Optional::stream)
                        .findFirst())
                .flatMap(DibsScheduledTick::tickOf);
    }

    /** The cron (and zone) of a no-argument {@code @Scheduled} method {@code name} of {@code type}. */
    private static Optional<Scheduled> cronOf(Class<?> type, String name) {
        return cronMethodOf(type, name).flatMap(DibsScheduledTick::cronOf);
    }

    /** The no-argument method {@code name} of {@code type} that is {@code @Scheduled} with a cron. */
    private static Optional<Method> cronMethodOf(Class<?> type, String name) {
        for (Method m : type.getDeclaredMethods()) {
            if (m.getName().equals(name)
                    && m.getParameterCount() == 0
                    && cronOf(m).isPresent()) {
                return Optional.of(m);
            }
        }
        return Optional.empty();
    }

    /** The first {@code @Scheduled} of a method that has a cron. */
    static Optional<Scheduled> cronOf(Method m) {
        Schedules all = m.getAnnotation(Schedules.class);
        Scheduled[] each = all != null ? all.value() : new Scheduled[] {m.getAnnotation(Scheduled.class)};
        for (Scheduled s : each) {
            if (s != null && !s.cron().isEmpty()) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }

    /**
     * The innermost {@code @Scheduled} method on this thread's stack, whose {@link #periodOf} is
     * how often it runs. A Spring proxy's frame is looked up on the class it proxies, so that a
     * ShedLock {@code @SchedulerLock} method is found too. Empty outside one.
     */
    static Optional<Method> currentScheduledMethod() {
        return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .walk(frames -> frames.map(f -> scheduledMethod(f.getDeclaringClass(), f.getMethodName()))
                        .flatMap(Optional::stream)
                        .findFirst());
    }

    private static Optional<Method> scheduledMethod(Class<?> type, String name) {
        for (Class<?> c = type;
                c != null && c != Object.class;
                c = c.getName().contains("$$") ? c.getSuperclass() : null) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(name) && m.getParameterCount() == 0 && scheduledOf(m) != null) {
                    return Optional.of(m);
                }
            }
        }
        return Optional.empty();
    }

    /** A method's first {@code @Scheduled}, or null. */
    static Scheduled scheduledOf(Method m) {
        Schedules all = m.getAnnotation(Schedules.class);
        return all != null && all.value().length > 0 ? all.value()[0] : m.getAnnotation(Scheduled.class);
    }

    /**
     * How often one {@code @Scheduled} runs: a {@code fixedRate} or {@code fixedDelay}, or a
     * cron's longest gap between fire times over its next 64 (a weekday cron's is its weekend).
     * Empty when it cannot be read.
     */
    static Optional<Duration> periodOf(Scheduled s) {
        try {
            if (!s.cron().isEmpty()) {
                String cron = placeholders.apply(s.cron());
                if (cron.equals(Scheduled.CRON_DISABLED) || !CronExpression.isValidExpression(cron)) {
                    return Optional.empty();
                }
                ZonedDateTime t = ZonedDateTime.now(zoneOf(s));
                CronExpression expression = CronExpression.parse(cron);
                Duration longest = Duration.ZERO;
                for (int i = 0; i < 64; i++) {
                    ZonedDateTime next = expression.next(t);
                    if (next == null) {
                        break;
                    }
                    if (i > 0) { // the first gap is from now, not from a fire time
                        Duration gap = Duration.between(t, next);
                        longest = gap.compareTo(longest) > 0 ? gap : longest;
                    }
                    t = next;
                }
                return longest.isZero() ? Optional.empty() : Optional.of(longest);
            }
            long rate = fixed(s.fixedRate(), s.fixedRateString(), s);
            long delay = fixed(s.fixedDelay(), s.fixedDelayString(), s);
            long millis = rate > 0 ? rate : delay;
            return millis > 0 ? Optional.of(Duration.ofMillis(millis)) : Optional.empty();
        } catch (RuntimeException e) { // an unresolvable placeholder, an unknown zone
            return Optional.empty();
        }
    }

    /** A fixedRate/fixedDelay in milliseconds (its number, else its string: a number or ISO-8601). */
    private static long fixed(long value, String text, Scheduled s) {
        if (value < 0 && !text.isEmpty()) {
            String resolved = placeholders.apply(text).trim();
            if (resolved.startsWith("P") || resolved.startsWith("p")) {
                return Duration.parse(resolved).toMillis();
            }
            value = Long.parseLong(resolved);
        }
        return value < 0 ? -1 : s.timeUnit().toMillis(value);
    }

    private static Optional<String> tickOf(Scheduled scheduled) {
        try {
            String cron = placeholders.apply(scheduled.cron());
            if (cron.equals(Scheduled.CRON_DISABLED) || !CronExpression.isValidExpression(cron)) {
                return Optional.empty();
            }
            ZoneId zoneId = zoneOf(scheduled);
            Instant fire = FIRE.get();
            Optional<ZonedDateTime> tick = fire != null
                    ? Optional.of(fire.atZone(zoneId))
                    : nearestFire(CronExpression.parse(cron), ZonedDateTime.now(zoneId));
            return tick.map(DibsScheduledTick::name);
        } catch (RuntimeException e) { // an unresolvable placeholder, an unknown zone
            return Optional.empty();
        }
    }

    /**
     * A tick's name: its local date-time to the second ({@code 2026-11-01T01:15}), one per fire
     * instant. Where a fall-back repeats the local hour, the repeat's fires add their offset
     * ({@code 2026-11-01T01:15-05:00}); the first pass keeps the plain name, which
     * {@code LocalDateTime.atZone} also reads as the earlier instant. So no name outside the
     * repeated hour changed, and an instance named before the change and one after exclude each
     * other on every tick but the repeat's (where the older one used to skip, or run again).
     */
    static String name(ZonedDateTime fire) {
        LocalDateTime local = fire.toLocalDateTime().truncatedTo(ChronoUnit.SECONDS);
        ZoneOffsetTransition transition = fire.getZone().getRules().getTransition(local);
        boolean repeat =
                transition != null && transition.isOverlap() && fire.getOffset().equals(transition.getOffsetAfter());
        return repeat ? local + fire.getOffset().getId() : local.toString();
    }

    /**
     * The fire time nearest to {@code now}, for a run whose trigger did not record its own: the
     * next one when it is at most {@link #EARLY} away and nearer than half the gap between the
     * fires around now (a fire that came early), else the latest one at or before now (one that
     * came late, or on time).
     */
    static Optional<ZonedDateTime> nearestFire(CronExpression cron, ZonedDateTime now) {
        Optional<ZonedDateTime> latest = latestFire(cron, now);
        ZonedDateTime next = cron.next(now);
        if (next == null) {
            return latest;
        }
        Duration ahead = Duration.between(now, next);
        Duration gap = latest.map(l -> Duration.between(l, next)).orElse(EARLY.multipliedBy(2));
        boolean early = ahead.compareTo(EARLY) <= 0 && ahead.multipliedBy(2).compareTo(gap) < 0;
        return early || latest.isEmpty() ? Optional.of(next) : latest;
    }

    /** The latest fire time at or before {@code now}: searched back over a window that doubles. */
    static Optional<ZonedDateTime> latestFire(CronExpression cron, ZonedDateTime now) {
        for (Duration window = Duration.ofSeconds(2);
                window.compareTo(Duration.ofDays(800)) <= 0;
                window = window.multipliedBy(2)) {
            ZonedDateTime latest = null;
            // next() is strictly after its argument: start a second before the window.
            for (ZonedDateTime t = cron.next(now.minus(window).minusSeconds(1));
                    t != null && !t.isAfter(now);
                    t = cron.next(t)) {
                latest = t;
            }
            if (latest != null) {
                return Optional.of(latest);
            }
        }
        return Optional.empty();
    }
}
