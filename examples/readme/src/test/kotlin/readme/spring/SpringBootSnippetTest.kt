package readme.spring

import io.micrometer.core.instrument.MeterRegistry
import java.time.ZonedDateTime
import java.util.concurrent.TimeUnit
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.springframework.boot.actuate.health.CompositeHealth
import org.springframework.boot.actuate.health.HealthEndpoint
import org.springframework.boot.actuate.health.Status
import org.springframework.boot.builder.SpringApplicationBuilder
import dibs.Dibs
import readme.Readme

/**
 * The README's Spring Boot snippets as a service runs them: `spring.data.redis.url` alone, the
 * nightly `Reports` job (its cron fired by the scheduler, its tick from the trigger), the nightly
 * `Exports` job with catch-up (last night's tick, which no instance ran, run when the service
 * starts) and the starter README's `fixedRate` job. What a user watches: the task ran, the history's entry under
 * its job, `dibs check`, the meters' `lock` tag, and the health, UP.
 */
class SpringBootSnippetTest {
    private fun tick(at: ZonedDateTime) = at.toLocalDateTime().toString()

    @Test
    fun theNightlyJobRunsItsTickOnceAndEverySignalSaysSo() {
        Readme.start().use { redis ->
            // The export job ran two nights ago, on an instance since gone; the fleet was down at
            // its last 2 a.m. (a deploy): this service catches that tick up when it starts.
            val lastNight = SpringApp.nextTwoAm(ZonedDateTime.now()).minusDays(1)
            val twoNightsAgo = lastNight.minusDays(1)
            Readme.recordRunAt(redis, "nightly-export", "nightly-export@${tick(twoNightsAgo)}", twoNightsAgo.toInstant())
            val night = SpringApp.nextTwoAm(ZonedDateTime.now())
            SpringApplicationBuilder(SpringApp::class.java).run().use { context ->
                val reports = context.getBean(ReportService::class.java)
                val partners = context.getBean(Partners::class.java)
                assertTrue(reports.done.await(30, TimeUnit.SECONDS), "the 2 a.m. cron fired")
                assertTrue(partners.done.await(30, TimeUnit.SECONDS), "the fixedRate job ran")
                val exports = context.getBean(ExportService::class.java)
                assertTrue(exports.done.await(30, TimeUnit.SECONDS), "last night caught up, then tonight")
                val missed = lastNight.toLocalDateTime().toString()
                assertEquals(listOf(missed, tick(night)), exports.ticks.sorted(), "each once")
                Readme.assertRecorded(
                    "nightly-export",
                    "nightly-export@${tick(night)}",
                    "nightly-export@$missed",
                    "nightly-export@${tick(twoNightsAgo)}",
                )
                val caughtUp = Dibs.history(Readme.URI, "nightly-export", 10).filter { it.catchUp() }
                assertEquals(listOf("nightly-export@$missed"), caughtUp.map { it.lockName() }, "$caughtUp")
                assertEquals(1, reports.built.get())
                Readme.assertRecorded("nightly-report", "nightly-report@${tick(night)}")
                Readme.assertRecorded("partner-sync", "partner-sync")

                val meters = context.getBean(MeterRegistry::class.java)
                for (job in listOf("nightly-report", "partner-sync")) {
                    assertEquals(1.0, meters.get("dibs.lock.acquired").tag("lock", job).counter().count(), job)
                }
                assertEquals(2.0, meters.get("dibs.lock.acquired").tag("lock", "nightly-export").counter().count())
                val health = context.getBean(HealthEndpoint::class.java).health()
                assertEquals(Status.UP, health.status, "$health")
                val components = (health as CompositeHealth).components
                assertEquals(Status.UP, components["dibs"]?.status, "$components")
                assertEquals(Status.UP, components["dibsJobs"]?.status, "$components")
            }
        }
    }
}
