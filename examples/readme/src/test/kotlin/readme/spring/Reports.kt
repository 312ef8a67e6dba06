package readme.spring

import dibs.DibsClient
import dibs.spring.CatchUp
import dibs.spring.DibsScheduledTick
import java.time.Duration
import org.springframework.scheduling.annotation.Scheduled
import org.springframework.stereotype.Component

// readme:begin spring-reports
@Component
class Reports(private val dibs: DibsClient, private val reports: ReportService) {
    @Scheduled(cron = "0 0 2 * * *")
    fun nightly() {
        dibs.executeOnce("nightly-report", DibsScheduledTick.current().orElseThrow(), Duration.ofHours(1)) {
            reports.build()
        }
    }
}
// readme:end

@Component
class Exports(private val dibs: DibsClient, private val exports: ExportService) {
    // readme:begin spring-catch-up
    @Scheduled(cron = "0 0 2 * * *")
    @CatchUp(policy = "latest", window = "PT24H")
    fun nightly() {
        dibs.executeOnce("nightly-export", DibsScheduledTick.catchUp(), Duration.ofHours(1)) { tick ->
            exports.export(tick)
        }
    }
    // readme:end
}

@Component
class PartnerSync(private val dibs: DibsClient, private val partners: Partners) {
    // readme:begin starter-fixed-rate
    @Scheduled(fixedRate = 60_000)
    fun sync() {
        dibs.execute("partner-sync", Duration.ofMinutes(5), Duration.ofSeconds(30)) { partners.sync() }
    }
    // readme:end
}
