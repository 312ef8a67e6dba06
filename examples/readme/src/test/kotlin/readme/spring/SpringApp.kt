package readme.spring

import java.time.Clock
import java.time.Duration
import java.time.LocalTime
import java.time.ZonedDateTime
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicInteger
import org.springframework.boot.autoconfigure.SpringBootApplication
import org.springframework.context.annotation.Bean
import org.springframework.scheduling.annotation.EnableScheduling
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler
import org.springframework.stereotype.Component

/**
 * A Spring Boot service of the README's Spring snippets. Its scheduler's clock reads 1.5 s before
 * the next 2 a.m., so that the README's nightly cron ("0 0 2 * * *") fires now, through the
 * scheduler and its trigger, as it would at night.
 */
@SpringBootApplication
@EnableScheduling
class SpringApp {
    @Bean
    fun taskScheduler(): ThreadPoolTaskScheduler {
        val now = ZonedDateTime.now()
        val scheduler = ThreadPoolTaskScheduler()
        scheduler.poolSize = 2
        scheduler.clock = Clock.offset(Clock.systemDefaultZone(), Duration.between(now, nextTwoAm(now).minus(Duration.ofMillis(1500))))
        return scheduler
    }

    companion object {
        /** The next 2 a.m. after [now], in its zone. */
        fun nextTwoAm(now: ZonedDateTime): ZonedDateTime {
            val today = now.with(LocalTime.of(2, 0))
            return if (today.isAfter(now)) today else today.plusDays(1)
        }
    }
}

/** The report the nightly job builds: counted. */
@Component
class ReportService {
    val built = AtomicInteger()
    val done = CountDownLatch(1)

    fun build() {
        built.incrementAndGet()
        done.countDown()
    }
}

/** The exports the nightly export job made, by tick. */
@Component
class ExportService {
    val ticks = java.util.concurrent.CopyOnWriteArrayList<String>()
    val done = CountDownLatch(2)

    fun export(tick: String) {
        ticks.add(tick)
        done.countDown()
    }
}

/** The partners the sync job syncs: counted. */
@Component
class Partners {
    val synced = AtomicInteger()
    val done = CountDownLatch(1)

    fun sync() {
        synced.incrementAndGet()
        done.countDown()
    }
}
