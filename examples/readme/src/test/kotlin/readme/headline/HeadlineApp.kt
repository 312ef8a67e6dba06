package readme.headline

import dibs.Dibs
import dibs.DibsClient
import dibs.spring.DibsScheduledTick
import java.time.Duration
import java.time.LocalDate
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicInteger
import org.springframework.boot.autoconfigure.SpringBootApplication
import org.springframework.scheduling.annotation.EnableScheduling
import org.springframework.scheduling.annotation.Scheduled
import org.springframework.stereotype.Component

/** The README's first lines, in a Spring Boot service whose cron fires every second. */
@SpringBootApplication
@EnableScheduling
class HeadlineApp

@Component
class Nightly(private val dibs: DibsClient) {
    val built = AtomicInteger()
    val twice = CountDownLatch(2)

    @Scheduled(cron = "* * * * * *")
    fun run() {
        val date = LocalDate.now()
        // readme:begin headline
        dibs.executeOnce("nightly-report", DibsScheduledTick.current().orElseThrow(), Duration.ofHours(1)) { buildReport() }
        Dibs.execute("redis://redis:6379", "nightly-report-$date", 600, 30) { buildReport() }   // -> Boolean
        // readme:end
    }

    private fun buildReport() {
        built.incrementAndGet()
        twice.countDown()
    }
}
