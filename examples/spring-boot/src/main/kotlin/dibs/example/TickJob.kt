package dibs.example

import dibs.DibsClient
import dibs.DibsException
import dibs.spring.CatchUp
import dibs.spring.DibsScheduledTick
import java.net.InetSocketAddress
import java.net.Socket
import java.net.URI
import java.time.Duration
import org.slf4j.LoggerFactory
import org.springframework.beans.factory.annotation.Value
import org.springframework.boot.context.event.ApplicationReadyEvent
import org.springframework.context.event.EventListener
import org.springframework.scheduling.annotation.Scheduled
import org.springframework.stereotype.Component

/**
 * Fires every second on every instance (a cron, in UTC); exactly one instance records each tick.
 *
 * `DibsScheduledTick.catchUp()` names the tick the scheduler fired this run for, the same on every
 * instance, with the ticks of the last 10 s before it, and `executeOnce` runs each tick once across
 * them: its lock, `tick@<tick>`, stays taken for all of atMost as the tick's done-mark, so an
 * instance whose scheduler fires the same second a little later skips it. No atLeast to size, and
 * the runs are recorded under the job `tick`.
 *
 * `@CatchUp`: a tick that no instance ran (all of them down, or a scheduler that let a fire pass
 * because the one before it completed late) is run at the next fire, once, and recorded as a
 * catch-up. When the instances start, the ticks of the 10 s before are caught up too.
 */
@Component
class TickJob(
    // The starter's bean, made from spring.data.redis.url: no URI in code.
    private val dibs: DibsClient,
    // Only for record()'s own connection to the ledger, not for dibs.
    @Value("\${spring.data.redis.url}") private val redisUrl: String,
    @Value("\${demo.instance}") private val instance: String,
    // POST /demo/pause and /demo/resume: the demo stops this instance's ticks with it.
    private val pause: DemoPause,
) {
    private val log = LoggerFactory.getLogger(TickJob::class.java)

    @Volatile private var threadShown = false

    @Scheduled(cron = "* * * * * *", zone = "UTC")
    @CatchUp(policy = "all", window = "PT10S")
    fun tick() {
        if (!threadShown) {
            // scripts/spring-boot-check.sh reads which kind of thread runs the job.
            threadShown = true
            println("TICK THREAD ${Thread.currentThread()}")
        }
        if (pause.paused) {
            // Paused for the demo: not even tried, so no instance runs it and it goes overdue.
            return
        }
        val ticks = DibsScheduledTick.catchUp()
        try {
            dibs.executeOnce("tick", ticks, AT_MOST) { tick -> record(tick) }
        } catch (e: DibsException) {
            // Redis unreachable or refusing: this instance sits the tick out; the next fire catches
            // it up. dibs's messages never hold a password, so the message is safe to log.
            log.warn("ticks {} not all tried: {}", ticks, e.message)
        }
    }

    // scripts/spring-boot-check.sh counts ticks only from the moment every instance said this.
    @EventListener(ApplicationReadyEvent::class)
    fun ready() {
        println("READY $instance")
    }

    // Stands in for the job's real work: RPUSH "<instance> <tick>" onto the list demo:ticks, which
    // scripts/spring-boot-check.sh reads. One raw RESP command keeps the example free of a Redis
    // client library; a real job would use its own.
    private fun record(tick: String) {
        val uri = URI(redisUrl)
        val args = listOf("RPUSH", LEDGER, "$instance $tick")
        val command = buildString {
            append("*${args.size}\r\n")
            args.forEach { append("\$${it.toByteArray().size}\r\n$it\r\n") }
        }
        Socket().use { socket ->
            socket.connect(InetSocketAddress(uri.host, uri.port), 2000)
            socket.soTimeout = 2000
            socket.getOutputStream().write(command.toByteArray())
            val reply = socket.getInputStream().bufferedReader().readLine()
            check(reply != null && reply.startsWith(":")) { "RPUSH failed: $reply" }
        }
    }

    private companion object {
        const val LEDGER = "demo:ticks"

        // Far above the task's run time and the schedulers' skew: each tick stays done for 5 s,
        // and a crashed instance blocks no other tick.
        val AT_MOST: Duration = Duration.ofSeconds(5)
    }
}
