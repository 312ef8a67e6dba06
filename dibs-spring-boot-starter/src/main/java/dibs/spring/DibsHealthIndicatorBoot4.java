package dibs.spring;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/** The {@code dibs} health indicator on Spring Boot 4 ({@code org.springframework.boot.health.contributor}). */
public final class DibsHealthIndicatorBoot4 extends AbstractHealthIndicator {
    private final DibsHealthCheck check;

    /** @param check the check */
    public DibsHealthIndicatorBoot4(DibsHealthCheck check) {
        super("dibs health check failed");
        this.check = check;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        DibsHealthCheck.Result r = check.check();
        (r.up() ? builder.up() : builder.down()).withDetails(r.details());
        if (!r.up()) {
            builder.withDetail("reason", r.reason());
        }
    }
}
