package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.testsupport.DibsCli;
import dibs.testsupport.RedisServer;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.springframework.context.ApplicationContext;

/**
 * What the fleet view's tests share: waiting for a read of the view, a job in it, and what
 * {@code dibs check} says of it.
 */
final class FleetViews {
    /**
     * How long a test waits for a state of the view: with {@code dibs.jobs.refresh=100ms}, a read
     * has shown each state within 0.3 s here; this is over 30 times that.
     */
    private static final long AWAIT_S = 10;

    private FleetViews() {}

    /** Waits until {@code condition} holds, failing with {@code what} after {@value #AWAIT_S} s. */
    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(AWAIT_S);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    /** The job {@code name} in the view as last read, or null. */
    static DibsJobs.Job job(ApplicationContext context, String name) {
        return context.getBean(DibsJobs.class).expected().get(name);
    }

    /** {@code dibs ARGS} against {@code redis}, printed: its exit code. */
    static int check(RedisServer redis, String... args) throws Exception {
        DibsCli out = DibsCli.run(redis.uri(), args);
        System.out.println("dibs " + String.join(" ", args) + ": " + out);
        return out.exitCode();
    }

    /** The job {@code name} in {@code /actuator/dibs}. */
    static DibsEndpoint.JobView view(ApplicationContext context, String name) {
        return context.getBean(DibsEndpoint.class).locks().jobs().stream()
                .filter(j -> j.name().equals(name))
                .findFirst()
                .orElseThrow();
    }
}
