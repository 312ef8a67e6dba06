package dibs.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.LocalDateTime;
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
 * <p>The tick is the latest fire time of the method's cron at or before now, in the cron's zone
 * (the annotation's {@code zone}, else the system's), as an ISO-8601 local date-time
 * ({@code 2026-12-02T02:00}). An instance whose scheduler fires late, or whose clock is a little
 * behind or ahead, names the same tick, as long as the task starts before the next fire time.
 * Only a cron can be derived: a {@code fixedRate} or {@code fixedDelay} counts from each
 * instance's own start, so its runs share no tick across instances.
 */
public final class DibsScheduledTick {
    /** Resolves {@code ${...}} in a cron: the application's Environment, set by the starter. */
    private static volatile UnaryOperator<String> placeholders = UnaryOperator.identity();

    private DibsScheduledTick() {}

    static void resolvePlaceholdersWith(UnaryOperator<String> resolver) {
        placeholders = resolver;
    }

    /**
     * @return the tick of the innermost {@code @Scheduled} method with a cron on this thread's
     *     stack; empty outside one, or for one whose trigger is not a cron ({@code fixedRate},
     *     {@code fixedDelay}, a cron that cannot be parsed, or {@code "-"})
     */
    public static Optional<String> current() {
        return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .walk(frames -> frames.map(f -> cronOf(f.getDeclaringClass(), f.getMethodName()))
                        .flatMap(Optional::stream).findFirst())
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

    private static Optional<String> tickOf(Scheduled scheduled) {
        try {
            String cron = placeholders.apply(scheduled.cron());
            if (cron.equals(Scheduled.CRON_DISABLED) || !CronExpression.isValidExpression(cron)) {
                return Optional.empty();
            }
            String zone = placeholders.apply(scheduled.zone());
            ZoneId zoneId = zone.isEmpty() ? ZoneId.systemDefault() : ZoneId.of(zone);
            return latestFire(CronExpression.parse(cron), ZonedDateTime.now(zoneId))
                    .map(t -> t.toLocalDateTime().truncatedTo(ChronoUnit.SECONDS))
                    .map(LocalDateTime::toString);
        } catch (RuntimeException e) { // an unresolvable placeholder, an unknown zone
            return Optional.empty();
        }
    }

    /** The latest fire time at or before {@code now}: searched back over a window that doubles. */
    static Optional<ZonedDateTime> latestFire(CronExpression cron, ZonedDateTime now) {
        for (Duration window = Duration.ofSeconds(2); window.compareTo(Duration.ofDays(800)) <= 0;
                window = window.multipliedBy(2)) {
            ZonedDateTime latest = null;
            // next() is strictly after its argument: start a second before the window.
            for (ZonedDateTime t = cron.next(now.minus(window).minusSeconds(1)); t != null && !t.isAfter(now);
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
