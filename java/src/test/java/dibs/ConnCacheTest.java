package dibs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import clojure.lang.Keyword;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Java half of the Map conn contract: flattening into typed tokens. No native code here. */
class ConnCacheTest {
    @SafeVarargs
    private static <K, V> Map<K, V> ordered(Map.Entry<K, V>... entries) {
        Map<K, V> m = new LinkedHashMap<>();
        for (Map.Entry<K, V> e : entries) {
            m.put(e.getKey(), e.getValue());
        }
        return m;
    }

    private static Map.Entry<Object, Object> e(Object k, Object v) {
        return new java.util.AbstractMap.SimpleImmutableEntry<>(k, v);
    }

    @Test
    void scalarsAreTaggedByType() {
        Map<Object, Object> m = ordered(
                e("uri", "redis://h"),
                e("port", 6380),
                e("db", 2L),
                e("short", (short) 3),
                e("byte", (byte) 4),
                e("big", new BigInteger("123456789012345678901234567890")),
                e("ssl", true),
                e("password", null),
                e("sb", new StringBuilder("built")),
                e("kwval", Keyword.intern("val")),
                e("dbl", 6379.0),
                e("dec", new BigDecimal("1.5")),
                e("list", new ArrayList<>()));
        assertArrayEquals(
                tagged(new String[] {
                    "uri", "s", "redis://h",
                    "port", "i", "6380",
                    "db", "i", "2",
                    "short", "i", "3",
                    "byte", "i", "4",
                    "big", "i", "123456789012345678901234567890",
                    "ssl", "b", "true",
                    "password", "n", "",
                    "sb", "s", "built",
                    "kwval", "s", ":val",
                    "dbl", "x", "java.lang.Double",
                    "dec", "x", "java.math.BigDecimal",
                    "list", "x", "java.util.ArrayList",
                }),
                ConnCache.flatten(m));
    }

    @Test
    void keysAreStringsKeywordsOrTheirText() {
        Map<Object, Object> m = ordered(e("host", "h"), e(Keyword.intern("port"), 1), e(7, "x"), e(null, "y"));
        assertArrayEquals(
                tagged(new String[] {
                    "host", "s", "h",
                    ":port", "i", "1",
                    "7", "s", "x",
                    "null", "s", "y",
                }),
                ConnCache.flatten(m));
    }

    @Test
    void nestedMapsAreCountedThenFollowed() {
        Map<Object, Object> m = ordered(
                e("spec", ordered(e("host", "h"), e("port", 6380))),
                e("pool", ordered()),
                e(Keyword.intern("x"), ordered(e("deep", ordered(e("a", 1))), e("b", false))));
        assertArrayEquals(
                tagged(new String[] {
                    "spec", "m", "2",
                    "host", "s", "h",
                    "port", "i", "6380",
                    "pool", "m", "0",
                    ":x", "m", "2",
                    "deep", "m", "1",
                    "a", "i", "1",
                    "b", "b", "false",
                }),
                ConnCache.flatten(m));
    }

    @Test
    void immutableCopyIsEqualDeepAndFrozen() {
        Map<String, Object> spec = new HashMap<>(Map.of("host", "h"));
        Map<String, Object> conn = new HashMap<>(Map.of("spec", spec, "pool", Map.of("max-total", 4)));
        Map<Object, Object> copy = ConnCache.immutableCopy(conn);
        assertEquals(conn, copy);
        assertEquals(conn.hashCode(), copy.hashCode());
        assertThrows(UnsupportedOperationException.class, () -> copy.put("x", 1));
        @SuppressWarnings("unchecked")
        Map<Object, Object> nested = (Map<Object, Object>) copy.get("spec");
        assertThrows(UnsupportedOperationException.class, () -> nested.put("x", 1));
        spec.put("port", 1);
        assertNotEquals(conn, copy, "the copy does not follow the caller's changes");
    }

    @Test
    void connOfAnotherTypeIsRejectedWithoutNativeCode() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ConnCache.handle(List.of()));
        assertEquals(true, e.getMessage().startsWith("conn must be"), e.getMessage());
    }

    /** Triples whose tag is written as a letter (s, i, b, n, m, x), each turned into its token. */
    private static String[] tagged(String[] triples) {
        String[] out = triples.clone();
        for (int i = 1; i < out.length; i += 3) {
            out[i] = ConnCache.text(tagOf(out[i]));
        }
        return out;
    }

    private static Border.ConnToken tagOf(String letter) {
        switch (letter) {
            case "s":
                return Border.ConnToken.STR;
            case "i":
                return Border.ConnToken.INT;
            case "b":
                return Border.ConnToken.BOOL;
            case "n":
                return Border.ConnToken.NULL;
            case "m":
                return Border.ConnToken.MAP;
            default:
                return Border.ConnToken.OTHER;
        }
    }
}
