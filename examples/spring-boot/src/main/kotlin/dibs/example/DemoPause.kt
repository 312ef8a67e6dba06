package dibs.example

import org.springframework.web.bind.annotation.PostMapping
import org.springframework.web.bind.annotation.RequestMapping
import org.springframework.web.bind.annotation.RestController

/**
 * Stops and restarts the tick job on this instance, for the demo: `POST /demo/pause`, then `POST
 * /demo/resume`. Paused on every instance, nobody runs the tick, so the fleet view sees the job go
 * overdue (the dibs.job.overdue gauge, the dibsJobs health), and recover once resumed;
 * scripts/dashboard-shot.sh does that for the dashboard's picture. A plain flag, not a scheduler
 * toggle: the @Scheduled method keeps firing and only skips calling dibs.
 */
@RestController
@RequestMapping("/demo")
class DemoPause {
    // Read by TickJob's scheduler thread, set by a request thread.
    @Volatile var paused = false

    @PostMapping("/pause")
    fun pause(): Map<String, Boolean> {
        paused = true
        return mapOf("paused" to true)
    }

    @PostMapping("/resume")
    fun resume(): Map<String, Boolean> {
        paused = false
        return mapOf("paused" to false)
    }
}
