package dibs.demo;

import dibs.Dibs;
import dibs.DibsOptions;
import java.time.Duration;

/**
 * A process that takes a lock (with keep-alive, or plain) and then never lets go: its task prints
 * {@code HOLDING} and sleeps forever, so only a kill ends it. {@code KeepAliveTest} kills it with
 * SIGKILL and watches the lock expire by itself: once the extensions stop, or at atMost.
 *
 * <p>Args: {@code <redis-uri> <lock-name> <atMost-ms> [keep-alive|plain]} (default keep-alive).
 * Prints {@code SKIPPED} and exits 3 when the lock is held by someone else.
 */
public final class KeepAliveHolder {
    private KeepAliveHolder() {}

    public static void main(String[] args) {
        if (args.length < 3 || args.length > 4) {
            System.err.println("usage: KeepAliveHolder <redis-uri> <lock-name> <atMost-ms> [keep-alive|plain]");
            System.exit(2);
        }
        boolean keepAlive = args.length < 4 || args[3].equals("keep-alive");
        DibsOptions options =
                DibsOptions.builder().uri(args[0]).keepAlive(keepAlive).build();
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
