package dibs.spring;

import dibs.DibsOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.core.io.Resource;

/**
 * The {@code spring.data.redis.*} properties that dibs uses, bound with Spring's {@link Binder}
 * rather than through {@code RedisProperties} (Boot 3) or {@code DataRedisProperties} (Boot 4),
 * so that one auto-configuration serves both Boots. Translated into {@link DibsOptions}; every
 * error names the Spring property. The password is never part of a message or of
 * {@link #toString()}.
 */
final class RedisSettings {
    static final String PREFIX = "spring.data.redis";

    final String url;
    final String host;
    final Integer port;
    final String username;
    final String password;
    final Integer database;
    final boolean sslEnabled;
    final String sslBundle;
    final Duration timeout;
    final Duration connectTimeout;
    final String sentinelMaster;
    final List<String> sentinelNodes;
    final boolean sentinelPasswordSet;
    final boolean sentinelUsernameSet;
    final List<String> clusterNodes;
    /** Where the CA is read from, for {@link #toOptions()}; not resolved until then. */
    private final Binder binder;

    private RedisSettings(Binder b) {
        url = get(b, "url", String.class);
        host = get(b, "host", String.class);
        port = get(b, "port", Integer.class);
        username = get(b, "username", String.class);
        password = get(b, "password", String.class);
        database = get(b, "database", Integer.class);
        Boolean ssl = get(b, "ssl.enabled", Boolean.class);
        sslBundle = get(b, "ssl.bundle", String.class);
        // As in Spring Boot: naming a bundle turns SSL on.
        sslEnabled = (ssl != null && ssl) || (ssl == null && sslBundle != null);
        timeout = get(b, "timeout", Duration.class);
        connectTimeout = get(b, "connect-timeout", Duration.class);
        sentinelMaster = get(b, "sentinel.master", String.class);
        sentinelNodes = b.bind(PREFIX + ".sentinel.nodes", Bindable.listOf(String.class)).orElse(null);
        sentinelPasswordSet = get(b, "sentinel.password", String.class) != null;
        sentinelUsernameSet = get(b, "sentinel.username", String.class) != null;
        clusterNodes = b.bind(PREFIX + ".cluster.nodes", Bindable.listOf(String.class)).orElse(null);
        binder = b;
    }

    /** Binds {@code spring.data.redis.*}; throws, naming the property, when one cannot be read. */
    static RedisSettings bind(Binder binder) {
        return new RedisSettings(binder);
    }

    private static <T> T get(Binder b, String name, Class<T> type) {
        // A value that does not convert throws Spring's BindException, which names the property.
        return b.bind(PREFIX + "." + name, Bindable.of(type)).orElse(null);
    }

    /**
     * The CA of a PEM SSL bundle ({@code spring.ssl.bundle.pem.NAME.truststore.certificate}), as
     * a file: dibs reads a path, so a classpath resource is copied to a private temporary file.
     */
    private static Path bundleCa(Binder b, String bundle) {
        String base = "spring.ssl.bundle.pem." + bundle;
        String location = b.bind(base + ".truststore.certificate", String.class).orElse(null);
        if (location == null) {
            boolean jks = b.bind("spring.ssl.bundle.jks." + bundle, Bindable.mapOf(String.class, Object.class))
                    .isBound();
            throw new DibsStartupException(PREFIX + ".ssl.bundle", jks
                    ? "names the JKS bundle '" + bundle + "'; dibs reads a PEM CA: use spring.ssl.bundle.pem."
                            + bundle + ".truststore.certificate"
                    : "names the bundle '" + bundle + "', but " + base + ".truststore.certificate is not set");
        }
        String property = base + ".truststore.certificate";
        if (location.trim().startsWith("-----BEGIN")) {
            return copy(property, location.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        }
        Resource resource = new DefaultResourceLoader().getResource(location);
        if (!resource.exists()) {
            throw new DibsStartupException(property, "'" + location + "' does not exist");
        }
        try {
            if (resource.isFile()) {
                return resource.getFile().toPath();
            }
            try (InputStream in = resource.getInputStream()) {
                return copy(property, in.readAllBytes());
            }
        } catch (IOException e) {
            throw new DibsStartupException(property, "'" + location + "' could not be read: " + e.getMessage());
        }
    }

    private static Path copy(String property, byte[] pem) {
        try {
            Path file = Files.createTempFile("dibs-ca-", ".pem");
            file.toFile().deleteOnExit();
            Files.write(file, pem);
            return file;
        } catch (IOException e) {
            throw new DibsStartupException(property, "the CA could not be written to a temporary file: "
                    + e.getMessage());
        }
    }

    /**
     * The conn options: Spring's properties in dibs's terms. dibs re-validates them when the
     * client is made, and {@link DibsStartupException#fromDibs} maps its key names back.
     */
    DibsOptions.Builder toOptions() {
        DibsOptions.Builder o = DibsOptions.builder();
        boolean sentinel = sentinelMaster != null || sentinelNodes != null;
        boolean cluster = clusterNodes != null;
        if (sentinel && cluster) {
            throw new DibsStartupException(PREFIX + ".cluster.nodes",
                    "is set together with " + PREFIX + ".sentinel.*: give one of them");
        }
        if (sentinelPasswordSet || sentinelUsernameSet) {
            // dibs asks the Sentinels for the master without AUTH: a password it would not send
            // must not look as though it were used.
            throw new DibsStartupException(PREFIX + ".sentinel." + (sentinelPasswordSet ? "password" : "username"),
                    "is not supported: dibs asks the Sentinels without authenticating (the "
                            + PREFIX + ".password is the master's)");
        }
        if (url != null && (sentinel || cluster)) {
            throw new DibsStartupException(PREFIX + ".url", "is set together with " + PREFIX + "."
                    + (sentinel ? "sentinel" : "cluster") + ".*: give one of them");
        }
        if (url != null) {
            String uri = checkedUrl();
            // As in Spring Boot, either rediss:// or ssl.enabled turns TLS on; dibs wants the
            // scheme to say so rather than a contradicting "ssl" key.
            if (sslEnabled && uri.regionMatches(true, 0, "redis://", 0, 8)) {
                uri = "rediss://" + uri.substring(8);
            }
            o.uri(uri);
        }
        if (sentinel) {
            if (sentinelMaster == null) {
                throw new DibsStartupException(PREFIX + ".sentinel.master",
                        "is missing (" + PREFIX + ".sentinel.nodes is set)");
            }
            if (sentinelNodes == null || sentinelNodes.isEmpty()) {
                throw new DibsStartupException(PREFIX + ".sentinel.nodes",
                        "is missing (" + PREFIX + ".sentinel.master is set)");
            }
            // DibsOptions takes Sentinel and Cluster addresses as a URI; credentials and db are
            // given apart below, so the URI never holds a password.
            o.uri("redis+sentinel://" + nodes(sentinelNodes, "sentinel.nodes") + "/" + sentinelMaster);
        } else if (cluster) {
            if (clusterNodes.isEmpty()) {
                throw new DibsStartupException(PREFIX + ".cluster.nodes", "is empty");
            }
            if (database != null && database != 0) {
                throw new DibsStartupException(PREFIX + ".database", "must be 0 with a cluster (a cluster has only db 0)");
            }
            o.uri("redis+cluster://" + nodes(clusterNodes, "cluster.nodes"));
        } else if (url == null) {
            // Spring's defaults, which are dibs's too; given so that dibs checks them here.
            o.host(host == null ? "localhost" : host).port(port == null ? 6379 : port);
        }
        // As in Spring Boot, a url overrides host, port, username, password and database, set
        // or not in the url itself.
        if (url == null) {
            if (username != null) {
                o.username(username);
            }
            if (password != null) {
                o.password(password);
            }
            if (database != null && database != 0) {
                o.db(database);
            }
        }
        if (sslEnabled && url == null) {
            o.ssl(true);
        }
        if (sslEnabled && sslBundle != null) {
            // Resolved here, once per client: a classpath or inline CA becomes a temporary file.
            o.caCert(bundleCa(binder, sslBundle));
        }
        if (timeout != null) {
            o.readTimeout(positive("timeout", timeout));
        }
        if (connectTimeout != null) {
            o.connectTimeout(positive("connect-timeout", connectTimeout));
        }
        return o;
    }

    /** Spring's node list, checked enough that dibs's own message can name the property. */
    private static String nodes(List<String> list, String name) {
        for (String node : list) {
            if (node == null || node.isBlank() || node.contains("/") || node.contains("@")) {
                throw new DibsStartupException(PREFIX + "." + name, "holds '" + node + "'; give host:port entries");
            }
        }
        return String.join(",", list.stream().map(String::trim).toList());
    }

    private String checkedUrl() {
        String lower = url.toLowerCase(Locale.ROOT);
        if (!(lower.startsWith("redis://") || lower.startsWith("rediss://"))) {
            // Never echo the url: it may hold the password.
            throw new DibsStartupException(PREFIX + ".url", "must start with redis:// or rediss://");
        }
        return url;
    }

    private boolean urlHasUserInfo() {
        String rest = url.substring(url.indexOf("://") + 3);
        int slash = rest.indexOf('/');
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        return authority.contains("@");
    }

    private static Duration positive(String name, Duration d) {
        if (d.isNegative() || d.isZero()) {
            throw new DibsStartupException(PREFIX + "." + name, "must be positive, got " + d);
        }
        if (d.toMillis() == 0) {
            throw new DibsStartupException(PREFIX + "." + name, "must be at least 1 ms, got " + d);
        }
        return d;
    }

    /** Where Redis is, without credentials: for logs and the health details. */
    String describe() {
        if (sentinelNodes != null) {
            return "sentinel master '" + sentinelMaster + "' via " + String.join(",", sentinelNodes);
        }
        if (clusterNodes != null) {
            return "cluster " + String.join(",", clusterNodes);
        }
        if (url != null) {
            String rest = url.substring(url.indexOf("://") + 3);
            int at = rest.lastIndexOf('@');
            return url.substring(0, url.indexOf("://") + 3) + (at < 0 ? rest : rest.substring(at + 1));
        }
        return (host == null ? "localhost" : host) + ":" + (port == null ? 6379 : port);
    }

    @Override
    public String toString() {
        return "RedisSettings[" + describe() + (password != null || (url != null && urlHasUserInfo())
                ? ", password=***" : "") + "]";
    }
}
