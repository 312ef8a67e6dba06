package dibs.example

import org.springframework.boot.autoconfigure.SpringBootApplication
import org.springframework.boot.runApplication
import org.springframework.scheduling.annotation.EnableScheduling

// Every instance of this service schedules the same job; dibs makes one of them run each tick.
@SpringBootApplication @EnableScheduling class TickApplication

fun main(args: Array<String>) {
    runApplication<TickApplication>(*args)
}
