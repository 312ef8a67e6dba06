package dibs.spring;

import dibs.DibsClient;
import dibs.DibsException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The health of the auto-configured client, whatever Boot's health API: the native library is
 * loaded (the client exists, and a call into it works) and Redis answers one read within the
 * client's timeout ({@code spring.data.redis.timeout}). The read is {@link DibsClient#inspect}
 * of a lock no job uses: one round trip that changes nothing. Boot 3 and Boot 4 each have a thin
 * adapter ({@link DibsHealthIndicatorBoot3}, {@link DibsHealthIndicatorBoot4}).
 */
public final class DibsHealthCheck {
    /** The lock name read by the check; no job should use it. */
    static final String PROBE = "dibs-health-probe";

    private final DibsClient client;
    private final String address;

    /**
     * @param client the client to check
     * @param target where its Redis is, without credentials
     */
    public DibsHealthCheck(DibsClient client, DibsTarget target) {
        this.client = client;
        this.address = target.address();
    }

    /**
     * One check.
     *
     * @return whether dibs can take locks now, and details; never a password or a token
     */
    public Result check() {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("redis", address);
        long start = System.nanoTime();
        try {
            client.inspect(PROBE);
            details.put("nativeLibrary", "loaded");
            details.put("roundTripMs", (System.nanoTime() - start) / 1_000_000);
            return new Result(true, details, null);
        } catch (LinkageError e) {
            details.put("nativeLibrary", "not loaded");
            return new Result(false, details, "the dibs native library is not loaded: " + e);
        } catch (DibsException e) {
            details.put("nativeLibrary", "loaded");
            // dibs's messages never hold a password.
            return new Result(false, details, "Redis did not answer: " + e.getMessage());
        } catch (IllegalStateException e) {
            return new Result(false, details, "the DibsClient is closed");
        }
    }

    /**
     * The outcome of one check.
     *
     * @param up true when locks can be taken now
     * @param details what was checked, for the health details
     * @param reason why not, when down
     */
    public record Result(boolean up, Map<String, Object> details, String reason) {}
}
