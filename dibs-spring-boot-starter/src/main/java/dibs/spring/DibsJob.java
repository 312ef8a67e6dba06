package dibs.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The dibs job a {@code @Scheduled} method locks, named up front: the starter expects it from
 * start-up on, every period of the method's {@code fixedRate}, {@code fixedDelay} or cron (unless
 * {@code dibs.jobs.expect-every.<job>} gives one), not from its first attempt. So a job whose every
 * fire throws before its lock is tried (a bad placeholder, a dependency down) is overdue after its
 * period and grace, in the {@code dibsJobs} health, the {@code dibs.job.overdue} gauge and
 * {@code /actuator/dibs}; so is a suspending {@code @Scheduled} function, whose lock is tried on
 * another thread than its fire's. Without it, the starter learns a job from its method's first
 * attempt.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 2 * * *")
 * @DibsJob("nightly-billing")
 * void nightlyBilling() {
 *     dibs.executeOnce("nightly-billing", DibsScheduledTick.current().orElseThrow(), Duration.ofHours(1), this::bill);
 * }
 * }</pre>
 *
 * <p>Checked at start-up: a method that is not {@code @Scheduled}, a name that is not a job's
 * (a per-tick name), or a period that cannot be read fails it with a {@link DibsStartupException}.
 * A cron of {@code "-"} (disabled) expects nothing.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface DibsJob {
    /**
     * @return the job, as its runs are recorded ({@code dibs.Dibs#jobOf} of its lock names: for
     *     {@code executeOnce}, the name it is given); {@code ${...}} placeholders are resolved
     */
    String value();
}
