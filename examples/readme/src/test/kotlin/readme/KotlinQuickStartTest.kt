package readme

// readme:begin kotlin-quick-start
import dibs.Dibs
// readme:end
import java.util.concurrent.atomic.AtomicInteger
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The README's Kotlin quick start, as written, against redis:6379. */
class KotlinQuickStartTest {
    private val done = AtomicInteger()

    private fun doWork() {
        done.incrementAndGet()
    }

    @Test
    fun aCallWithAMapConnRunsTheBlockAndRecordsItsRun() {
        Readme.start().use {
            // readme:begin kotlin-quick-start
            val ran: Boolean = Dibs.execute(mapOf("uri" to "redis://redis:6379"), "job", 60, 5) { doWork() }
            // readme:end
            assertTrue(ran)
            assertEquals(1, done.get())
            Readme.assertRecorded("job", "job")
        }
    }
}
