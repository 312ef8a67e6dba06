package dibs.robustness;

import dibs.Dibs;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The ShedLock job of {@link SpringWorker}: a cron every second under {@code @SchedulerLock}
 * "s-shed" (atMost 4 s, atLeast 0.5 s), whose lock dibs-shedlock's provider takes on the
 * starter's client. ShedLock takes the lock before the method runs and says nothing when it
 * skips, so this job reports only its runs ({@code start}, {@code write}, {@code end}): no
 * {@code call} and no {@code outcome}.
 *
 * <p>Its fencing token: {@code Dibs.fencingToken()} if it answers inside a ShedLock-locked
 * method, else the token of the lease ShedLock took, as {@link ShedLockTokens} heard it. Which
 * one is printed once, as {@code SHEDLOCK-TOKEN ...}.
 */
@Component
public class ShedLockJob {
    static final String LOCK = "s-shed";

    private final Ledger ledger;
    private final ShedLockTokens tokens;
    private final String instance;
    private final Random workTimes;
    private final AtomicBoolean told = new AtomicBoolean();

    public ShedLockJob(
            Ledger ledger,
            ShedLockTokens tokens,
            @Value("${dibs.harness.instance}") String instance,
            @Value("${dibs.harness.seed:1}") long seed) {
        this.ledger = ledger;
        this.tokens = tokens;
        this.instance = instance;
        this.workTimes = SpringJobs.workTimes(seed, instance, "shedlock");
    }

    @Scheduled(cron = "* * * * * *", zone = "UTC")
    @SchedulerLock(name = LOCK, lockAtMostFor = "PT4S", lockAtLeastFor = "PT0.5S")
    public void run() {
        long heard = tokens.take(); // first: this thread's token, whatever happens next
        long token;
        String source;
        try {
            token = Dibs.fencingToken();
            source = "Dibs.fencingToken()";
        } catch (IllegalStateException e) {
            token = heard;
            source = "the lease's acquired event (Dibs.fencingToken(): " + e.getMessage() + ")";
        }
        if (told.compareAndSet(false, true)) {
            Out.line("SHEDLOCK-TOKEN from " + source);
        }
        Call call = Call.next(ledger, instance, "shedlock", LOCK);
        HarnessTask.run(call, LOCK, "", 0, token, SpringJobs.work(workTimes));
    }
}
