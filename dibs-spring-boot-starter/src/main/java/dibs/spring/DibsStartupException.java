package dibs.spring;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A property that dibs's auto-configuration cannot use: missing, unparsable or unsupported. It
 * fails the application's startup (never the first tick), and its message names the property.
 * It never holds a password.
 */
public final class DibsStartupException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** dibs's conn keys, as dibs's own messages name them, and the Spring properties behind them. */
    private static final Map<String, String> PROPERTIES = new LinkedHashMap<>();

    static {
        String p = RedisSettings.PREFIX + ".";
        PROPERTIES.put("uri", p + "url");
        PROPERTIES.put("host", p + "host");
        PROPERTIES.put("port", p + "port");
        PROPERTIES.put("username", p + "username");
        PROPERTIES.put("password", p + "password");
        PROPERTIES.put("db", p + "database");
        PROPERTIES.put("ssl", p + "ssl.enabled");
        PROPERTIES.put("ca-cert", p + "ssl.bundle");
        PROPERTIES.put("read-timeout-ms", p + "timeout");
        PROPERTIES.put("conn-timeout-ms", p + "connect-timeout");
        PROPERTIES.put("sentinels", p + "sentinel.nodes");
        PROPERTIES.put("master-name", p + "sentinel.master");
        PROPERTIES.put("cluster-nodes", p + "cluster.nodes");
        PROPERTIES.put("key-prefix", "dibs.key-prefix");
        PROPERTIES.put("keep-alive", "dibs.keep-alive");
    }

    private final String property;

    /**
     * @param property the property at fault, e.g. {@code spring.data.redis.sentinel.master}
     * @param problem what is wrong with it, without its value when that may be secret
     */
    public DibsStartupException(String property, String problem) {
        super(property + " " + problem);
        this.property = property;
    }

    private DibsStartupException(String property, String message, Throwable cause) {
        super(message, cause);
        this.property = property;
    }

    /** @return the property at fault */
    public String property() {
        return property;
    }

    /**
     * dibs rejected the options built from the properties: its message names its own key
     * ({@code 'db'}), here translated back to the property a Spring user sets.
     */
    static DibsStartupException fromDibs(IllegalArgumentException e, String where) {
        String message = String.valueOf(e.getMessage());
        String property = RedisSettings.PREFIX + ".*";
        for (Map.Entry<String, String> entry : PROPERTIES.entrySet()) {
            if (message.contains("'" + entry.getKey() + "'")) {
                property = entry.getValue();
                break;
            }
        }
        if (property.endsWith("*") && message.toLowerCase(java.util.Locale.ROOT).contains("tls")) {
            property = RedisSettings.PREFIX + ".ssl.enabled";
        }
        return new DibsStartupException(property, property + " cannot be used for " + where + ": " + message, e);
    }
}
