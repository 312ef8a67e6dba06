package dibs.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;

/**
 * The checks, at start-up, of values the starter would otherwise read only later (at a fire, at a
 * refresh): the {@code dibs.jobs.*} durations, and each {@link CatchUp} method's policy, window,
 * cron and zone, placeholders resolved. A value that cannot be used fails the start-up with a
 * {@link DibsStartupException} naming it, instead of every fire of the job throwing.
 */
final class StartupChecks {
    private StartupChecks() {}

    /** The {@code dibs.jobs.*} durations: each period and limit more than 0, each grace not negative. */
    static void check(DibsProperties.Jobs jobs) {
        positive("dibs.jobs.refresh", jobs.refresh());
        if (jobs.grace() != null) {
            notNegative("dibs.jobs.grace", jobs.grace());
        }
        each("dibs.jobs.expect-every.", jobs.expectEvery(), true);
        each("dibs.jobs.min-duration.", jobs.minDuration(), true);
        each("dibs.jobs.max-duration.", jobs.maxDuration(), true);
        each("dibs.jobs.grace-after-start.", jobs.graceAfterStart(), false);
    }

    private static void each(String prefix, Map<String, Duration> byJob, boolean positive) {
        byJob.forEach((job, d) -> {
            if (positive) {
                positive(prefix + job, d);
            } else {
                notNegative(prefix + job, d);
            }
        });
    }

    private static void positive(String property, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new DibsStartupException(property, "must be more than 0, got " + d);
        }
    }

    private static void notNegative(String property, Duration d) {
        if (d == null || d.isNegative()) {
            throw new DibsStartupException(property, "must not be negative, got " + d);
        }
    }

    /**
     * A method with {@link CatchUp}: it must be {@code @Scheduled} with a cron that parses, in a
     * zone that exists, and its policy and window must be readable.
     *
     * @return the method's {@code @Scheduled} with the cron
     */
    static Scheduled check(Method method, CatchUp annotation) {
        String where = "@CatchUp of " + method.getDeclaringClass().getName() + "." + method.getName() + "()";
        Scheduled scheduled = DibsScheduledTick.cronOf(method)
                .orElseThrow(() -> new DibsStartupException(where, "is for a @Scheduled cron method"));
        if (method.getParameterCount() != 0) {
            throw new DibsStartupException(where, "is for a method without parameters");
        }
        read(where + " policy", () -> DibsScheduledTick.policyOf(annotation));
        read(where + " window", () -> DibsScheduledTick.windowOf(annotation));
        String cron = read(where + " @Scheduled cron", () -> DibsScheduledTick.resolve(scheduled.cron()));
        if (!cron.equals(Scheduled.CRON_DISABLED)) {
            read(where + " @Scheduled cron", () -> CronExpression.parse(cron));
        }
        read(where + " @Scheduled zone", () -> DibsScheduledTick.zoneOf(scheduled));
        return scheduled;
    }

    /**
     * A {@link DibsJob}'s name, placeholders resolved: it must be a job's own name (not a
     * per-tick lock name), as its runs are recorded.
     */
    static String jobOf(String where, String value, java.util.function.UnaryOperator<String> placeholders) {
        String job = read(where, () -> placeholders.apply(value));
        String own = read(where, () -> dibs.Dibs.jobOf(job));
        if (job.isBlank() || !own.equals(job)) {
            throw new DibsStartupException(
                    where, "must name a job, as its runs are recorded ('" + own + "'), got '" + job + "'");
        }
        return job;
    }

    /**
     * The period of a {@link DibsJob} method's {@code @Scheduled} (a suspending function's too):
     * empty for a disabled cron ({@code "-"}).
     */
    static java.util.Optional<Duration> periodOf(String where, Method method) {
        org.springframework.scheduling.annotation.Schedules all =
                method.getAnnotation(org.springframework.scheduling.annotation.Schedules.class);
        Scheduled scheduled =
                all != null && all.value().length > 0 ? all.value()[0] : method.getAnnotation(Scheduled.class);
        if (scheduled == null) {
            throw new DibsStartupException(where, "is for a @Scheduled method");
        }
        if (!scheduled.cron().isEmpty()
                && read(where + " @Scheduled cron", () -> DibsScheduledTick.resolve(scheduled.cron()))
                        .equals(Scheduled.CRON_DISABLED)) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(DibsScheduledTick.periodOf(scheduled)
                .orElseThrow(() -> new DibsStartupException(where, "has a @Scheduled whose period cannot be read")));
    }

    private static <T> T read(String what, java.util.function.Supplier<T> value) {
        try {
            return value.get();
        } catch (RuntimeException e) { // an unresolvable placeholder, a typo, an unknown zone
            throw new DibsStartupException(what, "cannot be used: " + e.getMessage(), e);
        }
    }
}
