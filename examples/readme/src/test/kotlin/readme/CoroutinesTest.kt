package readme

import dibs.Dibs
// readme:begin coroutines
import dibs.kotlin.executeSuspending
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds
// readme:end
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** The README's suspend block under a lock, as written, against redis:6379. */
class CoroutinesTest {
    private val synced = AtomicInteger()

    private suspend fun syncPartners() {
        delay(10)
        synced.incrementAndGet()
    }

    @Test
    fun aSuspendBlockRunsUnderTheLockAndItsRunIsRecorded() {
        Readme.start().use {
            Dibs.client(Readme.URI).use { dibs ->
                runBlocking {
                    // readme:begin coroutines
                    dibs.executeSuspending("partner-sync", 5.minutes, 10.seconds) { syncPartners() }   // a suspend fun
                    // readme:end
                }
            }
            assertEquals(1, synced.get())
            Readme.assertRecorded("partner-sync", "partner-sync")
        }
    }
}
