package dibs;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A lock as {@link Dibs#inspect} found it: whether it is held, for how much longer, and by whom.
 * Reading it costs one round trip and never changes the lock. The holder's host, pid and
 * acquisition time come from the key's value; they are empty when the key was not set by dibs.
 */
public final class LockInfo {
    private final boolean held;
    private final long remainingMs;
    private final String host;
    private final long pid;
    private final long acquiredAtMs;

    /** From what the native side read; -1 stands for "unknown". */
    LockInfo(Border.Inspected read) {
        this.held = read.held;
        this.remainingMs = read.remainingMs;
        this.host = read.host;
        this.pid = read.pid;
        this.acquiredAtMs = read.acquiredAtMs;
    }

    /** @return true if some instance holds the lock now */
    public boolean held() {
        return held;
    }

    /** @return how long until the lock expires; empty when it is not held or has no expiry */
    public Optional<Duration> remaining() {
        return remainingMs < 0 ? Optional.empty() : Optional.of(Duration.ofMillis(remainingMs));
    }

    /** @return the host name of the holder */
    public Optional<String> host() {
        return Optional.ofNullable(host);
    }

    /** @return the process id of the holder */
    public OptionalLong pid() {
        return pid < 0 ? OptionalLong.empty() : OptionalLong.of(pid);
    }

    /** @return when the holder acquired the lock, by its clock */
    public Optional<Instant> acquiredAt() {
        return acquiredAtMs < 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(acquiredAtMs));
    }

    @Override
    public String toString() {
        if (!held) {
            return "LockInfo[free]";
        }
        return "LockInfo[held, remaining=" + remaining().map(Duration::toString).orElse("none")
                + ", host=" + host().orElse("?") + ", pid=" + (pid < 0 ? "?" : Long.toString(pid))
                + ", acquiredAt=" + acquiredAt().map(Instant::toString).orElse("?") + "]";
    }
}
