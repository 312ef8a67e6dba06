package dibs

import dibs.testsupport.RedisServer
import java.time.Duration
import java.time.Instant
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * The new API (attempt, inspect, options, listeners, clients) as a Kotlin service would call it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class KotlinNewApiTest {
    companion object {
        @JvmField @RegisterExtension val redis: RedisServer = RedisServer.perTestClass()
    }

    private lateinit var uri: String
    private lateinit var options: DibsOptions

    @BeforeAll
    fun buildOptions() {
        uri = redis.uri()
        options = DibsOptions.builder().uri(uri).build()
    }

    @BeforeEach
    fun flush() {
        // Every test uses the lock "job", as a service would: start each from an empty server.
        assertEquals("OK", redis.command("FLUSHALL"))
    }

    private fun compute(): Int = 6 * 7

    @Test
    fun `attempt with a trailing lambda`() {
        val result = Dibs.attempt(options, "job", 60, 5) { compute() }
        assertTrue(result.acquired())
        assertEquals(42, result.value())
        assertTrue(result.ownedToTheEnd())

        // atLeast 5 s keeps the lock: the next attempt is skipped, and says so.
        var ran = false
        val skipped =
            Dibs.attempt(options, "job", 60, 5) {
                ran = true
                compute()
            }
        assertFalse(skipped.acquired())
        assertFalse(ran)
        assertThrows(NoSuchElementException::class.java) { skipped.value() }
        assertNull(skipped.toOptional().orElse(null))
    }

    @Test
    fun `a null value is not a skip`() {
        val result: DibsResult<String?> =
            Dibs.attempt(uri, "job", Duration.ofSeconds(60), Duration.ZERO) { null }
        assertTrue(result.acquired())
        assertNull(result.value())
        assertFalse(result.toOptional().isPresent)
    }

    @Test
    fun `a client used and closed`() {
        var ran = false
        val won = Dibs.client(uri).use { it.execute("job", 60, 0) { ran = true } }
        assertTrue(won)
        assertTrue(ran)
        assertFalse(Dibs.inspect(uri, "job").held(), "atLeast 0: released")

        val client = Dibs.client(options)
        client.use { c -> assertEquals(7, c.attempt("job", 60, 0) { 7 }.value()) }
        val e = assertThrows(IllegalStateException::class.java) { client.execute("job", 60, 0) {} }
        assertTrue(e.message!!.contains("closed"), e.message)
    }

    @Test
    fun `a listener as an object expression`() {
        val heard = mutableListOf<String>()
        val listener =
            object : DibsListener {
                override fun acquired(lockName: String) {
                    heard += "acquired $lockName"
                }

                override fun released(lockName: String, heldFor: Duration) {
                    heard += "released $lockName"
                }
            }
        val withListener = DibsOptions.builder().uri(uri).listener(listener).build()
        assertTrue(Dibs.execute(withListener, "job", 60, 0) { heard += "task" })
        assertEquals(listOf("acquired job", "task", "released job"), heard)
    }

    @Test
    fun `inspect the holder from inside the task`() {
        val before = Instant.now().minusMillis(5)
        var holderPid = -1L
        var held = false
        Dibs.execute(uri, "job", 60, 0) {
            val info = Dibs.inspect(uri, "job")
            held = info.held()
            holderPid = info.pid().asLong
            assertTrue(info.acquiredAt().get() >= before, "acquiredAt ${info.acquiredAt()}")
        }
        assertTrue(held)
        assertEquals(ProcessHandle.current().pid(), holderPid)
        assertFalse(Dibs.inspect(uri, "job").pid().isPresent)
    }

    @Test
    fun `keep-alive from a map, and exceptions pass through`() {
        val result =
            Dibs.attempt(
                mapOf("uri" to uri, "keep-alive" to true),
                "job",
                Duration.ofMillis(300),
                Duration.ZERO,
            ) {
                Thread.sleep(800)
                "done"
            }
        assertTrue(result.ownedToTheEnd(), result.toString())
        assertEquals("done", result.value())

        val boom = java.io.IOException("from kotlin")
        val caught =
            assertThrows(java.io.IOException::class.java) {
                Dibs.attempt(options, "job", 60, 0) { throw boom }
            }
        assertSame(boom, caught)
    }
}
