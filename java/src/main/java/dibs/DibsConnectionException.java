package dibs;

/**
 * The Redis server could not be reached, or the connection broke while the lock was being
 * acquired (refused, unknown host, reset, closed by the server).
 *
 * <p>The task did not run. Whether another instance ran it is unknown; a scheduler will
 * normally just try again on its next tick. {@link DibsTimeoutException} is the subclass for a
 * connect, read or write that did not finish in time.
 */
public class DibsConnectionException extends DibsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception with the given message (the constructor JNI {@code ThrowNew} uses).
     *
     * @param message what went wrong, naming the server address
     */
    public DibsConnectionException(String message) {
        super(message);
    }

    /**
     * Creates an exception with the given message and cause.
     *
     * @param message what went wrong
     * @param cause the underlying failure
     */
    public DibsConnectionException(String message, Throwable cause) {
        super(message, cause);
    }
}
