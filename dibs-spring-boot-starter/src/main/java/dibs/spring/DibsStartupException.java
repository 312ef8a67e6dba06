package dibs.spring;

/**
 * A property that dibs's auto-configuration cannot use: missing, unparsable or unsupported. It
 * fails the application's startup (never the first tick), and its message names the property.
 * It never holds a password.
 *
 * <p>Where dibs's native library refused a value, the cause is its
 * {@link dibs.DibsArgumentException}, whose argument was mapped to the property by a table.
 */
public final class DibsStartupException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String property;

    /**
     * @param property the property at fault, e.g. {@code spring.data.redis.sentinel.master}
     * @param problem what is wrong with it, without its value when that may be secret
     */
    public DibsStartupException(String property, String problem) {
        super(property + " " + problem);
        this.property = property;
    }

    /** The same, for a refusal of dibs's, kept as the cause. */
    DibsStartupException(String property, String problem, Throwable cause) {
        super(property + " " + problem, cause);
        this.property = property;
    }

    /** @return the property at fault */
    public String property() {
        return property;
    }
}
