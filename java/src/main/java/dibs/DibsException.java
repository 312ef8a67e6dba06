package dibs;

/**
 * Base class of every failure that dibs itself reports, other than a bad argument.
 *
 * <p>Thrown as is for an error reply of the Redis server that no subclass covers (for example
 * {@code OOM} or {@code READONLY}) and for an internal error of the native library. The
 * subclasses name the cases a caller may want to handle apart: {@link DibsConnectionException}
 * (and its {@link DibsTimeoutException}), {@link DibsAuthenticationException} and
 * {@link DibsPermissionException}.
 *
 * <p>Invalid arguments (an empty lock name, {@code atLeast > atMost}, a malformed conn spec,
 * a {@code null}) are reported as {@link IllegalArgumentException} instead, always before any
 * network I/O. No message of dibs contains a password.
 *
 * <p>When one of these is thrown by {@code Dibs.execute}, the task did not run.
 */
public class DibsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception with the given message.
     *
     * <p>The native library throws dibs exceptions through JNI {@code ThrowNew}, which needs
     * this constructor.
     *
     * @param message what went wrong, naming the server address and the lock where known
     */
    public DibsException(String message) {
        super(message);
    }

    /**
     * Creates an exception with the given message and cause.
     *
     * @param message what went wrong
     * @param cause the underlying failure
     */
    public DibsException(String message, Throwable cause) {
        super(message, cause);
    }
}
