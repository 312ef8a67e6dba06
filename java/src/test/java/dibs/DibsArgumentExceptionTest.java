package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What Rust refuses arrives as a {@link DibsArgumentException} naming the argument, so that a
 * caller can map it to its own setting without reading the message; and
 * {@link DibsOptions#describe()} is Rust's own redacted address. No Redis is needed: nothing here
 * gets as far as I/O.
 */
class DibsArgumentExceptionTest {
    private static String refused(Object conn) {
        DibsArgumentException e = assertThrows(DibsArgumentException.class, () -> Dibs.client(conn));
        assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
        return e.argument();
    }

    @Test
    void eachBadKeyIsNamedAsTheArgument() {
        assertEquals("port", refused(Map.of("port", 70000)));
        assertEquals("db", refused(DibsOptions.builder().db(-1).build()));
        assertEquals(
                "read-timeout-ms",
                refused(DibsOptions.builder().readTimeout(Duration.ZERO).build()));
        assertEquals(
                "conn-timeout-ms",
                refused(DibsOptions.builder()
                        .connectTimeout(Duration.ofSeconds(-1))
                        .build()));
        assertEquals("uri", refused("redis://:hunter2"));
        assertEquals("uri", refused(Map.of("uri", "http://u:hunter2@h")));
        assertEquals(
                "master-name",
                refused(DibsOptions.builder().sentinels("h:26379").build()));
        assertEquals("sentinels", refused(DibsOptions.builder().masterName("m").build()));
        assertEquals(
                "cluster-nodes",
                refused(DibsOptions.builder()
                        .sentinels("h:1")
                        .masterName("m")
                        .clusterNodes("h:2")
                        .build()));
        assertEquals(
                "db", refused(DibsOptions.builder().clusterNodes("h:7000").db(2).build()));
        assertEquals("conn", refused(Map.of("hots", "h")));
    }

    @Test
    void aBadLockArgumentIsNamedToo() {
        try (DibsClient client = Dibs.client("redis://127.0.0.1:1")) {
            DibsArgumentException e = assertThrows(
                    DibsArgumentException.class,
                    () -> client.execute("", Duration.ofSeconds(1), Duration.ZERO, () -> {}));
            assertEquals("lockName", e.argument());
            assertTrue(e instanceof IllegalArgumentException);
        }
    }

    @Test
    void describeIsRustsRedactedEndpoint() {
        assertEquals("127.0.0.1:6379", DibsOptions.builder().build().describe());
        assertEquals(
                "h:7000",
                DibsOptions.builder().uri("rediss://u:hunter2@h:7000/3").build().describe());
        assertEquals(
                "master 'm' of sentinels a:26379,b:1",
                DibsOptions.builder().sentinels("a,b:1").masterName("m").build().describe());
        assertEquals(
                "cluster h:7000",
                DibsOptions.builder().clusterNodes("h:7000").build().describe());
        DibsArgumentException e = assertThrows(
                DibsArgumentException.class,
                () -> DibsOptions.builder().uri("redis://:hunter2").build().describe());
        assertEquals("uri", e.argument());
        assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
    }

    @Test
    void javasOwnChecksNameTheArgumentAsRustsDo() {
        assertEquals(
                "conn",
                assertThrows(DibsArgumentException.class, () -> Dibs.execute(null, "n", 1, 0, () -> {}))
                        .argument());
        assertEquals(
                "conn",
                assertThrows(DibsArgumentException.class, () -> Dibs.client(42)).argument());
        try (DibsClient client = Dibs.client("redis://127.0.0.1:1")) {
            assertEquals(
                    "lockName",
                    assertThrows(DibsArgumentException.class, () -> client.execute(null, 1, 0, () -> {}))
                            .argument());
            assertEquals(
                    "task",
                    assertThrows(DibsArgumentException.class, () -> client.execute("n", 1, 0, null))
                            .argument());
            assertEquals(
                    "atMost",
                    assertThrows(DibsArgumentException.class, () -> client.tryLock("n", null, Duration.ZERO))
                            .argument());
        }
        assertEquals(
                "listener",
                assertThrows(
                                DibsArgumentException.class,
                                () -> DibsOptions.builder().listener(null))
                        .argument());
    }
}
