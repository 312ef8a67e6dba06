package dibs;

/**
 * The Redis server rejected the credentials of the conn spec ({@code WRONGPASS},
 * {@code NOAUTH}, ...).
 *
 * <p>This is a configuration error, not a transient one: retrying will not help. The message
 * never contains the password. The task did not run.
 */
public class DibsAuthenticationException extends DibsException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception with the given message (the constructor JNI {@code ThrowNew} uses).
     *
     * @param message what was rejected, naming the server address
     */
    public DibsAuthenticationException(String message) {
        super(message);
    }

    /**
     * Creates an exception with the given message and cause.
     *
     * @param message what was rejected
     * @param cause the underlying failure
     */
    public DibsAuthenticationException(String message, Throwable cause) {
        super(message, cause);
    }
}
