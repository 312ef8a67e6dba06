package dibs;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;

/**
 * Holder A of {@code FencingPostgresTest}: a process that takes a lock through dibs (no
 * keep-alive, atLeast 0), prints its fencing token, "works" for a while (the test pauses it with
 * SIGSTOP here, past atMost), then writes row 1 of {@code report} with its token and prints how
 * many rows the write updated.
 *
 * <p>Args: {@code <redis-uri> <lock-name> <atMost-ms> <jdbc-url> <fenced|unfenced> <work-ms>}.
 * {@code fenced} writes {@code ... WHERE id = 1 AND fence < token}; {@code unfenced} the same
 * statement without the fence condition (the control).
 *
 * <p>Prints {@code TOKEN <token> <pid>} once it holds the lock, {@code UPDATED <rows> <ms>}
 * after its write (ms: how long its work really took, pause included), then
 * {@code DONE acquired=.. ownedToTheEnd=.. token=..} and exits 0; {@code SKIPPED} and exits 3
 * when the lock was held by someone else; exits 1 on any error.
 */
public final class FencedWriter {
    static final String FENCED = "UPDATE report SET body = ?, fence = ? WHERE id = 1 AND fence < ?";
    static final String UNFENCED = "UPDATE report SET body = ?, fence = ? WHERE id = 1";

    private FencedWriter() {}

    public static void main(String[] args) {
        if (args.length != 6 || !(args[4].equals("fenced") || args[4].equals("unfenced"))) {
            System.err.println("usage: FencedWriter <redis-uri> <lock-name> <atMost-ms> <jdbc-url> "
                    + "<fenced|unfenced> <work-ms>");
            System.exit(2);
        }
        String name = args[1];
        Duration atMost = Duration.ofMillis(Long.parseLong(args[2]));
        boolean fenced = args[4].equals("fenced");
        long workMs = Long.parseLong(args[5]);
        DibsOptions options =
                DibsOptions.builder().uri(args[0]).keepAlive(false).build();
        try (Connection db = DriverManager.getConnection(args[3])) { // opened before the lock, as a pool would be
            DibsResult<Integer> r = Dibs.attempt(options, name, atMost, Duration.ZERO, () -> {
                long token = Dibs.fencingToken();
                System.out.println(
                        "TOKEN " + token + " " + ProcessHandle.current().pid());
                System.out.flush();
                long started = System.nanoTime();
                sleep(workMs); // the work; SIGSTOP lands here
                int rows = write(db, fenced, "A", token);
                System.out.println("UPDATED " + rows + " " + (System.nanoTime() - started) / 1_000_000);
                System.out.flush();
                return rows;
            });
            if (!r.acquired()) {
                System.out.println("SKIPPED");
                System.exit(3);
            }
            System.out.println("DONE acquired=true ownedToTheEnd=" + r.ownedToTheEnd() + " token=" + r.fencingToken());
            System.out.flush();
        } catch (Throwable t) {
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(1);
        }
        System.exit(0);
    }

    /** Writes row 1 with {@code body} and {@code token}, fenced or not: the rows updated. */
    static int write(Connection db, boolean fenced, String body, long token) {
        try (PreparedStatement st = db.prepareStatement(fenced ? FENCED : UNFENCED)) {
            st.setString(1, body);
            st.setLong(2, token);
            if (fenced) {
                st.setLong(3, token);
            }
            return st.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException("the write failed: " + e, e);
        }
    }

    private static void sleep(long ms) {
        long end = System.nanoTime() + ms * 1_000_000;
        for (long left = ms; left > 0; left = (end - System.nanoTime()) / 1_000_000) {
            try {
                Thread.sleep(left);
            } catch (InterruptedException e) {
                // keep working: only the clock ends the work
            }
        }
    }
}
