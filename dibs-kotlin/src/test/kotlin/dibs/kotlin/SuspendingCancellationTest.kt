package dibs.kotlin

import dibs.Dibs
import dibs.DibsClient
import dibs.DibsOptions
import dibs.testsupport.RedisServer
import java.time.Duration
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.job
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * Issue 17 (1): a caller cancelled while dibs takes or releases the lock. Taking and releasing run
 * in `withContext(NonCancellable + Dispatchers.IO)`, whose value a cancelled caller never gets
 * (prompt cancellation): a lease returned only as that value was dropped, and its lock held until
 * atMost (with keep-alive, for ever); a cancellation during the release replaced the block's own
 * exception.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SuspendingCancellationTest {
    companion object {
        @JvmField @RegisterExtension val redis: RedisServer = RedisServer.perTestClass()
    }

    private lateinit var client: DibsClient

    @BeforeAll
    fun start() {
        client = Dibs.client(DibsOptions.builder().uri(redis.uri()).keepAlive(true).build())
    }

    @AfterAll
    fun stop() {
        client.close()
    }

    private fun exists(name: String): Boolean =
        redis.command("EXISTS", RedisServer.lockKey(name)) == "1"

    @Test
    fun aCallerCancelledWhileTheLockIsTakenLeavesNoLockBehind(): Unit = runBlocking {
        val name = "cancel-while-taking"
        client.executeSuspending(
            "warm-up",
            Duration.ofSeconds(30),
        ) {} // the pool's connection exists
        // The SET waits for the pause to end; the caller is cancelled meanwhile.
        redis.command("CLIENT", "PAUSE", "1000", "WRITE")
        var ran = false
        val job =
            launch(Dispatchers.Default) {
                client.executeSuspending(name, Duration.ofSeconds(30)) { ran = true }
            }
        delay(300)
        job.cancel()
        job.join()
        // The SET lands when the pause ends (~700 ms from now); the lease must be released then.
        val until = System.nanoTime() + 5_000_000_000L
        delay(900)
        while (exists(name) && System.nanoTime() < until) {
            delay(20)
        }
        val pttl = redis.command("PTTL", RedisServer.lockKey(name)).toLong()
        assertEquals(-2L, pttl, "the lock of the cancelled call is gone (PTTL)")
        assertEquals(false, ran, "the block of a cancelled call does not run")
        assertTrue(client.executeSuspending(name, Duration.ofSeconds(30)) {}, "a later call runs")
    }

    @Test
    fun aCancellationDuringTheReleaseDoesNotReplaceTheBlocksException(): Unit = runBlocking {
        val name = "cancel-while-releasing"
        val boom = IllegalStateException("the block's own failure")
        val seen = CompletableDeferred<Throwable>()
        val job =
            launch(Dispatchers.Default) {
                val caller = currentCoroutineContext().job
                try {
                    client.executeSuspending(name, Duration.ofSeconds(30)) {
                        caller.cancel() // the caller is cancelled as the block fails
                        throw boom
                    }
                } catch (t: Throwable) {
                    seen.complete(t) // not rethrown: it would fail runBlocking, the test's scope
                }
            }
        job.join()
        assertSame(boom, seen.await(), "the block's exception, not the cancellation")
        assertEquals(false, exists(name), "released")
    }
}
