package dibs.demo;

import dibs.Dibs;
import dibs.DibsOptions;
import java.time.Duration;

/**
 * A process that takes a lock with keep-alive and then never lets go: its task prints
 * {@code HOLDING} and sleeps forever, so only a kill ends it. {@code KeepAliveTest} kills it with
 * SIGKILL and watches the lock expire by itself once the extensions stop.
 *
 * <p>Args: {@code <redis-uri> <lock-name> <atMost-ms>}. Prints {@code SKIPPED} and exits 3 when
 * the lock is held by someone else.
 */
public final class KeepAliveHolder {
    private KeepAliveHolder() {}

    public static void main(String[] args) {
        if (args.length != 3) {
            System.err.println("usage: KeepAliveHolder <redis-uri> <lock-name> <atMost-ms>");
            System.exit(2);
        }
        DibsOptions options = DibsOptions.builder().uri(args[0]).keepAlive(true).build();
        boolean won = Dibs.execute(options, args[1], Duration.ofMillis(Long.parseLong(args[2])), Duration.ZERO, () -> {
            System.out.println("HOLDING " + ProcessHandle.current().pid());
            System.out.flush();
            while (true) {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    // keep holding: only a kill ends this task
                }
            }
        });
        System.out.println(won ? "RELEASED" : "SKIPPED");
        System.exit(won ? 0 : 3);
    }
}
