package dibs;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * dibs's warnings, through {@code System.getLogger("dibs")}. A logging backend may throw (a
 * log4j2 appender with {@code ignoreExceptions=false}, a broken handler): what it throws is
 * dropped here, so that logging never changes a lease's lifecycle or a call's outcome. A lock
 * whose warning could not be logged is still released.
 */
final class Log {
    private static final Logger LOG = System.getLogger("dibs");

    private Log() {}

    /** Logs {@code message} as a warning, if there is one; never throws. */
    static void warning(String message) {
        warning(message, null);
    }

    /** Logs {@code message} and {@code thrown} (may be null) as a warning; never throws. */
    static void warning(String message, Throwable thrown) {
        if (message == null) {
            return;
        }
        try {
            if (thrown == null) {
                LOG.log(Level.WARNING, message);
            } else {
                LOG.log(Level.WARNING, message, thrown);
            }
        } catch (RuntimeException | Error e) {
            // The backend failed: nothing better to tell it with. The lifecycle goes on.
        }
    }
}
