package dibs.spring;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/** The {@code dibs} health indicator on Spring Boot 3 ({@code org.springframework.boot.actuate.health}). */
public final class DibsHealthIndicatorBoot3 extends AbstractHealthIndicator {
    private final DibsHealthCheck check;

    /** @param check the check */
    public DibsHealthIndicatorBoot3(DibsHealthCheck check) {
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
