package dibs.spring;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/** The {@code dibsJobs} health indicator on Spring Boot 4. */
public final class DibsJobsHealthIndicatorBoot4 extends AbstractHealthIndicator {
    private final DibsJobsHealthCheck check;

    /** @param check the check */
    public DibsJobsHealthIndicatorBoot4(DibsJobsHealthCheck check) {
        super("dibs jobs health check failed");
        this.check = check;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        DibsJobsHealthCheck.Result r = check.check();
        builder.status(new Status(r.status())).withDetails(r.details());
    }
}
