package dibs;

import dibs.loader.NativeLoader;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Turns a caller's {@code conn} into a native client handle, and remembers the answer as the
 * {@link DibsClient} that {@link Dibs}'s static methods share for that conn.
 *
 * <p>Java only routes and flattens; Rust parses and validates every key and value. A String conn
 * goes to {@link NativeLib#connectUri}; a Map conn is flattened by {@link #flatten} into
 * {@code key, tag, value} triples for {@link NativeLib#connectMap}. Handles are cached by conn so
 * that a scheduler calling every second does not re-walk its Map: String conns are their own
 * key, Map conns are keyed by an immutable deep copy, so that a caller mutating its Map later
 * cannot corrupt the cache. Rust de-duplicates equal specs itself, so dropping the cache (when it
 * grows past {@link #MAX_CACHED} entries) only costs a re-parse.
 */
final class ConnCache {
    static final int MAX_CACHED = 256;

    private static final String KEYWORD_CLASS = "clojure.lang.Keyword";
    private static final ConcurrentHashMap<Object, DibsClient> CACHE = new ConcurrentHashMap<>();

    private ConnCache() {}

    /**
     * Returns the client that equal conns share (never closed), resolving and caching it on
     * first use.
     *
     * @throws IllegalArgumentException if conn is neither a String nor a Map, or Rust rejects it
     */
    static DibsClient shared(Object conn) {
        DibsClient cached = CACHE.get(conn);
        if (cached != null) {
            return cached;
        }
        // Copy first, then parse the copy: a map the caller changes meanwhile cannot pair one
        // content with the handle of another.
        Object key = conn instanceof Map ? immutableCopy((Map<?, ?>) conn) : conn;
        DibsClient client = new DibsClient(connect(key, false), listener(conn), interruptOnLost(conn));
        if (CACHE.size() >= MAX_CACHED) {
            CACHE.clear();
        }
        CACHE.put(key, client);
        return client;
    }

    /** The native handle of the shared client of a conn. */
    static long handle(Object conn) {
        return shared(conn).handle();
    }

    /** A handle with a pool of its own, for a {@link DibsClient}; not cached. */
    static long open(Object conn) {
        return connect(conn, true);
    }

    /** Whether {@link DibsOptions} ask a lost lock to interrupt its holder; other conns do not. */
    static boolean interruptOnLost(Object conn) {
        return conn instanceof DibsOptions && ((DibsOptions) conn).interruptOnLost();
    }

    /** The listener of {@link DibsOptions}; other conns have none. */
    static DibsListener listener(Object conn) {
        return conn instanceof DibsOptions ? ((DibsOptions) conn).listener() : null;
    }

    private static long connect(Object conn, boolean owned) {
        // Every native call needs a handle, and every handle is made here: loading first means a
        // failed load is always its own detailed UnsatisfiedLinkError, never NativeLib's
        // NoClassDefFoundError on a later call.
        NativeLoader.load();
        if (conn instanceof String) {
            return NativeLib.connectUri((String) conn, owned);
        } else if (conn instanceof Map) {
            return NativeLib.connectMap(flatten((Map<?, ?>) conn), owned);
        } else if (conn instanceof DibsOptions) {
            return NativeLib.connectMap(flatten(((DibsOptions) conn).toConnMap()), owned);
        }
        throw new DibsArgumentException(
                "conn",
                "conn must be a URI String (\"redis://host:6379\"), a Map"
                        + " conn spec ({\"uri\": ...} or {\"host\": ..., \"port\": ...}, or Carmine's"
                        + " {\"spec\": {...}, \"pool\": {...}}) or DibsOptions, got "
                        + conn.getClass().getName());
    }

    /**
     * Where a conn leads, as dibs's messages name it ({@code host:port}, the socket path, the
     * Sentinels' master or the cluster's nodes), never with credentials: one native call that
     * parses the conn with the same parser as {@link NativeLib#connectUri}/{@link NativeLib#connectMap}, and
     * makes no handle and no I/O.
     *
     * @param conn a URI String, a Map conn or {@link DibsOptions}
     * @throws DibsArgumentException on a bad spec, naming the key at fault
     */
    static String describe(Object conn) {
        if (conn instanceof String) {
            return NativeLib.describeUri((String) conn);
        } else if (conn instanceof java.util.Map) {
            return NativeLib.describeMap(flatten((java.util.Map<?, ?>) conn));
        } else if (conn instanceof DibsOptions) {
            return NativeLib.describeMap(flatten(((DibsOptions) conn).toConnMap()));
        }
        throw new DibsArgumentException(
                "conn",
                "conn must be a URI String, a Map or DibsOptions, got "
                        + (conn == null ? "null" : conn.getClass().getName()));
    }

    /** Number of cached conns (for tests). */
    static int cachedCount() {
        return CACHE.size();
    }

    /**
     * Flattens a Map conn into {@code key, tag, value} triples. A nested map is one triple
     * {@code key, "m", <number of its direct entries>} followed at once by its entries' triples
     * (recursively).
     */
    static String[] flatten(Map<?, ?> map) {
        List<String> tokens = new ArrayList<>();
        flattenInto(map, tokens);
        return tokens.toArray(new String[0]);
    }

    /** Appends the entries of a map; returns how many (its direct entries, not nested ones). */
    private static int flattenInto(Map<?, ?> map, List<String> tokens) {
        int count = 0;
        for (Map.Entry<?, ?> e : map.entrySet()) {
            count++;
            tokens.add(keyText(e.getKey()));
            Object v = e.getValue();
            if (v instanceof Map) {
                tokens.add(text(Border.ConnToken.MAP));
                int countAt = tokens.size();
                tokens.add(null); // the child count, known once the children are walked
                tokens.set(countAt, Integer.toString(flattenInto((Map<?, ?>) v, tokens)));
            } else {
                tokens.add(text(tag(v)));
                tokens.add(valueText(v));
            }
        }
        return count;
    }

    /** String keys as they are, Clojure keywords as {@code ":name"}, anything else as text. */
    static String keyText(Object key) {
        return String.valueOf(key);
    }

    /** What a value is, as the border declares the tags (Rust reads them: {@code tokens.rs}). */
    static Border.ConnToken tag(Object v) {
        if (v == null) {
            return Border.ConnToken.NULL;
        } else if (v instanceof CharSequence || isKeyword(v)) {
            return Border.ConnToken.STR;
        } else if (v instanceof Integer
                || v instanceof Long
                || v instanceof Short
                || v instanceof Byte
                || v instanceof BigInteger) {
            return Border.ConnToken.INT;
        } else if (v instanceof Boolean) {
            return Border.ConnToken.BOOL;
        } else if (v instanceof Map) {
            return Border.ConnToken.MAP;
        } else {
            return Border.ConnToken.OTHER;
        }
    }

    /** A tag as its token: its code's text. */
    static String text(Border.ConnToken tag) {
        return Integer.toString(tag.code());
    }

    private static String valueText(Object v) {
        switch (tag(v)) {
            case NULL:
                return "";
            case OTHER:
                return v.getClass().getName();
            default:
                return v.toString();
        }
    }

    private static boolean isKeyword(Object o) {
        return o != null && KEYWORD_CLASS.equals(o.getClass().getName());
    }

    /** A deep copy that no one can mutate: nested maps copied, CharSequences frozen to Strings. */
    static Map<Object, Object> immutableCopy(Map<?, ?> map) {
        Map<Object, Object> copy = new LinkedHashMap<>(Math.max(4, map.size() * 2));
        for (Map.Entry<?, ?> e : map.entrySet()) {
            Object v = e.getValue();
            if (v instanceof Map) {
                v = immutableCopy((Map<?, ?>) v);
            } else if (v instanceof CharSequence && !(v instanceof String)) {
                v = v.toString();
            }
            copy.put(e.getKey(), v);
        }
        return Collections.unmodifiableMap(copy);
    }
}
