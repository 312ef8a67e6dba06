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
    private final String name;
    private final String host;
    private final long pid;
    private final long acquiredAtMs;
    private final long remainingMs;
    private final String token;
    private final boolean running;

    HeldLock(Border.Held held) {
        name = held.name;
        host = held.host;
        pid = held.pid;
        acquiredAtMs = held.acquiredAtMs;
        remainingMs = held.remainingMs;
        token = held.token;
        running = held.running;
    }

    /** The native side's held locks, in their order. */
    static List<HeldLock> all(Border.Held[] found) {
        List<HeldLock> locks = new ArrayList<>(found.length);
        for (Border.Held held : found) {
            locks.add(new HeldLock(held));
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
