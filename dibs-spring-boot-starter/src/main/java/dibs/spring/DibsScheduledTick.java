package dibs.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
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
 * ({@code 2026-12-02T02:00}): the starter records it as each run begins
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

    /** Resolves {@code ${...}} in a cron: the application's Environment, set by the starter. */
    private static volatile UnaryOperator<String> placeholders = UnaryOperator.identity();

    private DibsScheduledTick() {}

    static void resolvePlaceholdersWith(UnaryOperator<String> resolver) {
        placeholders = resolver;
    }

    /** @return the fire time the trigger of the scheduled run on this thread computed, if any */
    static Optional<Instant> recordedFire() {
        return Optional.ofNullable(FIRE.get());
    }

    /** Runs {@code run} as the scheduled run due at {@code fire} (see {@link DibsTickScheduler}). */
    static void runFiredAt(Instant fire, Runnable run) {
        Instant outer = FIRE.get();
        FIRE.set(fire);
        try {
            run.run();
        } finally {
            if (outer == null) {
                FIRE.remove();
            } else {
                FIRE.set(outer);
            }
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
        for (Method m : type.getDeclaredMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == 0) {
                Schedules all = m.getAnnotation(Schedules.class);
                Scheduled[] each = all != null ? all.value() : new Scheduled[] {m.getAnnotation(Scheduled.class)};
                for (Scheduled s : each) {
                    if (s != null && !s.cron().isEmpty()) {
                        return Optional.of(s);
                    }
                }
            }
        }
        return Optional.empty();
    }

    /**
     * How often the innermost {@code @Scheduled} method on this thread's stack runs: a
     * {@code fixedRate} or {@code fixedDelay}, or a cron's longest gap between fire times over
     * its next 64 (a weekday cron's is its weekend). A Spring proxy's frame is looked up on the
     * class it proxies, so that a ShedLock {@code @SchedulerLock} method is found too. Empty
     * outside one, or when the period cannot be read.
     */
    static Optional<Scheduled> currentScheduled() {
        return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .walk(frames -> frames.map(f -> scheduledOf(f.getDeclaringClass(), f.getMethodName()))
                        .flatMap(Optional::stream)
                        .findFirst());
    }

    private static Optional<Scheduled> scheduledOf(Class<?> type, String name) {
        for (Class<?> c = type;
                c != null && c != Object.class;
                c = c.getName().contains("$$") ? c.getSuperclass() : null) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(name) && m.getParameterCount() == 0) {
                    Schedules all = m.getAnnotation(Schedules.class);
                    Scheduled one =
                            all != null && all.value().length > 0 ? all.value()[0] : m.getAnnotation(Scheduled.class);
                    if (one != null) {
                        return Optional.of(one);
                    }
                }
            }
        }
        return Optional.empty();
    }

    /** The period of one {@code @Scheduled}; see {@link #currentScheduled()}. */
    static Optional<Duration> periodOf(Scheduled s) {
        try {
            if (!s.cron().isEmpty()) {
                String cron = placeholders.apply(s.cron());
                if (cron.equals(Scheduled.CRON_DISABLED) || !CronExpression.isValidExpression(cron)) {
                    return Optional.empty();
                }
                String zone = placeholders.apply(s.zone());
                ZonedDateTime t = ZonedDateTime.now(zone.isEmpty() ? ZoneId.systemDefault() : ZoneId.of(zone));
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
            String zone = placeholders.apply(scheduled.zone());
            ZoneId zoneId = zone.isEmpty() ? ZoneId.systemDefault() : ZoneId.of(zone);
            Instant fire = FIRE.get();
            Optional<ZonedDateTime> tick = fire != null
                    ? Optional.of(fire.atZone(zoneId))
                    : nearestFire(CronExpression.parse(cron), ZonedDateTime.now(zoneId));
            return tick.map(DibsScheduledTick::name);
        } catch (RuntimeException e) { // an unresolvable placeholder, an unknown zone
            return Optional.empty();
        }
    }

    /** A tick's name: its local date-time to the second. */
    static String name(ZonedDateTime fire) {
        return fire.toLocalDateTime().truncatedTo(ChronoUnit.SECONDS).toString();
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
