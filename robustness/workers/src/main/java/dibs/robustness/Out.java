package dibs.robustness;

import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The workers' stdout, which the harness reads line by line: {@code READY}, {@code DONE},
 * {@code LEDGER-ERROR}, {@code STUCK} and dibs's own log as {@code LOG <epoch ms> <level> <message>}.
 * One line per call, flushed at once, so that a process the harness kills or stops has told
 * everything it printed.
 */
final class Out {
    /**
     * The "dibs" logger, held here: java.util.logging holds loggers weakly, and a collected
     * logger would take the handler with it.
     */
    @SuppressWarnings("unused")
    private static Logger held;

    private Out() {}

    static synchronized void line(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /**
     * Routes the {@code java.util.logging} logger "dibs" at INFO and above to stdout, as
     * {@code ChaosInstance} does, and nowhere else: the harness matches dibs's warnings (lost
     * locks, unconfirmed acquires, failed releases) against the faults it injected.
     */
    static void routeDibsLog() {
        Logger dibsLog = Logger.getLogger("dibs");
        dibsLog.addHandler(new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.INFO.intValue()) {
                    line("LOG " + System.currentTimeMillis() + " " + r.getLevel() + " "
                            + String.valueOf(r.getMessage()).replace('\n', ' '));
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        });
        dibsLog.setUseParentHandlers(false); // no second copy on stderr
        held = dibsLog;
    }
}
