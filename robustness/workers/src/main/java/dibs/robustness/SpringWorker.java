package dibs.robustness;

import dibs.DibsClient;
import dibs.shedlock.DibsLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.task.ThreadPoolTaskSchedulerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A worker of the robustness harness as a Spring Boot service: the starter's {@link DibsClient}
 * bean (from {@code spring.data.redis.*}), its health, meters and {@code /actuator/dibs}, and
 * three scheduled jobs that report to the harness's ledger: {@code spring-once} and
 * {@code spring-catchup} ({@link SpringJobs}) and {@code shedlock} ({@link ShedLockJob}, through
 * dibs-shedlock's provider).
 *
 * <p>Args are Spring properties: {@code --server.port=P --dibs.harness.instance=s1
 * --dibs.harness.ledger=http://127.0.0.1:L --spring.data.redis.url=redis://...}, and optionally
 * {@code --dibs.harness.seed=N} (the work times; 1 by default). Sentinel and Cluster are the
 * starter's {@code spring.data.redis.sentinel.master}/{@code .sentinel.nodes} and
 * {@code spring.data.redis.cluster.nodes}. The crons name no zone: they fire in the scheduler's
 * clock's, {@link HarnessZone} from {@code --dibs.harness.dst-anchor=EPOCH_S} (every worker of a
 * run the same), with a DST change every 20 s. The defaults (actuator exposure, timeouts, scheduler pool) are in
 * {@code application.properties}. Prints {@code READY <id>} once the application is ready; runs
 * until it is stopped.
 */
@SpringBootApplication
@EnableScheduling
// ShedLock's default interception: a proxy around each @SchedulerLock method.
@EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
public class SpringWorker {
    /** Made by Spring. */
    public SpringWorker() {}

    public static void main(String[] args) {
        SpringApplication.run(SpringWorker.class, args);
    }

    /** ShedLock's locks, taken by dibs on the starter's client (dibs-shedlock's README). */
    @Bean
    LockProvider lockProvider(DibsClient dibs) {
        return new DibsLockProvider(dibs);
    }

    /** The fencing tokens of ShedLock's leases, which {@code Dibs.fencingToken()} does not see. */
    @Bean
    ShedLockTokens shedLockTokens() {
        return new ShedLockTokens(ShedLockJob.LOCK);
    }

    /** The scheduler's clock, in the harness's zone of frequent DST changes. */
    @Bean
    ThreadPoolTaskSchedulerCustomizer harnessZone(@Value("${dibs.harness.dst-anchor}") long anchor) {
        java.time.ZoneId zone = HarnessZone.register(anchor);
        return scheduler -> scheduler.setClock(java.time.Clock.system(zone));
    }

    @Bean
    Ledger ledger(@Value("${dibs.harness.ledger}") String url) {
        return new Ledger(url);
    }

    @EventListener(ApplicationReadyEvent.class)
    void ready(ApplicationReadyEvent event) {
        Out.line("READY " + event.getApplicationContext().getEnvironment().getProperty("dibs.harness.instance"));
    }
}
