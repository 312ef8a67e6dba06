/**
 * dibs: a distributed scheduler lock on Redis. Run a job on exactly one instance per tick.
 *
 * <p>The whole public API is {@link dibs.Dibs} and its exceptions ({@link dibs.DibsException}
 * and its subclasses). The lock logic lives in a native library (Rust) that the jar carries at
 * {@code dibs/native/<os>-<arch>/} and loads on first use; the system property
 * {@code dibs.native.path} names a library file to load instead, and
 * {@code dibs.native.tmpdir} the directory the bundled one is extracted to. The library has no
 * runtime dependencies.
 */
package dibs;
