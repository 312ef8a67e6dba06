package dibs;

/**
 * An argument that dibs refused, before any network I/O: a bad conn spec key or value, an
 * invalid lock name or duration, a {@code null}.
 *
 * <p>{@link #argument()} is the exact name of what was refused, as the native library's
 * validation names it: a conn key ({@code port}, {@code read-timeout-ms}, {@code uri},
 * {@code sentinels}, ...), {@code conn} for the conn as a whole, or a parameter
 * ({@code lockName}, {@code atMost}, {@code atLeast}). Callers that translate their own
 * settings into a conn, such as the Spring Boot starter, map it back to their setting without
 * reading the message. The message never contains a password.
 */
public final class DibsArgumentException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** The argument's name. */
    private final String argument;

    /**
     * Made by the native library (through JNI) and by dibs's own checks.
     *
     * @param argument the name of the argument refused
     * @param message what is wrong with it, naming it
     */
    DibsArgumentException(String argument, String message) {
        super(message);
        this.argument = argument;
    }

    /** @return the name of the argument refused, e.g. {@code port} or {@code lockName} */
    public String argument() {
        return argument;
    }
}
