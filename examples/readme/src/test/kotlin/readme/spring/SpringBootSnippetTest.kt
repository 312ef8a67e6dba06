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
import readme.Readme

/**
 * The README's Spring Boot snippets as a service runs them: `spring.data.redis.url` alone, the
 * nightly `Reports` job (its cron fired by the scheduler, its tick from the trigger) and the
 * starter README's `fixedRate` job. What a user watches: the task ran, the history's entry under
 * its job, `dibs check`, the meters' `lock` tag, and the health, UP.
 */
class SpringBootSnippetTest {
    @Test
    fun theNightlyJobRunsItsTickOnceAndEverySignalSaysSo() {
        Readme.start().use {
            val night = SpringApp.nextTwoAm(ZonedDateTime.now())
            SpringApplicationBuilder(SpringApp::class.java).run().use { context ->
                val reports = context.getBean(ReportService::class.java)
                val partners = context.getBean(Partners::class.java)
                assertTrue(reports.done.await(30, TimeUnit.SECONDS), "the 2 a.m. cron fired")
                assertTrue(partners.done.await(30, TimeUnit.SECONDS), "the fixedRate job ran")
                assertEquals(1, reports.built.get())
                val tick = night.toLocalDateTime().toString()
                Readme.assertRecorded("nightly-report", "nightly-report@$tick")
                Readme.assertRecorded("partner-sync", "partner-sync")

                val meters = context.getBean(MeterRegistry::class.java)
                for (job in listOf("nightly-report", "partner-sync")) {
                    assertEquals(1.0, meters.get("dibs.lock.acquired").tag("lock", job).counter().count(), job)
                }
                val health = context.getBean(HealthEndpoint::class.java).health()
                assertEquals(Status.UP, health.status, "$health")
                val components = (health as CompositeHealth).components
                assertEquals(Status.UP, components["dibs"]?.status, "$components")
                assertEquals(Status.UP, components["dibsJobs"]?.status, "$components")
            }
        }
    }
}
