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

    private DibsListing(List<T> items, String[] head) {
        this.items = items;
        this.complete = Boolean.parseBoolean(head[0]);
        this.truncated = Boolean.parseBoolean(head[1]);
        this.scannedKeys = Long.parseLong(head[2]);
        this.keys = Long.parseLong(head[3]);
    }

    /** The native side's head: complete, truncated, keys scanned, keys there are. */
    static final int HEAD = 4;

    static <T> DibsListing<T> of(List<T> items, String[] cells) {
        return new DibsListing<>(items, cells);
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
