package dibs.spring;

import dibs.DibsArgumentException;
import dibs.DibsOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;

/**
 * Where the auto-configured client's Redis is, in dibs's terms: from the application's
 * {@code RedisConnectionDetails} bean when it has one of its own ({@code @ServiceConnection},
 * Testcontainers, a hand-made bean), from {@code spring.data.redis.*} otherwise, bound with
 * Spring's {@link Binder} so that one class serves Boot 3 and Boot 4 and no Spring Data Redis is
 * needed. The timeouts come from {@code spring.data.redis.*} in both cases, as in Boot.
 *
 * <p>This class only translates: Spring's rules of precedence (a url overrides host, port,
 * username, password and database; Sentinel or Cluster overrides host and port; naming an SSL
 * bundle turns SSL on) and an SSL bundle's stores, which dibs takes as PEM text in memory ({@link BundlePem}).
 * The native
 * library checks every value, applies its defaults and describes the address without
 * credentials; a value it refuses comes back as a {@link DibsArgumentException} whose argument
 * {@link #refused} maps to the property, through a table.
 */
final class RedisSettings {
    static final String PREFIX = "spring.data.redis";
    /** How the properties of a RedisConnectionDetails bean are named in messages. */
    static final String DETAILS = "RedisConnectionDetails";

    /**
     * dibs's conn keys, as {@link DibsArgumentException#argument()} names them, and the
     * properties behind them (after {@link #PREFIX} or {@link #DETAILS}).
     */
    private static final Map<String, String> CONNECTION_PROPERTY = Map.ofEntries(
            Map.entry("uri", "url"),
            Map.entry("host", "host"),
            Map.entry("port", "port"),
            Map.entry("username", "username"),
            Map.entry("password", "password"),
            Map.entry("db", "database"),
            Map.entry("ssl", "ssl.enabled"),
            Map.entry("ca-cert", "ssl.bundle"),
            Map.entry("client-cert", "ssl.bundle"),
            Map.entry("client-key", "ssl.bundle"),
            Map.entry("ca-cert-pem", "ssl.bundle"),
            Map.entry("client-cert-pem", "ssl.bundle"),
            Map.entry("client-key-pem", "ssl.bundle"),
            Map.entry("sentinels", "sentinel.nodes"),
            Map.entry("master-name", "sentinel.master"),
            Map.entry("sentinel-username", "sentinel.username"),
            Map.entry("sentinel-password", "sentinel.password"),
            Map.entry("cluster-nodes", "cluster.nodes"));
    /** The keys that come from properties whatever gave the address. */
    private static final Map<String, String> OTHER_PROPERTY = Map.of(
            "read-timeout-ms", PREFIX + ".timeout",
            "conn-timeout-ms", PREFIX + ".connect-timeout",
            "key-prefix", DibsProperties.PREFIX + ".key-prefix",
            "keep-alive", DibsProperties.PREFIX + ".keep-alive",
            "durable", DibsProperties.PREFIX + ".durable",
            "history", DibsProperties.PREFIX + ".history",
            "instance-id", DibsProperties.PREFIX + ".instance-id",
            "retry-failed-ticks", DibsProperties.PREFIX + ".retry-failed-ticks",
            "retry-unended-ticks", DibsProperties.PREFIX + ".retry-unended-ticks");

    private final String url;
    private final String host;
    private final Integer port;
    private final String username;
    private final String password;
    private final Integer database;
    private final String sentinelMaster;
    private final List<String> sentinelNodes;
    /** The Sentinels' own credentials, apart from the master's. */
    private final String sentinelUsername;

    private final String sentinelPassword;
    private final List<String> clusterNodes;
    private final boolean ssl;
    /** The SSL bundle's CA and client certificate as files, or none (the system's CAs). */
    private final BundlePem tls;

    private final Duration timeout;
    private final Duration connectTimeout;
    /** What gave the address: {@link #PREFIX}, or {@link #DETAILS} for a bean. */
    private final String source;

    /**
     * What a {@code RedisConnectionDetails} bean gives, whatever Boot's type for it (Boot 3's
     * {@code RedisConnectionDetails}, Boot 4's {@code DataRedisConnectionDetails}): one of
     * standalone, sentinel or cluster, in Boot's order of precedence.
     *
     * @param nodes {@code host:port} entries, for sentinel and cluster
     */
    record Details(
            String username,
            String password,
            String host,
            Integer port,
            Integer database,
            String sentinelMaster,
            List<String> sentinelNodes,
            String sentinelUsername,
            String sentinelPassword,
            List<String> clusterNodes,
            SslBundle sslBundle) {
        /** @return {@code host:port}, with brackets around an IPv6 host */
        static String node(String host, int port) {
            return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }
    }

    private RedisSettings(Binder b, SslBundles bundles) {
        source = PREFIX;
        url = get(b, "url", String.class);
        host = get(b, "host", String.class);
        port = get(b, "port", Integer.class);
        username = get(b, "username", String.class);
        password = get(b, "password", String.class);
        database = get(b, "database", Integer.class);
        sentinelMaster = get(b, "sentinel.master", String.class);
        sentinelNodes = b.bind(PREFIX + ".sentinel.nodes", Bindable.listOf(String.class))
                .orElse(null);
        clusterNodes =
                b.bind(PREFIX + ".cluster.nodes", Bindable.listOf(String.class)).orElse(null);
        sentinelUsername = get(b, "sentinel.username", String.class);
        sentinelPassword = get(b, "sentinel.password", String.class);
        Boolean sslEnabled = get(b, "ssl.enabled", Boolean.class);
        String bundle = get(b, "ssl.bundle", String.class);
        // As in Spring Boot: naming a bundle turns SSL on, and so does a rediss:// url (dibs reads the scheme).
        ssl = (sslEnabled != null && sslEnabled) || (sslEnabled == null && bundle != null);
        tls = ssl && bundle != null ? BundlePem.of(bundle(bundles, bundle), PREFIX + ".ssl.bundle") : BundlePem.NONE;
        timeout = get(b, "timeout", Duration.class);
        connectTimeout = get(b, "connect-timeout", Duration.class);
    }

    private RedisSettings(Details d, Binder b) {
        source = DETAILS;
        url = null;
        host = d.host();
        port = d.port();
        username = d.username();
        password = d.password();
        database = d.database();
        sentinelMaster = d.sentinelMaster();
        sentinelNodes = d.sentinelNodes();
        clusterNodes = d.clusterNodes();
        sentinelUsername = d.sentinelUsername();
        sentinelPassword = d.sentinelPassword();
        ssl = d.sslBundle() != null;
        tls = ssl ? BundlePem.of(d.sslBundle(), DETAILS + ".ssl.bundle") : BundlePem.NONE;
        timeout = get(b, "timeout", Duration.class);
        connectTimeout = get(b, "connect-timeout", Duration.class);
    }

    /**
     * Binds {@code spring.data.redis.*}; throws, naming the property, when one cannot be read.
     *
     * @param bundles Spring's SSL bundles, for {@code spring.data.redis.ssl.bundle}; null without
     *     them
     */
    static RedisSettings bind(Binder binder, SslBundles bundles) {
        return new RedisSettings(binder, bundles);
    }

    /** The address of a RedisConnectionDetails bean, the timeouts of {@code spring.data.redis.*}. */
    static RedisSettings of(Details details, Binder binder) {
        return new RedisSettings(details, binder);
    }

    private static <T> T get(Binder b, String name, Class<T> type) {
        // A value that does not convert throws Spring's BindException, which names the property.
        return b.bind(PREFIX + "." + name, Bindable.of(type)).orElse(null);
    }

    /** The bundle that {@code spring.data.redis.ssl.bundle} names, from Spring's registry. */
    private static SslBundle bundle(SslBundles bundles, String name) {
        String property = PREFIX + ".ssl.bundle";
        if (bundles == null) {
            throw new DibsStartupException(
                    property,
                    "names the bundle '" + name
                            + "', but the context has no SslBundles (Spring Boot's SslAutoConfiguration)");
        }
        try {
            return bundles.getBundle(name);
        } catch (NoSuchSslBundleException e) {
            throw new DibsStartupException(
                    property,
                    "names the bundle '" + name + "', which is not configured" + " (spring.ssl.bundle.pem." + name
                            + " or spring.ssl.bundle.jks." + name + ")");
        } catch (RuntimeException e) {
            // Spring could not load the bundle's stores: its message names the file or the cause.
            throw new DibsStartupException(
                    property, "names the bundle '" + name + "', which could not be loaded: " + e.getMessage());
        }
    }

    /**
     * The conn options: Spring's settings in dibs's terms, for the native library to check. A
     * fresh builder each call, for the caller to add its own settings to.
     */
    DibsOptions.Builder toOptions() {
        DibsOptions.Builder o = DibsOptions.builder();
        boolean multiNode = sentinelMaster != null || sentinelNodes != null || clusterNodes != null;
        if (url != null) {
            o.uri(url);
        } else {
            // As in Spring Boot, a url overrides username, password and database, set or not in it.
            if (username != null) {
                o.username(username);
            }
            if (password != null) {
                o.password(password);
            }
            if (database != null) {
                o.db(database);
            }
        }
        if (sentinelMaster != null) {
            o.masterName(sentinelMaster);
        }
        if (sentinelNodes != null) {
            o.sentinels(String.join(",", sentinelNodes));
        }
        if (clusterNodes != null) {
            o.clusterNodes(String.join(",", clusterNodes));
        }
        // As in Spring Boot: the Sentinels' credentials count only for Sentinel, and an empty
        // password (from ${SENTINEL_PASSWORD:}) is none.
        boolean sentinel = sentinelMaster != null || sentinelNodes != null;
        boolean sentinelAuth = sentinelPassword != null && !sentinelPassword.isEmpty();
        if (sentinel && sentinelAuth) {
            o.sentinelAuth(
                    sentinelUsername == null || sentinelUsername.isEmpty() ? null : sentinelUsername, sentinelPassword);
        } else if (sentinel && sentinelUsername != null && !sentinelUsername.isEmpty()) {
            throw new DibsStartupException(
                    source + ".sentinel.password",
                    "is needed with " + source + ".sentinel.username: the Sentinels' user authenticates with it");
        }
        // As in Spring Boot, Sentinel and Cluster override host and port (dibs refuses a url beside them).
        if (url == null && !multiNode) {
            if (host != null) {
                o.host(host);
            }
            if (port != null) {
                o.port(port);
            }
        }
        if (ssl) {
            o.ssl(true);
        }
        if (tls.caCert() != null) {
            o.caCertPem(tls.caCert());
        }
        if (tls.clientCert() != null) {
            o.clientCertPem(tls.clientCert(), tls.clientKey());
        }
        if (timeout != null) {
            o.readTimeout(timeout);
        }
        if (connectTimeout != null) {
            o.connectTimeout(connectTimeout);
        }
        return o;
    }

    /**
     * Where Redis is, without credentials, as dibs's own messages name it: one native call that
     * parses and checks the options.
     *
     * @throws DibsStartupException naming the property, when dibs refuses a value
     */
    String describe() {
        try {
            return toOptions().build().describe();
        } catch (DibsArgumentException e) {
            throw refused(e);
        }
    }

    /** The property behind the argument dibs refused, by table; the message is dibs's own. */
    DibsStartupException refused(DibsArgumentException e) {
        String property = OTHER_PROPERTY.get(e.argument());
        if (property == null) {
            String suffix = CONNECTION_PROPERTY.get(e.argument());
            property = source + "." + (suffix == null ? "*" : suffix);
        }
        String from = source.equals(DETAILS) && !OTHER_PROPERTY.containsKey(e.argument())
                ? " (given by the application's RedisConnectionDetails bean)"
                : "";
        // dibs's messages never hold a password.
        return new DibsStartupException(property, "cannot be used" + from + ": " + e.getMessage(), e);
    }

    /** @return where the address came from, for the startup log */
    String source() {
        return source.equals(DETAILS) ? "the RedisConnectionDetails bean" : PREFIX + ".*";
    }

    /** Never the password nor the url (which may hold one): where the settings came from. */
    @Override
    public String toString() {
        return "RedisSettings[from " + source() + "]";
    }
}
