package readme.shedlock.plain;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.Dibs;
import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import dibs.shedlock.DibsLockProvider;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import readme.Readme;

/**
 * The README's two beans for ShedLock without the starter, in a plain Spring application: a bare
 * provider, which cannot see how the task ended, so its run is recorded with the outcome unknown
 * and {@code dibs check} answers 3, never ok.
 */
class ShedLockWithoutStarterTest {
    static final CountDownLatch RAN = new CountDownLatch(1);

    @Configuration
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
    static class Jobs {
        // readme:begin shedlock-client
        @Bean(destroyMethod = "close")
        DibsClient dibs() { return Dibs.client("redis://redis:6379"); }
        // readme:end

        // readme:begin shedlock-provider
        @Bean
        LockProvider lockProvider(DibsClient dibs) { return new DibsLockProvider(dibs); }
        // readme:end

        @Bean
        Report report() {
            return new Report();
        }
    }

    static class Report {
        @Scheduled(fixedRate = 60_000)
        @SchedulerLock(name = "weekly-report", lockAtMostFor = "PT30S")
        public void run() {
            RAN.countDown();
        }
    }

    @Test
    void aSchedulerLockJobRunsUnderADibsLockAndIsRecorded() throws Exception {
        try (RedisServer redis = Readme.start();
                AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Jobs.class)) {
            assertTrue(RAN.await(30, TimeUnit.SECONDS), "the job ran");
            Readme.assertRecordedUnseen("weekly-report", "weekly-report");
        }
    }
}
