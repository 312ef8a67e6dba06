package dibs.spring;

import dibs.DibsListener;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The locks whose tasks run on this instance now, heard through {@link DibsListener}: added on
 * {@code acquired}, removed on {@code finished} (which every acquired call hears, however its
 * release went, so a failed release cannot leave an entry behind). Read by the
 * {@code /actuator/dibs} endpoint and the {@code dibs.locks.active} gauge. Thread-safe.
 *
 * <p>Every lock of the auto-configured {@code DibsClient} is seen: its locked calls
 * ({@code execute}, {@code attempt}, ...) and its leases from {@code tryLock} (the ShedLock
 * provider's and Kotlin's locks), which tell the listener the same way.
 */
public final class DibsHeldLocks implements DibsListener {
    /** Per lock name, how many calls of this instance hold it and since when (the first). */
    private final ConcurrentMap<String, Held> held = new ConcurrentHashMap<>();

    DibsHeldLocks() {}

    @Override
    public void acquired(String lockName, long fencingToken) {
        held.compute(
                lockName,
                (name, h) -> h == null
                        ? new Held(Instant.now(), 1, fencingToken)
                        : new Held(h.since, h.count + 1, Math.max(h.fencingToken, fencingToken)));
    }

    @Override
    public void finished(String lockName, Duration duration) {
        held.computeIfPresent(
                lockName, (name, h) -> h.count <= 1 ? null : new Held(h.since, h.count - 1, h.fencingToken));
    }

    /** @return how many locks this instance holds now */
    public int count() {
        return held.size();
    }

    /** @return the locks held now, the longest-held first */
    public List<Entry> snapshot() {
        Instant now = Instant.now();
        List<Entry> list = new ArrayList<>();
        held.forEach((name, h) -> list.add(new Entry(name, h.since, Duration.between(h.since, now), h.fencingToken)));
        list.sort(Comparator.comparing(Entry::since));
        return list;
    }

    /**
     * One lock held now.
     *
     * @param name the lock's name
     * @param since when this instance acquired it
     * @param heldFor how long it has been held
     * @param fencingToken the fencing token of its latest acquisition here
     */
    public record Entry(String name, Instant since, Duration heldFor, long fencingToken) {}

    private record Held(Instant since, int count, long fencingToken) {}
}
