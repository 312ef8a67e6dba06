package dibs.kotlin

import dibs.Dibs
import dibs.DibsClient
import dibs.DibsOptions
import dibs.testsupport.RedisServer
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
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

/** executeSuspending / attemptSuspending against a real redis-server. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SuspendingTest {
    companion object {
        @JvmField @RegisterExtension val redis: RedisServer = RedisServer.perTestClass()
    }

    private lateinit var client: DibsClient
    private lateinit var keepAliveClient: DibsClient

    @BeforeAll
    fun start() {
        client = Dibs.client(DibsOptions.of(redis.uri()))
        keepAliveClient =
            Dibs.client(DibsOptions.builder().uri(redis.uri()).keepAlive(true).build())
    }

    @AfterAll
    fun stop() {
        client.close()
        keepAliveClient.close()
    }

    private fun exists(name: String): String = redis.command("EXISTS", RedisServer.lockKey(name))

    @Test
    fun theRunHistoryTellsABlockThatThrewFromOneThatReturned(): Unit = runBlocking {
        client.attemptSuspending("suspend-history", Duration.ofSeconds(10)) { delay(1) }
        val boom = IllegalStateException("boom")
        val thrown =
            assertThrows(IllegalStateException::class.java) {
                runBlocking {
                    client.attemptSuspending("suspend-history", Duration.ofSeconds(10)) {
                        throw boom
                    }
                }
            }
        assertSame(boom, thrown)
        val runs = client.history("suspend-history", 10)
        assertEquals(listOf(false, true), runs.map { it.succeeded() }, runs.toString())
    }

    @Test
    fun theBlockSeesAFencingTokenGreaterThanTheLastOne(): Unit = runBlocking {
        var last = 0L
        repeat(20) {
            var inside = 0L
            val outcome =
                client.attemptSuspending("suspend-fenced", Duration.ofSeconds(10)) {
                    delay(1)
                    inside = fencingToken
                    "done"
                }
            val ran = outcome as DibsOutcome.Ran
            assertEquals(inside, ran.fencingToken, "the outcome carries the block's token")
            assertTrue(ran.fencingToken > last, "${ran.fencingToken} after $last")
            last = ran.fencingToken
        }
    }

    @Test
    fun runsTheBlockUnderTheLockAndReleasesIt(): Unit = runBlocking {
        var seen = ""
        val ran =
            client.executeSuspending("suspend-runs", Duration.ofSeconds(10)) {
                delay(10)
                seen = exists("suspend-runs")
            }
        assertTrue(ran)
        assertEquals("1", seen, "the block ran without its lock")
        assertEquals("0", exists("suspend-runs"), "atLeast 0: the lock is deleted after the block")
    }

    @Test
    fun theValueComesBackAndAHeldLockSkips(): Unit = runBlocking {
        val outcome =
            client.attemptSuspending(
                "suspend-value",
                Duration.ofSeconds(10),
                Duration.ofSeconds(10),
            ) {
                42
            }
        assertRan(42, true, outcome)
        val runs = AtomicInteger()
        // Kept for atLeast (10 s): the next try skips, and its block never runs.
        assertEquals(
            DibsOutcome.Skipped,
            client.attemptSuspending("suspend-value", Duration.ofSeconds(10)) {
                runs.incrementAndGet()
            },
        )
        assertEquals(0, runs.get())
    }

    @Test
    fun cancellationReleasesTheLock(): Unit = runBlocking {
        val started = CompletableDeferred<Unit>()
        val job =
            launch(Dispatchers.Default) {
                client.executeSuspending("suspend-cancel", Duration.ofSeconds(30)) {
                    started.complete(Unit)
                    awaitCancellation()
                }
            }
        withTimeout(10_000) { started.await() }
        assertEquals("1", exists("suspend-cancel"))
        job.cancel()
        job.join()
        assertTrue(job.isCancelled)
        // Released by the cancelled coroutine, not left to expire after 30 s.
        assertEquals("0", exists("suspend-cancel"), "a cancelled block kept its lock")
        assertTrue(client.executeSuspending("suspend-cancel", Duration.ofSeconds(5)) {})
    }

    @Test
    fun cancellationKeepsTheLockForWhatIsLeftOfAtLeast(): Unit = runBlocking {
        val started = CompletableDeferred<Unit>()
        val job = launch {
            client.executeSuspending(
                "suspend-cancel-atleast",
                Duration.ofSeconds(30),
                Duration.ofSeconds(5),
            ) {
                started.complete(Unit)
                awaitCancellation()
            }
        }
        started.await()
        job.cancel()
        job.join()
        val pttl = redis.command("PTTL", RedisServer.lockKey("suspend-cancel-atleast")).toLong()
        assertTrue(pttl in 1..5000, "released for the rest of atLeast (5 s), PTTL $pttl")
    }

    @Test
    fun anExceptionPassesThroughAsTheSameObjectAfterTheRelease(): Unit = runBlocking {
        val boom = IllegalStateException("boom")
        val thrown =
            assertThrows(IllegalStateException::class.java) {
                runBlocking {
                    client.executeSuspending("suspend-throws", Duration.ofSeconds(10)) {
                        delay(5)
                        throw boom
                    }
                }
            }
        assertSame(boom, thrown)
        assertEquals(0, thrown.suppressed.size)
        assertEquals("0", exists("suspend-throws"))
    }

    @Test
    fun keepAliveHoldsTheLockAcrossSuspensionPointsAndThreads(): Unit = runBlocking {
        // atMost 600 ms, a block of 1.5 s that suspends 15 times and hops dispatchers: only
        // keep-alive, which extends the lease whatever thread the coroutine is on, keeps it ours.
        val outcome =
            keepAliveClient.attemptSuspending("suspend-keepalive", Duration.ofMillis(600)) {
                repeat(15) { i ->
                    withContext(if (i % 2 == 0) Dispatchers.Default else Dispatchers.IO) {
                        delay(100)
                    }
                }
                isLost()
            }
        assertRan(false, true, outcome)
    }

    @Test
    fun withoutKeepAliveTheSameBlockOutlivesItsLock(): Unit = runBlocking {
        // The contrast to the test above: it would pass without keep-alive only if this failed.
        val outcome =
            client.attemptSuspending("suspend-no-keepalive", Duration.ofMillis(600)) {
                repeat(15) { delay(100) }
            }
        assertRan(Unit, false, outcome)
    }

    @Test
    fun kotlinDurationsWork(): Unit = runBlocking {
        val outcome =
            client.attemptSuspending("suspend-kotlin-duration", 10.seconds, 3.seconds) { "ok" }
        assertRan("ok", true, outcome)
        // Kept for atLeast (3 s), counted from acquisition.
        val pttl = redis.command("PTTL", RedisServer.lockKey("suspend-kotlin-duration")).toLong()
        assertTrue(pttl in 1..3000, "PTTL $pttl")
        assertThrows(IllegalArgumentException::class.java) {
            runBlocking { client.executeSuspending("x", kotlin.time.Duration.INFINITE) {} }
        }
    }

    @Test
    fun invalidArgumentsThrowBeforeAnyIo(): Unit = runBlocking {
        assertThrows(IllegalArgumentException::class.java) {
            runBlocking { client.executeSuspending("", Duration.ofSeconds(1)) {} }
        }
        var ran = false
        assertThrows(IllegalArgumentException::class.java) {
            runBlocking {
                client.executeSuspending("x", Duration.ofSeconds(1), Duration.ofSeconds(2)) {
                    ran = true
                }
            }
        }
        assertFalse(ran)
    }
}

/** [outcome] ran, with this value and ending, under a fencing token. */
internal fun <T> assertRan(value: T, ownedToTheEnd: Boolean, outcome: DibsOutcome<T>) {
    val ran = outcome as? DibsOutcome.Ran ?: throw AssertionError("expected Ran, got $outcome")
    assertEquals(value to ownedToTheEnd, ran.value to ran.ownedToTheEnd, "$outcome")
    assertTrue(ran.fencingToken > 0, "$outcome")
}
