package dibs.loader;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads the dibs native library once per class loader.
 *
 * <p>The jar carries an index, {@value #INDEX} (written by {@code scripts/build-natives.sh}): the
 * native version this jar needs ({@code version}) and, per bundled library, its SHA-256, size and
 * CRC-32 ({@code <platform>.sha256}, {@code <platform>.size}, {@code <platform>.crc32}). A jar
 * without it fails to load, saying so.
 *
 * <p>If the system property {@value #PATH_PROPERTY} names a file, that file is loaded and nothing
 * else is tried: an explicit choice that fails is an error, never a silent fall-back. Otherwise,
 * in order:
 *
 * <ol>
 *   <li>the library bundled in the jar at {@code dibs/native/<platform>/<libname>}, or made from
 *       its diff {@code dibs/native/<platform>.diff} (see {@link NativeDiff}), as a copy in
 *       {@value #TMPDIR_PROPERTY} (default {@code java.io.tmpdir}) named by the version and the
 *       indexed hash, e.g. {@code dibs-0.1.0-3f2a9c0e11d2b4a7.so}, shared by every JVM that loads
 *       the same library. A copy found there that is not the library (its size or CRC-32 not the
 *       index's: a JVM crashed before its data reached the disk) is replaced from the jar, if it is
 *       this user's own regular file; a link or another user's file is left alone, and a copy
 *       private to this class loader loaded instead. A copy found whole that does not load is
 *       tried once more, as a private copy from the jar. What was found and done is logged as a
 *       warning (but another user's copy, which a shared temp directory may well hold), and is in
 *       the error's list of ways tried if nothing loads;
 *   <li>{@code System.loadLibrary("dibs")}, which searches {@code java.library.path}.
 * </ol>
 *
 * <p>{@code <platform>} is {@code <os>-<arch>[-musl]}: {@code linux}, {@code macos} or
 * {@code windows}; {@code x86_64} or {@code aarch64}; {@code -musl} on a Linux whose running
 * process uses musl's dynamic loader (Alpine), told from {@code /proc/self/maps}, never from
 * {@code os.name}. {@code <libname>} is {@code libdibs.so}, {@code libdibs.dylib} or {@code dibs.dll}.
 *
 * <p>The platform is named by {@link NativePlatform}, the index read by {@link NativeIndex}, and
 * the copy made, trusted and cleaned up by {@link NativeCopies}.
 *
 * <p>Whatever was loaded must report the indexed {@code version}, or loading fails with both
 * versions named: an old {@code libdibs} on {@code java.library.path} never runs with new Java
 * classes. A failure is final for the class loader: every later call gets the same detailed
 * {@link UnsatisfiedLinkError}.
 */
public final class NativeLoader {
    /** System property: absolute path of a native library to load instead of the bundled one. */
    static final String PATH_PROPERTY = "dibs.native.path";
    /** System property: directory to extract the bundled library to (default java.io.tmpdir). */
    static final String TMPDIR_PROPERTY = "dibs.native.tmpdir";
    /** Where the bundled libraries live on the class path; the builds stage them there. */
    static final String RESOURCE_DIR = "dibs/native";
    /** The index of the bundled libraries, beside them; scripts/build-natives.sh writes it. */
    static final String INDEX = RESOURCE_DIR + "/natives.properties";

    static final String LIBRARY = "dibs";

    private static boolean loaded;
    /** The message of the first failure, given again to every later call. */
    private static String failure;

    private NativeLoader() {}

    /**
     * Loads the library unless already loaded. Thread-safe.
     *
     * @throws UnsatisfiedLinkError saying every way tried and why each failed; the same text on
     *     every call after a failure
     */
    public static synchronized void load() {
        if (loaded) {
            return;
        }
        if (failure == null) {
            failure = tryLoad();
            loaded = failure == null;
        }
        if (failure != null) {
            throw new UnsatisfiedLinkError(failure);
        }
    }

    /** Returns null when loaded, else the message of the error. */
    private static String tryLoad() {
        NativeIndex index;
        try {
            index = NativeIndex.read(NativeLoader.class.getClassLoader());
        } catch (NativeIndex.IndexException e) {
            return "dibs: " + e.getMessage();
        }
        String osName = System.getProperty("os.name");
        String osArch = System.getProperty("os.arch");
        String explicit = System.getProperty(PATH_PROPERTY);
        if (explicit != null && !explicit.isEmpty()) {
            String why = loadFile(Paths.get(explicit));
            if (why == null) {
                why = checkVersion(index.version);
            }
            return why == null
                    ? null
                    : "dibs: cannot load the native library named by -D" + PATH_PROPERTY + "=" + explicit
                            + ": " + why + "\nThe bundled library is not tried when -D" + PATH_PROPERTY
                            + " is set; unset it to use the library in the jar.";
        }
        String platform = NativePlatform.platform(
                osName, osArch, NativePlatform.isMusl(Paths.get("/proc/self/maps"), Paths.get("/lib")));
        List<String> tried = new ArrayList<>();
        String resource = NativePlatform.resourcePath(platform);
        String why = loadResource(index, platform);
        if (why == null) {
            return checked("classpath:" + resource, index.version);
        }
        tried.add("classpath:" + resource + ": " + why);
        try {
            System.loadLibrary(LIBRARY);
            return checked(
                    "System.loadLibrary(\"" + LIBRARY + "\") with java.library.path="
                            + System.getProperty("java.library.path"),
                    index.version);
        } catch (UnsatisfiedLinkError | SecurityException e) {
            tried.add("System.loadLibrary(\"" + LIBRARY + "\") with java.library.path="
                    + System.getProperty("java.library.path") + ": " + e.getMessage());
        }
        return failureMessage(osName, osArch, platform, tried);
    }

    /** After a load from {@code source}: null if its version is the expected one, else the error message. */
    private static String checked(String source, String expected) {
        String why = checkVersion(expected);
        return why == null ? null : "dibs: loaded the native library from " + source + ", but " + why;
    }

    /** Null if the loaded library is the expected version, else why not. One native call. */
    private static String checkVersion(String expected) {
        String nativeVersion;
        try {
            nativeVersion = version();
        } catch (UnsatisfiedLinkError e) {
            nativeVersion = null;
        }
        return versionMismatch(nativeVersion, expected);
    }

    /**
     * The native version this jar needs, from its {@value #INDEX}.
     *
     * @throws NativeIndex.IndexException if the jar carries no valid index
     */
    static String expectedVersion() throws NativeIndex.IndexException {
        return NativeIndex.read(NativeLoader.class.getClassLoader()).version;
    }

    /** Null if the versions match, else a message naming both. */
    static String versionMismatch(String nativeVersion, String javaVersion) {
        if (nativeVersion == null) {
            return "it does not report a dibs version: it is not a dibs library, or one of another build of dibs"
                    + " than this jar (" + javaVersion + ")";
        }
        if (!nativeVersion.equals(javaVersion)) {
            return "it is dibs native library version " + nativeVersion + ", and the dibs jar is version " + javaVersion
                    + ": use the library that came with the jar";
        }
        return null;
    }

    /** The version of the loaded native library (Cargo.toml's), e.g. {@code 0.1.0}. */
    static native String version();

    /** The message of the {@link UnsatisfiedLinkError} thrown when every way failed. */
    static String failureMessage(String osName, String osArch, String platform, List<String> tried) {
        StringBuilder sb = new StringBuilder()
                .append("dibs: cannot load the native library for os.name=")
                .append(osName)
                .append(", os.arch=")
                .append(osArch)
                .append(" (platform ")
                .append(platform)
                .append("). Tried:");
        for (int i = 0; i < tried.size(); i++) {
            sb.append("\n  ").append(i + 1).append(". ").append(tried.get(i));
        }
        return sb.append("\nSet -D")
                .append(PATH_PROPERTY)
                .append("=/absolute/path/to/")
                .append(System.mapLibraryName(LIBRARY))
                .append(" to use a library built for this platform.")
                .toString();
    }

    /** Loads a library file; returns null on success, else why it failed. */
    static String loadFile(Path file) {
        if (!file.isAbsolute()) {
            return "not an absolute path";
        }
        if (!Files.isRegularFile(file)) {
            return "no such file";
        }
        try {
            System.load(file.toString());
            return null;
        } catch (UnsatisfiedLinkError | SecurityException e) {
            return e.toString();
        }
    }

    /** Loads the bundled library through its copy; returns null on success, else why it failed. */
    private static String loadResource(NativeIndex index, String platform) {
        NativeCopies.Source source = bundled(NativeLoader.class.getClassLoader(), platform);
        if (source == null) {
            return "not on the class path, nor its diff " + NativeDiff.resourcePath(platform)
                    + " (no build for this platform in the jar)";
        }
        NativeIndex.Library library = index.library(platform);
        if (library == null) {
            return "the jar's " + INDEX + " has no " + platform + ".sha256 and " + platform + ".size for it"
                    + " (a jar whose libraries were staged without scripts/build-natives.sh)";
        }
        Path dir = Paths.get(System.getProperty(TMPDIR_PROPERTY, System.getProperty("java.io.tmpdir")));
        NativeCopies.Copy copy;
        try {
            copy = NativeCopies.copyOf(source, library, index.version, dir);
        } catch (NativeCopies.NotTheIndexedLibrary e) {
            return e.getMessage();
        } catch (IOException | RuntimeException e) {
            return "cannot extract it to " + dir + " (set -D" + TMPDIR_PROPERTY + " to a writable" + " directory): "
                    + e;
        }
        String found = copy.found == null ? "" : copy.found + "; ";
        if (copy.found != null && copy.unexpected) {
            warn("dibs: " + copy.found);
        }
        String why = loadFile(copy.file);
        if (why == null) {
            return null;
        }
        if (!copy.reused) {
            return found + "extracted to " + copy.file + " but " + why;
        }
        // A copy found whole (its size and CRC-32) that does not load: once more, from the jar.
        String first = "reused " + copy.file + " but " + why;
        Path again;
        try {
            again = NativeCopies.privateCopyOf(source, library, index.version, dir);
        } catch (IOException | RuntimeException e) {
            return first + "; and cannot extract it again to " + dir + ": " + e;
        }
        warn("dibs: " + first + "; loading a private copy from the jar, " + again);
        why = loadFile(again);
        return why == null ? null : first + "; extracted it again to " + again + " but " + why;
    }

    /**
     * The bytes of {@code platform}'s bundled library: whole at {@link NativePlatform#resourcePath}
     * (a platform's own jar, and the bases in the jar of every platform), else made from its
     * {@link NativeDiff}. Null if {@code cl} has neither.
     */
    static NativeCopies.Source bundled(ClassLoader cl, String platform) {
        URL whole = resource(cl, NativePlatform.resourcePath(platform));
        if (whole != null) {
            return new Whole(whole);
        }
        URL diff = resource(cl, NativeDiff.resourcePath(platform));
        return diff == null ? null : new Diffed(cl, diff);
    }

    /** The resource {@code name} of {@code cl}, the system class loader's where it is null. */
    static URL resource(ClassLoader cl, String name) {
        return cl == null ? ClassLoader.getSystemResource(name) : cl.getResource(name);
    }

    /** A library carried whole. (Classes, not lambdas: a lambda's bootstrap costs a cold JVM.) */
    private static final class Whole implements NativeCopies.Source {
        private final URL url;

        Whole(URL url) {
            this.url = url;
        }

        @Override
        public byte[] read() throws IOException {
            try (InputStream in = url.openStream()) {
                return in.readAllBytes();
            }
        }
    }

    /** A library carried as its diff from a base carried whole beside it. */
    private static final class Diffed implements NativeCopies.Source, NativeDiff.Bases {
        private final ClassLoader cl;
        private final URL diff;

        Diffed(ClassLoader cl, URL diff) {
            this.cl = cl;
            this.diff = diff;
        }

        @Override
        public byte[] read() throws IOException {
            try (InputStream in = diff.openStream()) {
                return NativeDiff.apply(in, this);
            } catch (IOException e) {
                throw new NativeCopies.NotTheIndexedLibrary(
                        "cannot make the library from " + diff + ": " + e.getMessage(), e);
            }
        }

        @Override
        public byte[] read(String base) throws IOException {
            URL url = resource(cl, NativePlatform.resourcePath(base));
            return url == null ? null : new Whole(url).read();
        }
    }

    /**
     * Logs a warning through {@code System.getLogger("dibs")}, never throwing, as the library's
     * own warnings are: a logging backend that throws never fails the load.
     */
    private static void warn(String message) {
        try {
            System.getLogger("dibs").log(System.Logger.Level.WARNING, message);
        } catch (RuntimeException | Error e) {
            // The backend failed: nothing better to tell it with.
        }
    }
}
