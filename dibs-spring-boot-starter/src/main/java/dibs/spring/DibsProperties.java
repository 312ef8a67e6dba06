package dibs.spring;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code dibs.*} properties: what Spring's Redis properties cannot say. Bound by Spring
 * ({@code @ConfigurationProperties}), which also generates their IDE metadata. The native
 * library checks the values and owns the defaults that are left unset.
 *
 * <p>The {@code @param} texts below are the IDE's descriptions, hence their style.
 *
 * @param enabled Whether to auto-configure a DibsClient (and dibs's meters, health indicator and
 *     endpoint).
 * @param keyPrefix What every lock key starts with. Unset, dibs's own default applies ("dibs:").
 * @param keepAlive Whether to extend a held lock every atMost / 3 while its task runs, so that a
 *     task may outlive atMost and still hold it.
 * @param interruptOnLost With keep-alive: whether a lock found lost (taken by another holder, or
 *     not extended before it would lapse) interrupts the thread that runs its task.
 * @param durable Durable acquire: "auto" (wait for 1 replica behind Sentinel, and elsewhere where the master reports one),
 *     "off", a number of replicas, "aof" or "aof:N" (WAITAOF, Redis 7.2+). Unset, dibs's own
 *     default applies ("auto").
 * @param metrics dibs's Micrometer meters.
 */
@ConfigurationProperties(DibsProperties.PREFIX)
public record DibsProperties(@DefaultValue("true") boolean enabled, String keyPrefix, boolean keepAlive,
        boolean interruptOnLost, String durable, @DefaultValue Metrics metrics) {
    static final String PREFIX = "dibs";

    /**
     * {@code dibs.metrics.*}.
     *
     * @param enabled Whether to register dibs's Micrometer meters (dibs.lock.*) when there is a
     *     MeterRegistry.
     */
    public record Metrics(@DefaultValue("true") boolean enabled) {}
}
