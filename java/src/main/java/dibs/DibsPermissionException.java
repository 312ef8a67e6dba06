package dibs;

/**
 * The Redis user may not run a command dibs needs or touch the lock's key ({@code NOPERM}).
 *
 * <p>dibs runs {@code SET} and a Lua script ({@code EVALSHA}/{@code EVAL}) on the keys under
 * its key prefix ({@code dibs:} unless the conn spec's {@code key-prefix} says otherwise), so
 * the ACL of its user must allow those commands on those keys. This is a configuration error,
 * not a transient one. The task did not run.
 */
public class DibsPermissionException extends DibsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception with the given message (the constructor JNI {@code ThrowNew} uses).
     *
     * @param message what was refused, naming the server address and the lock
     */
    public DibsPermissionException(String message) {
        super(message);
    }

    /**
     * Creates an exception with the given message and cause.
     *
     * @param message what was refused
     * @param cause the underlying failure
     */
    public DibsPermissionException(String message, Throwable cause) {
        super(message, cause);
    }
}
