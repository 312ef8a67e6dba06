package dibs.example

import dibs.Dibs
import org.springframework.beans.factory.annotation.Value
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty
import org.springframework.scheduling.annotation.Scheduled
import org.springframework.stereotype.Component

/**
 * A 3-second job, on only when `demo.long-job=true`: scripts/spring-boot-check.sh sends SIGTERM
 * while it runs, and checks that the graceful shutdown lets it finish and release its lock the
 * normal way. dibs never frees a lock whose task may still run.
 */
@Component
@ConditionalOnProperty("demo.long-job", havingValue = "true")
class LongJob(@Value("\${dibs.redis-uri}") private val redisUri: String) {
    @Scheduled(initialDelay = 500, fixedDelay = 3_600_000)
    fun run() {
        Dibs.execute(redisUri, "long-job", 60, 0) {
            println("LONG STARTED")
            Thread.sleep(3000)
            println("LONG FINISHED")
        }
    }
}
