package dibs.spring;

import dibs.Dibs;
import java.util.function.Function;

/**
 * Turns a lock name into the value of the {@code lock} tag of dibs's meters. Declare a bean of
 * this type to replace {@link #DEFAULT}.
 *
 * <p>A tag value is a time series in the meter registry, so names that change every run
 * ({@code report-2026-12-01}, {@code tick-1764547200}) would make a new series per run. The
 * default tags each call with its job ({@link Dibs#jobOf}), the same name its runs are recorded
 * under in the history and its expectations are kept by.
 */
@FunctionalInterface
public interface DibsLockTag extends Function<String, String> {
    /**
     * The lock's job ({@link Dibs#jobOf}, the run history's rule): {@code report-2026-12-01} and
     * {@code report-2026-12-02} are both {@code report}, {@code tick-1764547200} is
     * {@code tick}; {@code backup-db1}, {@code shard-7} and {@code nightly-report} stay as they
     * are.
     */
    DibsLockTag DEFAULT = Dibs::jobOf;

    /** Every lock name as is: for services whose lock names are all constants. */
    DibsLockTag NAME = name -> name;
}
