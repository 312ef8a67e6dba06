package dibs;

/**
 * A connect, read or write to the Redis server did not finish within its timeout (see the
 * {@code timeout-ms}, {@code conn-timeout-ms} and {@code read-timeout-ms} conn keys).
 *
 * <p>A timeout is a kind of connection failure, so a handler of
 * {@link DibsConnectionException} also catches this. The task did not run.
 */
public class DibsTimeoutException extends DibsConnectionException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception with the given message (the constructor JNI {@code ThrowNew} uses).
     *
     * @param message what timed out, naming the server address
     */
    public DibsTimeoutException(String message) {
        super(message);
    }

    /**
     * Creates an exception with the given message and cause.
     *
     * @param message what timed out
     * @param cause the underlying failure
     */
    public DibsTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
