package dibs.spring;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;

/** The {@code dibsJobs} health indicator on Spring Boot 3. */
public final class DibsJobsHealthIndicatorBoot3 extends AbstractHealthIndicator {
    private final DibsJobsHealthCheck check;

    /** @param check the check */
    public DibsJobsHealthIndicatorBoot3(DibsJobsHealthCheck check) {
        super("dibs jobs health check failed");
        this.check = check;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        DibsJobsHealthCheck.Result r = check.check();
        builder.status(new Status(r.status())).withDetails(r.details());
    }
}
