package dibs.kotlin

import dibs.Dibs
import dibs.DibsClient
import dibs.DibsOptions
import dibs.RedisServer
import java.time.Duration
import java.util.concurrent.atomic.AtomicLong
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance

/**
 * Issue 18 (3): with keep-alive, a suspending block whose lock is found lost is cancelled at
 * once with DibsLockLostException, which the call throws after the release. An outsider
 * deletes the held key; keep-alive's next extension (atMost / 3 later) finds it gone.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SuspendingLostLockTest {
    private lateinit var redis: RedisServer
    private lateinit var client: DibsClient

    @BeforeAll
    fun start() {
        redis = RedisServer.launch()
        client = Dibs.client(DibsOptions.builder().uri(redis.uri()).keepAlive(true).build())
    }

    @AfterAll
    fun stop() {
        client.close()
        redis.close()
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
                }.start()
                try {
                    delay(10_000)
                    reachedTheEnd = true
                } finally {
                    cancelledAt = System.nanoTime()
                }
            }
        }.exceptionOrNull()
        val afterMs = (cancelledAt - deletedAt.get()) / 1_000_000
        println("lost lock (coroutine): the block was cancelled $afterMs ms after the key was deleted (period 500 ms)")
        assertTrue(thrown is DibsLockLostException, "thrown: $thrown")
        assertEquals(name, (thrown as DibsLockLostException).lockName)
        assertTrue(!reachedTheEnd && afterMs <= 800, "cancelled after $afterMs ms")
        assertEquals("0", redis.command("EXISTS", RedisServer.lockKey(name)))
    }
}
