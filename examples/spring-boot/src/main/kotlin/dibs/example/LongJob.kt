package dibs.example

import dibs.DibsClient
import java.time.Duration
import org.springframework.beans.factory.annotation.Value
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty
import org.springframework.scheduling.annotation.Scheduled
import org.springframework.stereotype.Component

/**
 * A long locked job, on only when `demo.long-job=true`: every instance tries it a second after its
 * last try ended; the winner holds the lock for the job's run, plus what is left of `atLeast`.
 * scripts/spring-boot-check.sh uses it twice:
 * - 3 instances run it (8 s job, 10 s atLeast, so a lock just released is never taken again at
 *   once): the check reads `/actuator/dibs` of each while a run holds the lock, and finds the lock
 *   on exactly one instance;
 * - one instance runs it (3 s, atLeast 0): the check sends SIGTERM while the job runs, and checks
 *   that the graceful shutdown lets it finish and release its lock the normal way. dibs never frees
 *   a lock whose task may still run.
 */
@Component
@ConditionalOnProperty("demo.long-job", havingValue = "true")
class LongJob(
    private val dibs: DibsClient,
    @Value("\${demo.long-job-name:long-job}") private val name: String,
    @Value("\${demo.long-job-seconds:8}") private val seconds: Long,
    @Value("\${demo.long-job-at-least-seconds:10}") private val atLeast: Long,
) {
    @Scheduled(initialDelay = 500, fixedDelay = 1000)
    fun run() {
        dibs.execute(name, Duration.ofSeconds(60), Duration.ofSeconds(atLeast)) {
            println("LONG STARTED")
            Thread.sleep(seconds * 1000)
            println("LONG FINISHED")
        }
    }
}
