package dibs.kotlin

import dibs.Dibs
import dibs.DibsClient
import dibs.testsupport.LockContract
import java.time.Duration
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.TestInstance

/** [executeSuspending] passes the lock contract that every front end of dibs passes. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SuspendingContractTest : LockContract() {
    private lateinit var client: DibsClient

    @BeforeAll
    fun open() {
        client = Dibs.client(redis.uri()) // after LockContract started the server
    }

    @AfterAll
    fun close() {
        client.close()
    }

    override fun runLocked(
        name: String,
        atMost: Duration,
        atLeast: Duration,
        task: Runnable,
    ): Boolean = runBlocking { client.executeSuspending(name, atMost, atLeast) { task.run() } }

    override fun frontEnd(): String = "DibsClient.executeSuspending"
}
