package dibs.robustness;

import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.time.zone.ZoneRulesProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;

/**
 * The Spring workers' zone, {@code Dibs/Harness}: a DST change every {@link #EVERY_S} seconds from
 * an anchor the harness gives every worker alike, so that a run of a minute meets both: at the
 * anchor and every {@code 2 * EVERY_S} after it, a fall-back of {@link #SHIFT_S} seconds (the
 * local seconds before it come again: a cron fires them twice), and {@code EVERY_S} after each, a
 * spring-forward of as much (those local seconds never come). The shift is even, so a cron every 1
 * or 2 s still fires at the same instants as in UTC, which the checker counts on; only the names
 * of the ticks change. {@code java.time} knows the zone, {@code TimeZone} does not: it is the
 * scheduler's clock's zone, in which Spring fires a cron without a {@code zone}.
 */
final class HarnessZone {
    static final String ID = "Dibs/Harness";
    static final int EVERY_S = 20;
    static final int SHIFT_S = 4;
    /** A day of changes: longer than any run. */
    private static final int CHANGES = 24 * 3600 / EVERY_S;

    private HarnessZone() {}

    /** Registers the zone (once per JVM) with its changes from {@code anchorEpochS}, and returns it. */
    static synchronized ZoneId register(long anchorEpochS) {
        if (!ZoneId.getAvailableZoneIds().contains(ID)) {
            ZoneRules rules = rules(anchorEpochS);
            ZoneRulesProvider.registerProvider(new ZoneRulesProvider() {
                @Override
                protected Set<String> provideZoneIds() {
                    return Set.of(ID);
                }

                @Override
                protected ZoneRules provideRules(String zoneId, boolean forCaching) {
                    return rules;
                }

                @Override
                protected NavigableMap<String, ZoneRules> provideVersions(String zoneId) {
                    return new TreeMap<>(java.util.Map.of("1", rules));
                }
            });
        }
        return ZoneId.of(ID);
    }

    private static ZoneRules rules(long anchorEpochS) {
        ZoneOffset ahead = ZoneOffset.ofTotalSeconds(SHIFT_S);
        List<ZoneOffsetTransition> changes = new ArrayList<>();
        for (int k = 0; k < CHANGES; k++) {
            ZoneOffset before = k % 2 == 0 ? ahead : ZoneOffset.UTC;
            ZoneOffset after = k % 2 == 0 ? ZoneOffset.UTC : ahead;
            long at = anchorEpochS + (long) k * EVERY_S;
            changes.add(ZoneOffsetTransition.of(LocalDateTime.ofEpochSecond(at, 0, before), before, after));
        }
        return ZoneRules.of(ZoneOffset.UTC, ahead, List.of(), changes, List.of());
    }
}
