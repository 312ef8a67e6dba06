package dibs.spring;

import dibs.DibsClient;
import dibs.HeldLock;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Objects;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * {@code POST /actuator/dibsrelease/{name}}: an operator's forced release of a lock, fleet-wide,
 * recorded in its job's history as forced by {@code actuator:<principal>@<host>}. Made only with
 * {@code dibs.actuator.force-release=true}, and reachable only once exposed by its own id
 * ({@code management.endpoints.web.exposure.include=...,dibsrelease}): exposing {@code dibs}
 * never exposes it. Guard it with a role (see the starter's README).
 *
 * <p>The request names the holding as {@code GET /actuator/dibs/{name}} shows it: its
 * {@code holderId} (a digest of its token, another for each acquisition). The endpoint reads the
 * token itself and releases with it, token-checked: a lock taken since by another holder, or by
 * the same process again, is never touched, and no token crosses the wire.
 */
@Endpoint(id = "dibsrelease")
public final class DibsReleaseEndpoint {
    /** The history's limit on who forced a release. */
    private static final int MAX_BY_BYTES = 128;

    private final DibsClient client;
    private final String host;

    /** @param client the client */
    public DibsReleaseEndpoint(DibsClient client) {
        this.client = Objects.requireNonNull(client, "client");
        this.host = localHost();
    }

    /**
     * Force-releases {@code name} if the holding is still the one named.
     *
     * @param name the lock's name
     * @param holderId the holding's id, as {@code /actuator/dibs/{name}} shows it
     * @param security who asks, for the history
     * @return what was done
     */
    @WriteOperation
    public ForcedRelease release(@Selector String name, String holderId, SecurityContext security) {
        HeldLock lock = client.heldLock(name).orElse(null);
        if (lock == null) {
            return new ForcedRelease(name, false, "free: not touched");
        }
        if (!holderId.equals(DibsEndpoint.LockHolder.idOf(lock)) || lock.token().isEmpty()) {
            return new ForcedRelease(
                    name, false, "held by another holder than the one named (taken since?): not touched");
        }
        boolean released = client.forceRelease(name, lock.token().get(), forcedBy(security));
        return new ForcedRelease(
                name,
                released,
                released
                        ? "released; recorded in the history as forced"
                        : "taken since by another holder: not touched");
    }

    /** {@code actuator:<principal>@<host>}, or {@code actuator@<host>}, as the history takes it. */
    private String forcedBy(SecurityContext security) {
        Principal principal = security == null ? null : security.getPrincipal();
        String by = principal == null ? "actuator@" + host : "actuator:" + principal.getName() + "@" + host;
        StringBuilder kept = new StringBuilder();
        for (int i = 0; i < by.length(); ) {
            int c = by.codePointAt(i);
            String shown = Character.isISOControl(c) || c == ';' ? "?" : new String(Character.toChars(c));
            if (kept.toString().getBytes(StandardCharsets.UTF_8).length + shown.getBytes(StandardCharsets.UTF_8).length
                    > MAX_BY_BYTES) {
                break;
            }
            kept.append(shown);
            i += Character.charCount(c);
        }
        return kept.toString();
    }

    private static String localHost() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    /**
     * What a forced release did.
     *
     * @param name the lock's name
     * @param released whether it was deleted
     * @param message why, or why not
     */
    public record ForcedRelease(String name, boolean released, String message) {}
}
