package dibs;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A lock held now, fleet-wide, as {@link DibsClient#locks}, {@link DibsClient#running} or
 * {@link DibsClient#heldLock} found it. Its token is what
 * {@link DibsClient#forceRelease} takes; {@link #toString()} never shows it.
 */
public final class HeldLock {
    private static final int FIELDS = 7;

    private final String name;
    private final String host;
    private final long pid;
    private final long acquiredAtMs;
    private final long remainingMs;
    private final String token;
    private final boolean running;

    private HeldLock(String[] f, int at) {
        name = f[at];
        host = f[at + 1];
        pid = f[at + 2] == null ? -1 : Long.parseLong(f[at + 2]);
        acquiredAtMs = f[at + 3] == null ? -1 : Long.parseLong(f[at + 3]);
        remainingMs = f[at + 4] == null ? -1 : Long.parseLong(f[at + 4]);
        token = f[at + 5];
        running = "1".equals(f[at + 6]);
    }

    /** Reads the native side's table from cell {@code from}: {@value #FIELDS} cells per lock. */
    static List<HeldLock> fromTable(String[] cells, int from) {
        List<HeldLock> locks = new ArrayList<>(cells.length / FIELDS);
        for (int at = from; at + FIELDS <= cells.length; at += FIELDS) {
            locks.add(new HeldLock(cells, at));
        }
        return Collections.unmodifiableList(locks);
    }

    /** @return the lock's name */
    public String name() {
        return name;
    }

    /** @return the holder's host; empty when the value was not written by dibs */
    public Optional<String> host() {
        return Optional.ofNullable(host);
    }

    /** @return the holder's process id */
    public OptionalLong pid() {
        return pid < 0 ? OptionalLong.empty() : OptionalLong.of(pid);
    }

    /** @return when the holder acquired it, by its clock */
    public Optional<Instant> acquiredAt() {
        return acquiredAtMs < 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(acquiredAtMs));
    }

    /** @return how long until it expires; empty when it has no expiry */
    public Optional<Duration> remaining() {
        return remainingMs < 0 ? Optional.empty() : Optional.of(Duration.ofMillis(remainingMs));
    }

    /** @return the holder's token, for {@link DibsClient#forceRelease}; empty when not dibs's */
    public Optional<String> token() {
        return Optional.ofNullable(token);
    }

    /**
     * @return whether a run holds it now; false for a lock kept for the rest of its atLeast after
     *     its run ended, for a tick's done-mark, and for a value dibs did not write
     */
    public boolean running() {
        return running;
    }

    @Override
    public String toString() {
        return "HeldLock[" + name + ", host=" + (host == null ? "?" : host) + ", pid="
                + (pid < 0 ? "?" : Long.toString(pid)) + ", remaining="
                + remaining().map(Duration::toString).orElse("none") + (running ? ", running" : "") + "]";
    }
}
