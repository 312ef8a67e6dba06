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
     * Parses a URI conn spec; returns an opaque handle (&gt; 0). Shared: the process-wide pooled
     * client of that spec, which equal specs share. Owned: a client with a pool of its own, for a
     * {@link DibsClient}, dropped by {@link #close}. No network I/O.
     *
     * @throws IllegalArgumentException on a bad spec (the message never shows a password)
     */
    static native long connectUri(String uri, boolean owned);

    /**
     * Same as {@link #connectUri}, for a {@link java.util.Map} conn flattened by
     * {@link ConnCache#flatten} into {@code key, tag, value} triples.
     *
     * @throws IllegalArgumentException on a bad spec (unknown key, wrong type, bad value)
     */
    static native long connectMap(String[] tokens, boolean owned);

    /** Drops the pool of an owned handle. Closing twice is harmless. */
    static native void close(long handle);

    /**
     * Validates the arguments, then {@code SET key token NX PX atMost}; if won, calls
     * {@link Invocation#run()}, releases the lock, then calls
     * {@link Invocation#released(int, long, String, boolean)}.
     *
     * @param unitMs 1000 when {@code atMost}/{@code atLeast} are seconds, 1 when milliseconds
     * @return true iff the lock was won (and so the task ran)
     * @throws IllegalArgumentException on an invalid name or duration, before any I/O
     * @throws DibsException (a subclass where one fits) when the lock could not be tried;
     *     always before the task runs
     */
    static native boolean execute(
            long handle, String lockName, long atMost, long atLeast, long unitMs, Invocation inv);

    /**
     * Reads who holds a lock, in one round trip; never changes the lock.
     *
     * @throws IllegalArgumentException on an invalid name, before any I/O
     * @throws DibsException when Redis could not be read
     */
    static native LockInfo inspect(long handle, String lockName);
}
