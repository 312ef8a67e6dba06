package dibs.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Catch-up for a {@code @Scheduled} cron method: the ticks of its cron within {@link #window()}
 * that no instance ran are run once, across every instance, as {@link #policy()} says. The
 * method passes {@link DibsScheduledTick#catchUp()} to {@code DibsClient.executeOnce}:
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 2 * * *")
 * @CatchUp(policy = "latest", window = "PT12H")
 * void nightlyReport() {
 *     dibs.executeOnce("nightly-report", DibsScheduledTick.catchUp(), Duration.ofHours(1), tick -> build(tick));
 * }
 * }</pre>
 *
 * <p>At each fire, the missed ticks before it run first. When the application is ready, the
 * starter also runs the method once for the ticks that passed while no instance was up (a
 * deploy at 02:00), on the scheduler of the {@code @Scheduled} methods: a nightly job then waits
 * for no next night. See {@code dibs.DibsCatchUp} for what proves that a tick ran.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface CatchUp {
    /**
     * @return {@code skip} (run none), {@code latest} (the newest missed tick, once) or
     *     {@code all} (every missed tick, oldest first); {@code ${...}} placeholders are resolved
     */
    String policy() default "latest";

    /**
     * @return how far back to look, as ISO-8601 ({@code PT12H}); at most 30 days;
     *     {@code ${...}} placeholders are resolved
     */
    String window();
}
