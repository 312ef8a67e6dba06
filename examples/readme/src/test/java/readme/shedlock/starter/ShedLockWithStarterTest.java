package readme.shedlock.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.testsupport.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import readme.Readme;

/**
 * The README's ShedLock provider on the starter's client: a {@code @SchedulerLock} job runs
 * under a dibs lock, and is in the history, the meters and the health like any locked call.
 */
class ShedLockWithStarterTest {
    @Test
    void aSchedulerLockJobIsInTheHistoryTheMetersAndTheHealth() throws Exception {
        try (RedisServer redis = Readme.start();
                ConfigurableApplicationContext context = new SpringApplicationBuilder(ShedLockApp.class).run()) {
            assertTrue(context.getBean(ShedLockApp.Cleanup.class).awaitRun(), "the job ran");
            Readme.assertRecorded("cleanup", "cleanup");
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertEquals(1.0, meters.get("dibs.lock.acquired").tag("lock", "cleanup").counter().count());
            assertEquals(Status.UP, context.getBean(HealthEndpoint.class).health().getStatus());
        }
    }
}
