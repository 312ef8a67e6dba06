package dibs.kotlin

import dibs.Dibs
import dibs.DibsClient
import dibs.DibsListener
import dibs.DibsOptions
import dibs.testsupport.RedisServer
import java.time.Duration
import java.util.Collections
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * A suspending locked call is heard by the client's [DibsListener] as every dibs lock is: attempt,
 * then skipped, or acquired and, once the block ended, finished and how it was released.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SuspendingListenerTest {
    companion object {
        @JvmField @RegisterExtension val redis: RedisServer = RedisServer.perTestClass()
    }

    private lateinit var client: DibsClient

    /** Every event, as "event lockName". */
    private val events: MutableList<String> = Collections.synchronizedList(mutableListOf())

    private val recorder =
        object : DibsListener {
            override fun attempt(lockName: String) {
                events += "attempt $lockName"
            }

            override fun skipped(lockName: String) {
                events += "skipped $lockName"
            }

            override fun acquired(lockName: String) {
                events += "acquired $lockName"
            }

            override fun finished(lockName: String, duration: Duration) {
                events += "finished $lockName"
            }

            override fun released(lockName: String, heldFor: Duration) {
                events += "released $lockName"
            }

            override fun expired(lockName: String, heldFor: Duration) {
                events += "expired $lockName"
            }

            override fun releaseFailed(lockName: String, heldFor: Duration) {
                events += "releaseFailed $lockName"
            }
        }

    @BeforeAll
    fun start() {
        client = Dibs.client(DibsOptions.builder().uri(redis.uri()).listener(recorder).build())
    }

    @AfterAll
    fun stop() {
        client.close()
    }

    /** The events of one lock, in order, without its name. */
    private fun eventsOf(name: String): List<String> =
        synchronized(events) {
            events.filter { it.endsWith(" $name") }.map { it.substringBefore(' ') }
        }

    @Test
    fun aBlockIsAttemptAcquiredFinishedReleased(): Unit = runBlocking {
        var seenInBlock = emptyList<String>()
        assertTrue(
            client.executeSuspending("listen-runs", Duration.ofSeconds(10)) {
                delay(10)
                seenInBlock = eventsOf("listen-runs")
            }
        )
        assertEquals(listOf("attempt", "acquired"), seenInBlock, "told before the block ran")
        assertEquals(listOf("attempt", "acquired", "finished", "released"), eventsOf("listen-runs"))
    }

    @Test
    fun aHeldLockIsAttemptSkipped(): Unit = runBlocking {
        redis.command("SET", RedisServer.lockKey("listen-skip"), "another-instance", "PX", "10000")
        val runs = AtomicInteger()
        assertEquals(
            DibsOutcome.Skipped,
            client.attemptSuspending("listen-skip", Duration.ofSeconds(10)) {
                runs.incrementAndGet()
            },
        )
        assertEquals(0, runs.get())
        assertEquals(listOf("attempt", "skipped"), eventsOf("listen-skip"))
    }

    @Test
    fun aBlockThatOutlivesAtMostIsExpired(): Unit = runBlocking {
        val outcome =
            client.attemptSuspending("listen-expired", Duration.ofMillis(100)) { delay(300) }
        assertRan(Unit, false, outcome)
        assertEquals(
            listOf("attempt", "acquired", "finished", "expired"),
            eventsOf("listen-expired"),
        )
    }

    @Test
    fun aThrowingBlockIsHeardAndItsExceptionPassesThrough(): Unit = runBlocking {
        val boom = IllegalStateException("boom")
        val thrown =
            assertThrows(IllegalStateException::class.java) {
                runBlocking {
                    client.executeSuspending("listen-throws", Duration.ofSeconds(10)) { throw boom }
                }
            }
        assertSame(boom, thrown)
        assertEquals(
            listOf("attempt", "acquired", "finished", "released"),
            eventsOf("listen-throws"),
        )
    }

    @Test
    fun aCancelledBlockIsHeardToItsRelease(): Unit = runBlocking {
        val started = CompletableDeferred<Unit>()
        val job =
            launch(Dispatchers.Default) {
                client.executeSuspending("listen-cancel", Duration.ofSeconds(30)) {
                    started.complete(Unit)
                    awaitCancellation()
                }
            }
        withTimeout(10_000) { started.await() }
        job.cancel()
        job.join()
        assertEquals(
            listOf("attempt", "acquired", "finished", "released"),
            eventsOf("listen-cancel"),
        )
        assertFalse(eventsOf("listen-cancel").contains("expired"))
    }
}
