package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * What the tests share: a context runner with dibs's four auto-configurations and Spring Boot's
 * SSL bundles (as every Boot application has them), the same on Boot 3 and Boot 4 (boot4/ runs
 * these classes on Boot 4), and a look at startup failures.
 */
final class Contexts {
    private Contexts() {}

    static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        DibsAutoConfiguration.class,
                        DibsMetricsAutoConfiguration.class,
                        DibsActuatorAutoConfiguration.class,
                        DibsShedLockAutoConfiguration.class,
                        SslAutoConfiguration.class));
    }

    /** Every message in the cause chain, joined: Spring wraps the failure in a few layers. */
    static String messages(Throwable failure) {
        List<String> all = new ArrayList<>();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            all.add(String.valueOf(t.getMessage()));
        }
        return String.join("\n", all);
    }

    /** The DibsStartupException in the cause chain. */
    static DibsStartupException startupException(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof DibsStartupException e) {
                return e;
            }
        }
        assertThat(failure).as("a DibsStartupException in the chain").isNull();
        return null;
    }
}
