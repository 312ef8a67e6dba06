package dibs;

/**
 * The JNI boundary: the only methods of dibs implemented in Rust ({@code Java_dibs_NativeLib_*}).
 *
 * <p>Names and signatures are a contract with the Rust crate; change both sides together.
 * Loading the class loads the native library (see {@link NativeLoader}).
 */
final class NativeLib {
    static {
        NativeLoader.load();
    }

    private NativeLib() {}

    /**
     * Parses a URI conn spec; returns an opaque handle (&gt; 0) to a shared, pooled Redis client
     * for that spec. Equal specs share one client. No network I/O.
     *
     * @throws IllegalArgumentException on a bad spec (the message never shows a password)
     */
    static native long connectUri(String uri);

    /**
     * Same as {@link #connectUri}, for a {@link java.util.Map} conn flattened by
     * {@link ConnCache#flatten} into {@code key, tag, value} triples.
     *
     * @throws IllegalArgumentException on a bad spec (unknown key, wrong type, bad value)
     */
    static native long connectMap(String[] tokens);

    /**
     * Validates the arguments, then {@code SET key token NX PX atMost}; if won, calls
     * {@link Invocation#run()}, releases the lock, then calls
     * {@link Invocation#released(int, long, String)}.
     *
     * @param unitMs 1000 when {@code atMost}/{@code atLeast} are seconds, 1 when milliseconds
     * @return true iff the lock was won (and so the task ran)
     * @throws IllegalArgumentException on an invalid name or duration, before any I/O
     * @throws DibsException (a subclass where one fits) when the lock could not be tried;
     *     always before the task runs
     */
    static native boolean execute(
            long handle, String lockName, long atMost, long atLeast, long unitMs, Invocation inv);
}
