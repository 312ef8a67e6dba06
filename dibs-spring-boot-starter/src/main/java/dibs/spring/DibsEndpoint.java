package dibs.spring;

import dibs.DibsClient;
import dibs.DibsException;
import dibs.LockInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code /actuator/dibs}: the locks whose tasks run on this instance now, with how long each has
 * been held, its remaining TTL in Redis (one {@code inspect} per lock) and whether keep-alive
 * extends it. Never a token or a password. Expose it as any endpoint
 * ({@code management.endpoints.web.exposure.include=health,dibs}).
 */
@Endpoint(id = "dibs")
public final class DibsEndpoint {
    private final DibsHeldLocks held;
    private final DibsClient client;
    private final boolean keepAlive;

    /**
     * @param held the locks held now
     * @param client the client, for each lock's remaining TTL
     * @param properties for keep-alive
     */
    public DibsEndpoint(DibsHeldLocks held, DibsClient client, DibsProperties properties) {
        this.held = held;
        this.client = client;
        this.keepAlive = properties.keepAlive();
    }

    /** @return the locks held now */
    @ReadOperation
    public Locks locks() {
        List<HeldLock> locks = new ArrayList<>();
        for (DibsHeldLocks.Entry e : held.snapshot()) {
            Long remaining = null;
            try {
                LockInfo info = client.inspect(e.name());
                remaining = info.remaining().map(Duration::toMillis).orElse(null);
            } catch (DibsException | IllegalStateException ignored) {
                // Redis unreachable: the entry is still ours to show, its TTL unknown (null).
            }
            locks.add(new HeldLock(e.name(), e.since().toString(), e.heldFor().toMillis(), remaining, keepAlive,
                    e.fencingToken()));
        }
        return new Locks(locks.size(), locks);
    }

    /**
     * The endpoint's answer.
     *
     * @param count how many locks are held
     * @param locks the locks, the longest-held first
     */
    public record Locks(int count, List<HeldLock> locks) {}

    /**
     * One lock held now.
     *
     * @param name the lock's name
     * @param acquiredAt when this instance acquired it (ISO-8601)
     * @param heldForMs how long it has been held, in milliseconds
     * @param remainingTtlMs its remaining TTL in Redis, in milliseconds; null when unknown
     * @param keepAlive whether keep-alive extends it while its task runs
     * @param fencingToken the fencing token its task runs under
     */
    public record HeldLock(String name, String acquiredAt, long heldForMs, Long remainingTtlMs, boolean keepAlive,
            long fencingToken) {}
}
