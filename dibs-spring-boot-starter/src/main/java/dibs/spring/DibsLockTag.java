package dibs.spring;

import java.util.function.Function;

/**
 * Turns a lock name into the value of the {@code lock} tag of dibs's meters. Declare a bean of
 * this type to replace {@link #DEFAULT}.
 *
 * <p>A tag value is a time series in the meter registry, so names that change every run
 * ({@code report-2026-12-01}, {@code tick-1764547200}) would make a new series per run. The
 * default keeps the stable part of the name (see {@link #DEFAULT}).
 */
@FunctionalInterface
public interface DibsLockTag extends Function<String, String> {
    /**
     * Drops trailing segments that hold a digit, a segment being what follows the last
     * {@code -}, {@code _}, {@code .}, {@code :} or {@code /}: {@code report-2026-12-01} and
     * {@code report-2026-12-02} are both {@code report}, {@code tick-1764547200} is
     * {@code tick}, {@code shard-7} is {@code shard}, {@code nightly-report} stays as is. A
     * name with no such stable part ({@code 2026-12-01}, {@code 42}) becomes {@code other}.
     * Digits inside the stable part stay ({@code s3-sync} stays {@code s3-sync}).
     */
    // The run history's rule too (dibs.Dibs.jobOf, in Rust), copied here so that a meter event
    // costs no native call; DibsLockTagTest checks the two agree.
    DibsLockTag DEFAULT = DibsLockTag::stripVaryingSuffix;

    /** Every lock name as is: for services whose lock names are all constants. */
    DibsLockTag NAME = name -> name;

    /**
     * The default's rule, for a bean that adds to it.
     *
     * @param lockName a lock name
     * @return the name without its trailing digit-bearing segments, or {@code other}
     */
    static String stripVaryingSuffix(String lockName) {
        int end = lockName.length();
        while (end > 0) {
            int sep = end - 1;
            while (sep >= 0 && "-_.:/".indexOf(lockName.charAt(sep)) < 0) {
                sep--;
            }
            boolean digit = false;
            for (int i = sep + 1; i < end; i++) {
                if (Character.isDigit(lockName.charAt(i))) {
                    digit = true;
                    break;
                }
            }
            if (!digit && sep + 1 < end) {
                break; // a stable segment: keep it and all before it
            }
            end = Math.max(sep, 0); // drop the segment and its separator (an empty one too)
        }
        return end == 0 ? "other" : lockName.substring(0, end);
    }
}
