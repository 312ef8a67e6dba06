package dibs.spring

import dibs.DibsClient
import dibs.kotlin.executeSuspending
import dibs.testsupport.RedisServer
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.delay
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import org.springframework.scheduling.annotation.EnableScheduling
import org.springframework.scheduling.annotation.Scheduled

/**
 * A suspending `@Scheduled` function (Spring 6.1+) locked with dibs-kotlin's `executeSuspending`:
 * its lock is tried on an IO thread, outside the scheduler's call stack, so the starter cannot find
 * its period at its attempt. Named with [DibsJob], it is expected from start-up, every period of
 * its `fixedRate`: listed by the `dibsJobs` health while it runs, and overdue once it stops.
 * Before, the health never listed it. Against a real redis-server, with Spring's scheduler firing
 * it.
 */
class SuspendingScheduledTest {
    companion object {
        @JvmField @RegisterExtension val redis: RedisServer = RedisServer.perTestClass()

        const val JOB = "sync-ledger"
    }

    class Ledger(private val dibs: DibsClient) {
        val ran = AtomicInteger()
        @Volatile var stopped = false

        @Scheduled(fixedRate = 1000)
        @DibsJob(JOB)
        suspend fun sync() {
            check(!stopped) { "the ledger's database is down" }
            dibs.executeSuspending(JOB, Duration.ofSeconds(10)) {
                delay(1) // a suspension under the lock, as real work has
                ran.incrementAndGet()
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    open class LedgerApp {
        @Bean open fun ledger(dibs: DibsClient): Ledger = Ledger(dibs)
    }

    @Test
    fun aSuspendingJobIsListedWithItsPeriodAndTurnsOverdueWhenItStops() {
        Contexts.runner()
            .withUserConfiguration(LedgerApp::class.java)
            .withPropertyValues("spring.data.redis.port=" + redis.port(), "dibs.jobs.refresh=100ms")
            .run { context ->
                assertThat(context).hasNotFailed()
                val meters = SimpleMeterRegistry()
                context.getBean(DibsJobsMeters::class.java).bindTo(meters)
                val ledger = context.getBean(Ledger::class.java)
                val health = context.getBean(DibsJobsHealthCheck::class.java)

                // It runs: a success recorded, listed with its period, not overdue.
                FleetViews.await("$JOB has a recorded success") {
                    FleetViews.job(context, JOB)?.lastSuccess()?.isPresent == true
                }
                assertThat(ledger.ran.get()).isPositive()
                @Suppress("UNCHECKED_CAST")
                val listed =
                    (health.check().details()["jobs"] as Map<String, Map<String, Any?>>)[JOB]
                assertThat(listed)
                    .containsEntry("expectEvery", "PT1S")
                    .containsEntry("overdue", false)
                assertThat(FleetViews.view(context, JOB).expectEveryMs()).isEqualTo(1000L)

                // It stops: every fire throws before its lock. Overdue 1.5 s after its last
                // success (1 s + 0.5 s of grace); FleetViews.await allows 10 s.
                ledger.stopped = true
                FleetViews.await("$JOB is overdue") {
                    FleetViews.job(context, JOB)?.overdue() == true
                }
                ExpectedAtStartTest.assertOverdue(context, meters, JOB, Duration.ofSeconds(1))
            }
    }
}
