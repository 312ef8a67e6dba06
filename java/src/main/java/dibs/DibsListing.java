package dibs;

import java.util.AbstractList;
import java.util.List;

/**
 * What a scan of the keyspace found ({@link DibsClient#locks}, {@link DibsClient#jobs}): complete,
 * or cut short by its time budget, and then it says so instead of passing for complete. A scan
 * covers every master of a Redis Cluster. A list; immutable.
 *
 * @param <T> what is listed
 */
public final class DibsListing<T> extends AbstractList<T> {
    private final List<T> items;
    private final boolean complete;
    private final boolean truncated;
    private final long scannedKeys;
    private final long keys;

    DibsListing(List<T> items, Border.Listing found) {
        this.items = items;
        this.complete = found.complete;
        this.truncated = found.truncated;
        this.scannedKeys = found.scanned;
        this.keys = found.keys;
    }

    @Override
    public T get(int index) {
        return items.get(index);
    }

    @Override
    public int size() {
        return items.size();
    }

    /**
     * @return whether the scan reached the end of the keyspace (on every master): when false,
     *     something it lists no entry for may exist all the same
     */
    public boolean complete() {
        return complete;
    }

    /** @return whether more matched than the limit: then these are the first of them */
    public boolean truncated() {
        return truncated;
    }

    /** @return about how many keys the scan looked at */
    public long scannedKeys() {
        return scannedKeys;
    }

    /** @return how many keys there are (summed over the masters) */
    public long keys() {
        return keys;
    }

    /**
     * @return for a listing cut short, {@code partial: scanned about N of M keys}; empty when
     *     complete
     */
    public String partialNote() {
        return complete ? "" : "partial: scanned about " + scannedKeys + " of " + keys + " keys";
    }

    @Override
    public String toString() {
        return items + (complete ? "" : " (" + partialNote() + ")");
    }
}
