package readme.shedlock.starter;

import dibs.DibsClient;
import dibs.shedlock.DibsLockProvider;
import java.util.concurrent.CountDownLatch;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/** A Spring Boot service with the starter, whose ShedLock jobs run on the README's provider. */
@SpringBootApplication
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
public class ShedLockApp {
    // readme:begin shedlock-provider
    @Bean
    LockProvider lockProvider(DibsClient dibs) { return new DibsLockProvider(dibs); }
    // readme:end

    /** A ShedLock job, unchanged: it runs at start, then every minute. */
    @Component
    public static class Cleanup {
        final CountDownLatch ran = new CountDownLatch(1);

        @Scheduled(fixedRate = 60_000)
        @SchedulerLock(name = "cleanup", lockAtMostFor = "PT30S")
        public void run() {
            ran.countDown();
        }

        public boolean awaitRun() throws InterruptedException {
            return ran.await(30, java.util.concurrent.TimeUnit.SECONDS);
        }
    }
}
