package dibs;

import dibs.loader.NativeLoader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Typed options for those who prefer them to a URI or a Map. Accepted wherever a {@code conn} is.
 * Every setting is optional; what is left out takes the default of the README's connection
 * table (127.0.0.1:6379, db 0, 4 s timeouts, key prefix {@code dibs:}, no keep-alive). The
 * native side validates the values when the options are first used, as it does for maps, and
 * its messages name the map key ({@code conn-timeout-ms} for {@link Builder#connectTimeout}).
 *
 * <pre>{@code
 * DibsOptions options = DibsOptions.builder()
 *         .uri("rediss://redis:6380")
 *         .caCert(Path.of("/etc/ssl/redis-ca.pem"))
 *         .keepAlive(true)
 *         .listener(metrics)
 *         .build();
 * Dibs.execute(options, "nightly-report", 600, 30, () -> buildReport());
 * }</pre>
 *
 * Instances are immutable and compare by value, so that equal options share one pool.
 */
public final class DibsOptions {
    private final Map<String, Object> spec;
    private final Integer maxConnections;
    private final DibsListener listener;
    private final boolean interruptOnLost;

    private DibsOptions(Builder b) {
        this.spec = Map.copyOf(b.spec);
        this.maxConnections = b.maxConnections;
        this.listener = b.listener;
        this.interruptOnLost = b.interruptOnLost;
    }

    /** @return a builder with nothing set */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * @param uri a Redis URI, as for a String conn
     * @return options for that URI, everything else default
     */
    public static DibsOptions of(String uri) {
        return builder().uri(uri).build();
    }

    /**
     * Where these options lead, as dibs's messages name it ({@code 127.0.0.1:6379}, the
     * Sentinels' master, the cluster's nodes), never with credentials. The native library
     * parses and checks the options to answer, as it does when they are first used, and reads
     * the TLS files they name ({@code ca-cert}, {@code client-cert}, {@code client-key}) or the PEM
     * texts they hold ({@code ca-cert-pem}, ...), so a
     * bad setting or file fails here; no connection is made.
     *
     * @return the address, for people to read
     * @throws DibsArgumentException if a setting is invalid; {@link DibsArgumentException#argument()}
     *     names its conn key ({@code conn-timeout-ms} for {@link Builder#connectTimeout})
     */
    public String describe() {
        NativeLoader.load(); // a failed load is its own detailed error, as in ConnCache
        return ConnCache.describe(this);
    }

    /** @return the listener, or null */
    DibsListener listener() {
        return listener;
    }

    /** @return whether a lost lock interrupts its holder's thread */
    boolean interruptOnLost() {
        return interruptOnLost;
    }

    /** The conn map the native side parses: Carmine's spec keys, with a pool when set. */
    Map<String, Object> toConnMap() {
        if (maxConnections == null) {
            return spec;
        }
        Map<String, Object> conn = new LinkedHashMap<>();
        conn.put("spec", spec);
        conn.put("pool", Map.of("max-total", maxConnections));
        return conn;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof DibsOptions)) {
            return false;
        }
        DibsOptions other = (DibsOptions) o;
        return spec.equals(other.spec)
                && Objects.equals(maxConnections, other.maxConnections)
                && listener == other.listener
                && interruptOnLost == other.interruptOnLost;
    }

    @Override
    public int hashCode() {
        return Objects.hash(spec, maxConnections, System.identityHashCode(listener), interruptOnLost);
    }

    /** Shows every setting but the passwords and the PEM texts. */
    @Override
    public String toString() {
        Map<String, Object> shown = new LinkedHashMap<>(spec);
        for (String secret :
                new String[] {"password", "sentinel-password", "ca-cert-pem", "client-cert-pem", "client-key-pem"}) {
            if (shown.containsKey(secret)) {
                shown.put(secret, "***");
            }
        }
        if (shown.containsKey("uri")) {
            shown.put("uri", "(set)");
        }
        return "DibsOptions" + shown + (maxConnections == null ? "" : ", maxConnections=" + maxConnections)
                + (listener == null ? "" : ", listener=" + listener.getClass().getName())
                + (interruptOnLost ? ", interruptOnLost" : "");
    }

    /** Builds {@link DibsOptions}. Not thread-safe; each setter returns this builder. */
    public static final class Builder {
        private final Map<String, Object> spec = new LinkedHashMap<>();
        private Integer maxConnections;
        private DibsListener listener;
        private boolean interruptOnLost;

        private Builder() {}

        /**
         * @param uri a Redis URI; settings given below must not contradict it
         * @return this builder
         */
        public Builder uri(String uri) {
            return put("uri", uri);
        }

        /** @param host the server's host name or address @return this builder */
        public Builder host(String host) {
            return put("host", host);
        }

        /** @param port the server's port, 1 to 65535 @return this builder */
        public Builder port(int port) {
            return put("port", port);
        }

        /** @param username the ACL user @return this builder */
        public Builder username(String username) {
            return put("username", username);
        }

        /** @param password the password; never shown by {@link #toString()} or messages @return this builder */
        public Builder password(String password) {
            return put("password", password);
        }

        /** @param db the database number @return this builder */
        public Builder db(int db) {
            return put("db", db);
        }

        /** @param ssl whether to use TLS @return this builder */
        public Builder ssl(boolean ssl) {
            return put("ssl", ssl);
        }

        /** @param caCert a PEM file of CAs the server's certificate must chain to (TLS) @return this builder */
        public Builder caCert(Path caCert) {
            return put("ca-cert", caCert == null ? null : caCert.toString());
        }

        /**
         * A client certificate for mutual TLS, presented on every TLS connection (to the server,
         * the Sentinels and every node of a cluster), as servers with Redis's default
         * {@code tls-auth-clients yes} require. Both files are read when the options are first
         * used; a file that cannot be read, or a key that does not fit the certificate, fails
         * there, naming {@code client-cert} or {@code client-key}.
         *
         * @param cert a PEM file: the certificate, optionally followed by the intermediates
         *     that chain it to the server's CA
         * @param key a PEM file: its private key (PKCS#8, PKCS#1 or SEC1), unencrypted
         * @return this builder
         */
        public Builder clientCert(Path cert, Path key) {
            put("client-cert", cert == null ? null : cert.toString());
            return put("client-key", key == null ? null : key.toString());
        }

        /**
         * The CAs the server's certificate must chain to, as PEM text in memory: as
         * {@link #caCert(Path)}, with no file.
         *
         * @param pem one or more PEM certificates ({@code -----BEGIN CERTIFICATE-----})
         * @return this builder
         */
        public Builder caCertPem(String pem) {
            return put("ca-cert-pem", pem);
        }

        /**
         * A client certificate for mutual TLS, as {@link #clientCert(Path, Path)}, from PEM text in
         * memory: the key never touches the disk (the Spring starter gives an SSL bundle's key
         * this way). Neither text is shown by {@link #toString()} or any message; a key that
         * does not fit fails when the options are first used, naming {@code client-key}.
         *
         * @param cert the PEM certificate, optionally followed by its intermediates
         * @param key its PEM private key (PKCS#8, PKCS#1 or SEC1), unencrypted
         * @return this builder
         */
        public Builder clientCertPem(String cert, String key) {
            put("client-cert-pem", cert);
            return put("client-key-pem", key);
        }

        /**
         * The Sentinels' own credentials ({@code requirepass} or an ACL user on the Sentinels),
         * apart from the master's ({@link #username}, {@link #password}).
         *
         * @param username the Sentinels' ACL user, or null for their default user
         * @param password their password; never shown by {@link #toString()} or messages
         * @return this builder
         */
        public Builder sentinelAuth(String username, String password) {
            if (username != null) {
                put("sentinel-username", username);
            } else {
                spec.remove("sentinel-username"); // a later call replaces an earlier one whole
            }
            return put("sentinel-password", password);
        }

        /**
         * @param nodes the Sentinels, as {@code host:port} entries joined by commas; with
         *     {@link #masterName}, dibs asks them for the master (anew after a failover)
         * @return this builder
         */
        public Builder sentinels(String nodes) {
            return put("sentinels", nodes);
        }

        /** @param name the name the Sentinels know the master by @return this builder */
        public Builder masterName(String name) {
            return put("master-name", name);
        }

        /**
         * @param nodes seed nodes of a Redis Cluster, as {@code host:port} entries joined by
         *     commas
         * @return this builder
         */
        public Builder clusterNodes(String nodes) {
            return put("cluster-nodes", nodes);
        }

        /** @param keyPrefix what every lock key starts with (default {@code dibs:}) @return this builder */
        public Builder keyPrefix(String keyPrefix) {
            return put("key-prefix", keyPrefix);
        }

        /**
         * @param keepAlive whether to extend the lock while the task runs (every atMost / 3),
         *     so that a task may outlive atMost and still hold it
         * @return this builder
         */
        public Builder keepAlive(boolean keepAlive) {
            return put("keep-alive", keepAlive);
        }

        /**
         * @param interrupt with keep-alive: whether a lock found lost (taken by another holder,
         *     or not extended before it would lapse) interrupts the thread that holds it: the
         *     task's thread for {@code execute}, the thread that called {@code tryLock} for a
         *     lease. A task that must stop without its lock then stops at its next blocking
         *     call (default false: the task learns of it from {@link Dibs#isLockLost()},
         *     {@link DibsLease#isLost()} or {@link DibsLease#whenLost()})
         * @return this builder
         */
        public Builder interruptOnLost(boolean interrupt) {
            this.interruptOnLost = interrupt;
            return this;
        }

        /**
         * @param durable how an acquire makes sure a failover cannot lose the lock it just took
         *     (default {@link DurableAcquire#auto()})
         * @return this builder
         */
        public Builder durable(DurableAcquire durable) {
            return put("durable", durable == null ? null : durable.toString());
        }

        /**
         * {@link #durable(DurableAcquire)} in the conn key's own text, as a Map conn or a
         * property gives it.
         *
         * @param durable {@code "auto"}, {@code "off"}, a number of replicas as {@code "2"},
         *     {@code "aof"} or {@code "aof:N"} (see {@link DurableAcquire})
         * @return this builder
         */
        public Builder durable(String durable) {
            return put("durable", durable);
        }

        /**
         * @param history whether each release records its run in its job's history in Redis
         *     (default true; see {@link DibsClient#history}): a few entries per job, no extra
         *     round trip
         * @return this builder
         */
        public Builder history(boolean history) {
            return put("history", history);
        }

        /**
         * @param instanceId names this instance in the run history, beside its host and pid
         *     (1 to 128 bytes, no {@code ;} and no control characters): a pod name, a deployment slot
         * @return this builder
         */
        public Builder instanceId(String instanceId) {
            return put("instance-id", instanceId);
        }

        /**
         * @param retryFailedTicks whether the lock of a tick ({@link DibsClient#executeOnce})
         *     whose task threw is let go at once instead of kept as the tick's done-mark for
         *     atMost, so that another instance whose scheduler fires the same tick later runs it
         *     again (default false: a tick runs once, however it ended)
         * @return this builder
         */
        public Builder retryFailedTicks(boolean retryFailedTicks) {
            return put("retry-failed-ticks", retryFailedTicks);
        }

        /**
         * @param retryUnendedTicks whether catch-up ({@link DibsCatchUp}) runs again a missed
         *     tick whose run started but never recorded its end: its instance died mid-run, or
         *     its release failed (default false: that run may have done its work, and a tick
         *     that started runs at most once)
         * @return this builder
         */
        public Builder retryUnendedTicks(boolean retryUnendedTicks) {
            return put("retry-unended-ticks", retryUnendedTicks);
        }

        /** @param timeout the connect timeout (whole milliseconds, at least 1) @return this builder */
        public Builder connectTimeout(Duration timeout) {
            return put("conn-timeout-ms", millis(timeout, "connectTimeout"));
        }

        /** @param timeout the read and write timeout of every command @return this builder */
        public Builder readTimeout(Duration timeout) {
            return put("read-timeout-ms", millis(timeout, "readTimeout"));
        }

        /**
         * @param timeout how long a pooled connection may sit idle and still be reused (default
         *     60 s); an older one is closed instead, since NATs and load balancers drop idle
         *     flows without a word
         * @return this builder
         */
        public Builder idleTimeout(Duration timeout) {
            return put("idle-timeout-ms", millis(timeout, "idleTimeout"));
        }

        /** @param max how many connections the pool may open at most @return this builder */
        public Builder maxConnections(int max) {
            this.maxConnections = max;
            return this;
        }

        /** @param listener hears every locked call made with these options @return this builder */
        public Builder listener(DibsListener listener) {
            if (listener == null) {
                throw new DibsArgumentException("listener", "listener must not be null");
            }
            this.listener = listener;
            return this;
        }

        /** @return the options */
        public DibsOptions build() {
            return new DibsOptions(this);
        }

        private Builder put(String key, Object value) {
            if (value == null) {
                throw new DibsArgumentException(key, key + " must not be null");
            }
            spec.put(key, value);
            return this;
        }

        private static long millis(Duration d, String name) {
            if (d == null) {
                throw new DibsArgumentException(name, name + " must not be null");
            }
            try {
                return d.toMillis();
            } catch (ArithmeticException e) {
                return Long.MAX_VALUE; // the native side rejects it, naming the key
            }
        }
    }
}
