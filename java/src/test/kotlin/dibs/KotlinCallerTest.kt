package dibs

import dibs.testsupport.RedisServer
import java.time.Duration
import java.util.Optional
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * How a Kotlin service calls dibs: the task is the last parameter, so the lambda trails the call.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KotlinCallerTest {
    companion object {
        @JvmField @RegisterExtension val redis: RedisServer = RedisServer.perTestClass()
    }

    @Test
    fun `trailing lambda with a Map conn`() {
        var ran = false
        val won =
            Dibs.execute(mapOf("uri" to redis.uri()), "job", 60, 5) {
                ran = true
            }
        assertTrue(won)
        assertTrue(ran)
        // atLeast 5 s keeps the lock, so the next tick on any instance is skipped.
        var again = false
        assertFalse(Dibs.execute(mapOf("uri" to redis.uri()), "job", 60, 5) { again = true })
        assertFalse(again)
    }

    @Test
    fun `result with host and port`() {
        val result: Optional<Int> =
            Dibs.executeWithResult(
                mapOf("host" to "127.0.0.1", "port" to redis.port()),
                "answer",
                60,
                0,
            ) {
                42
            }
        assertEquals(Optional.of(42), result)
    }

    @Test
    fun `durations from Kotlin`() {
        val result =
            Dibs.executeWithResult(
                redis.uri(),
                "kt-durations",
                Duration.ofMillis(1500),
                Duration.ZERO,
            ) {
                "ok"
            }
        assertEquals("ok", result.orElse(null))
    }

    @Test
    fun `exceptions pass through unchanged`() {
        val boom = IllegalStateException("from kotlin")
        val caught =
            assertThrows(IllegalStateException::class.java) {
                Dibs.execute(redis.uri(), "kt-throws", 60, 0) { throw boom }
            }
        assertSame(boom, caught)
        // Kotlin has no checked exceptions: an IOException reaches the caller as is.
        val io = java.io.IOException("io from kotlin")
        val caughtIo =
            assertThrows(java.io.IOException::class.java) {
                Dibs.execute(redis.uri(), "kt-throws", 60, 0) { throw io }
            }
        assertSame(io, caughtIo)
    }
}
