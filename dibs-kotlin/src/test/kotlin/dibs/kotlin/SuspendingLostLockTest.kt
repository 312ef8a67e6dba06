package dibs.kotlin

import dibs.Dibs
import dibs.DibsClient
import dibs.DibsListener
import dibs.DibsOptions
import dibs.testsupport.RedisServer
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.atomic.AtomicReference
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.extension.RegisterExtension

/**
 * Issue 18 (3): with keep-alive, a suspending block whose lock is found lost is cancelled at once
 * with DibsLockLostException, which the call throws after the release. An outsider deletes the held
 * key; keep-alive's next extension (atMost / 3 later) finds it gone.
 *
 * Issue 30 (1): with interruptOnLost too, the loss cancels the block and interrupts no thread: the
 * IO worker that took the lock goes on to run other coroutines' work.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SuspendingLostLockTest {
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

    @Test
    fun aLostLockCancelsTheBlockWithItsOwnException(): Unit = runBlocking {
        val name = "suspend-lost-${ProcessHandle.current().pid()}"
        val deletedAt = AtomicLong() // set by the outsider's thread
        var cancelledAt = 0L
        var reachedTheEnd = false
        val thrown = runCatching {
            client.executeSuspending(name, Duration.ofMillis(1500)) {
                Thread {
                    Thread.sleep(200)
                    redis.command("DEL", RedisServer.lockKey(name))
                    deletedAt.set(System.nanoTime())
                }
                    .start()
                try {
                    delay(10_000)
                    reachedTheEnd = true
                } finally {
                    cancelledAt = System.nanoTime()
                }
            }
        }
            .exceptionOrNull()
        val afterMs = (cancelledAt - deletedAt.get()) / 1_000_000
        println(
            "lost lock (coroutine): the block was cancelled $afterMs ms after the key was deleted (period 500 ms)"
        )
        assertTrue(thrown is DibsLockLostException, "thrown: $thrown")
        assertEquals(name, (thrown as DibsLockLostException).lockName)
        assertTrue(!reachedTheEnd && afterMs <= 800, "cancelled after $afterMs ms")
        assertEquals("0", redis.command("EXISTS", RedisServer.lockKey(name)))
    }

    @Test
    fun withInterruptOnLostALostLockCancelsTheBlockAndLeavesTheIoWorkerItTookTheLockOnAlone():
        Unit = runBlocking {
        val name = "suspend-lost-worker-${ProcessHandle.current().pid()}"
        val worker = AtomicReference<Thread>() // the IO worker that took the lock
        val listener =
            object : DibsListener {
                override fun acquired(lockName: String) = worker.set(Thread.currentThread())
            }
        val interrupting =
            Dibs.client(
                DibsOptions.builder()
                    .uri(redis.uri())
                    .keepAlive(true)
                    .interruptOnLost(true)
                    .listener(listener)
                    .build()
            )
        val onTheWorker = CountDownLatch(1)
        val unrelated = mutableListOf<kotlinx.coroutines.Deferred<String>>()
        val thrown = interrupting.use { dibs ->
            runCatching {
                dibs.executeSuspending(name, Duration.ofMillis(1500)) {
                    // Unrelated blocking work on Dispatchers.IO, as a service has: sleepers until
                    // one is on the worker the lock was taken on (an idle worker takes work first).
                    repeat(16) {
                        unrelated +=
                            async(Dispatchers.IO) {
                                if (Thread.currentThread() == worker.get()) onTheWorker.countDown()
                                try {
                                    Thread.sleep(2_500)
                                    "slept on ${Thread.currentThread().name}"
                                } catch (e: InterruptedException) {
                                    "INTERRUPTED on ${Thread.currentThread().name}"
                                }
                            }
                    }
                    assertTrue(
                        onTheWorker.await(2, TimeUnit.SECONDS),
                        "an unrelated task runs on ${worker.get()}",
                    )
                    redis.command("DEL", RedisServer.lockKey(name))
                    delay(10_000)
                }
            }
                .exceptionOrNull()
        }
        val outcomes = unrelated.awaitAll()
        println(
            "lost lock (coroutine, interruptOnLost): ${outcomes.count { it.startsWith("slept") }} of " +
                "${outcomes.size} unrelated IO tasks slept on, the lock taken on ${worker.get().name}"
        )
        assertTrue(thrown is DibsLockLostException, "thrown: $thrown")
        assertFalse(outcomes.any { it.startsWith("INTERRUPTED") }, outcomes.toString())
    }
}
