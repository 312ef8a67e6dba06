package readme.headline

import dibs.Dibs
import io.micrometer.core.instrument.MeterRegistry
import java.time.LocalDate
import java.util.concurrent.TimeUnit
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.springframework.boot.actuate.health.HealthEndpoint
import org.springframework.boot.actuate.health.Status
import org.springframework.boot.builder.SpringApplicationBuilder
import readme.Readme

/**
 * The README's first lines, as written: `executeOnce` with the scheduler's tick, and the plain
 * call on a per-date name, both recorded under the job `nightly-report`.
 */
class HeadlineTest {
    @Test
    fun bothLinesRunAndTheirRunsAreTheJobs() {
        Readme.start().use {
            SpringApplicationBuilder(HeadlineApp::class.java).run().use { context ->
                val nightly = context.getBean(Nightly::class.java)
                assertTrue(nightly.twice.await(30, TimeUnit.SECONDS), "both lines ran")
                // Each task ends before its release records it: wait for both records.
                val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
                var names = Dibs.history(Readme.URI, "nightly-report", 100).map { it.lockName() }
                while (names.size < 2 && System.nanoTime() < deadline) {
                    Thread.sleep(20)
                    names = Dibs.history(Readme.URI, "nightly-report", 100).map { it.lockName() }
                }
                assertTrue(names.any { it.startsWith("nightly-report@") }, "$names")
                assertEquals(1, names.count { it == "nightly-report-${LocalDate.now()}" }, "$names")
                val check = Readme.check("nightly-report")
                assertEquals(0, check.exitCode(), "$check")
                val meters = context.getBean(MeterRegistry::class.java)
                assertTrue(meters.get("dibs.lock.acquired").tag("lock", "nightly-report").counter().count() >= 1.0)
                assertEquals(Status.UP, context.getBean(HealthEndpoint::class.java).health().status)
            }
        }
    }
}
