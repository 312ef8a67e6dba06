package dibs;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * Loads the dibs native library once per class loader.
 *
 * <p>If the system property {@value #PATH_PROPERTY} names a file, that file is loaded and nothing
 * else is tried: an explicit choice that fails is an error, never a silent fall-back. Otherwise,
 * in order:
 *
 * <ol>
 *   <li>the library bundled in the jar at {@code dibs/native/<platform>/<libname>}, copied to
 *       {@value #TMPDIR_PROPERTY} (default {@code java.io.tmpdir}) under a name that carries the
 *       version and a content hash, e.g. {@code dibs-0.1.0-3f2a9c…-<unique>.so};
 *   <li>{@code System.loadLibrary("dibs")}, which searches {@code java.library.path}.
 * </ol>
 *
 * <p>{@code <platform>} is {@code <os>-<arch>[-musl]}: {@code linux}, {@code macos} or
 * {@code windows}; {@code x86_64} or {@code aarch64}; {@code -musl} on a Linux whose running
 * process uses musl's dynamic loader (Alpine), told from {@code /proc/self/maps}, never from
 * {@code os.name}. {@code <libname>} is {@code System.mapLibraryName("dibs")}.
 *
 * <p>Each extracted copy has a lock file beside it, locked for the life of its JVM; every load
 * deletes the copies whose lock no live JVM holds, so a killed JVM's copy does not stay.
 *
 * <p>Whatever was loaded must report this jar's {@link #VERSION}, or loading fails with both
 * versions named: an old {@code libdibs} on {@code java.library.path} never runs with new Java
 * classes. A failure is final for the class loader: every later call gets the same detailed
 * {@link UnsatisfiedLinkError}.
 */
final class NativeLoader {
    /** System property: absolute path of a native library to load instead of the bundled one. */
    static final String PATH_PROPERTY = "dibs.native.path";
    /** System property: directory to extract the bundled library to (default java.io.tmpdir). */
    static final String TMPDIR_PROPERTY = "dibs.native.tmpdir";
    /** Where the bundled libraries live on the class path; the builds stage them there. */
    static final String RESOURCE_DIR = "dibs/native";
    static final String LIBRARY = "dibs";
    /** This jar's version; the native library must report the same (see Cargo.toml). */
    static final String VERSION = "0.1.0";
    /** Extracted copies and their lock files start with this. */
    static final String COPY_PREFIX = "dibs-";
    static final String LOCK_SUFFIX = ".lck";

    private static boolean loaded;
    /** The message of the first failure, given again to every later call. */
    private static String failure;
    /** Held open (and so locked) until the JVM exits: marks our extracted copy as in use. */
    @SuppressWarnings("unused")
    private static FileChannel copyLock;

    private NativeLoader() {}

    /**
     * Loads the library unless already loaded. Thread-safe.
     *
     * @throws UnsatisfiedLinkError saying every way tried and why each failed; the same text on
     *     every call after a failure
     */
    static synchronized void load() {
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
        String osName = System.getProperty("os.name");
        String osArch = System.getProperty("os.arch");
        String explicit = System.getProperty(PATH_PROPERTY);
        if (explicit != null && !explicit.isEmpty()) {
            String why = loadFile(Paths.get(explicit));
            if (why == null) {
                why = checkVersion();
            }
            return why == null ? null
                    : "dibs: cannot load the native library named by -D" + PATH_PROPERTY + "=" + explicit
                            + ": " + why + "\nThe bundled library is not tried when -D" + PATH_PROPERTY
                            + " is set; unset it to use the library in the jar.";
        }
        String platform = platform(osName, osArch, isMusl(Paths.get("/proc/self/maps"), Paths.get("/lib")));
        List<String> tried = new ArrayList<>();
        String resource = resourcePath(platform);
        String why = loadResource(resource);
        if (why == null) {
            return checked("classpath:" + resource);
        }
        tried.add("classpath:" + resource + ": " + why);
        try {
            System.loadLibrary(LIBRARY);
            return checked("System.loadLibrary(\"" + LIBRARY + "\") with java.library.path="
                    + System.getProperty("java.library.path"));
        } catch (UnsatisfiedLinkError | SecurityException e) {
            tried.add("System.loadLibrary(\"" + LIBRARY + "\") with java.library.path="
                    + System.getProperty("java.library.path") + ": " + e.getMessage());
        }
        return failureMessage(osName, osArch, platform, tried);
    }

    /** After a load from {@code source}: null if its version is ours, else the error message. */
    private static String checked(String source) {
        String why = checkVersion();
        return why == null ? null : "dibs: loaded the native library from " + source + ", but " + why;
    }

    /** Null if the loaded library is this jar's version, else why not. */
    private static String checkVersion() {
        String nativeVersion;
        try {
            nativeVersion = version();
        } catch (UnsatisfiedLinkError e) {
            nativeVersion = null;
        }
        return versionMismatch(nativeVersion, VERSION);
    }

    /** Null if the versions match, else a message naming both. */
    static String versionMismatch(String nativeVersion, String javaVersion) {
        if (nativeVersion == null) {
            return "it does not report a dibs version: it is not a dibs library, or one older than "
                    + javaVersion + ", the version of the dibs jar";
        }
        if (!nativeVersion.equals(javaVersion)) {
            return "it is dibs native library version " + nativeVersion + ", and the dibs jar is version "
                    + javaVersion + ": use the library that came with the jar";
        }
        return null;
    }

    /** The version of the loaded native library (Cargo.toml's), e.g. {@code 0.1.0}. */
    static native String version();

    /** {@code <os>-<arch>[-musl]} as used in the resource path, e.g. {@code linux-x86_64-musl}. */
    static String platform(String osName, String osArch, boolean musl) {
        String os = String.valueOf(osName).toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) {
            os = "linux";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            os = "macos";
        } else if (os.startsWith("windows")) {
            os = "windows";
        } else {
            os = os.replaceAll("[^a-z0-9]", "");
        }
        String arch = String.valueOf(osArch).toLowerCase(Locale.ROOT);
        switch (arch) {
            case "amd64":
            case "x86_64":
            case "x86-64":
            case "x64":
                arch = "x86_64";
                break;
            case "aarch64":
            case "arm64":
                arch = "aarch64";
                break;
            default:
                arch = arch.replaceAll("[^a-z0-9_]", "");
        }
        return os + "-" + arch + (musl && os.equals("linux") ? "-musl" : "");
    }

    /** The platform of this process, as {@link #platform(String, String, boolean)} names it. */
    static String currentPlatform() {
        return platform(System.getProperty("os.name"), System.getProperty("os.arch"),
                isMusl(Paths.get("/proc/self/maps"), Paths.get("/lib")));
    }

    /**
     * Whether this process runs on musl: its memory map names musl's dynamic loader. Where the map
     * cannot be read, whether {@code libDir} has musl's loader and no glibc one.
     */
    static boolean isMusl(Path procMaps, Path libDir) {
        try (Stream<String> lines = Files.lines(procMaps)) {
            return lines.anyMatch(l -> l.contains("/ld-musl-"));
        } catch (IOException | RuntimeException e) {
            // no /proc (not Linux, or hidden): fall back to what is installed
        }
        boolean musl = false;
        boolean glibc = false;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(libDir, "ld-*")) {
            for (Path f : files) {
                String n = f.getFileName().toString();
                musl |= n.startsWith("ld-musl-");
                glibc |= n.startsWith("ld-linux");
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
        return musl && !glibc;
    }

    /** The class-path resource of the bundled library for a platform. */
    static String resourcePath(String platform) {
        return RESOURCE_DIR + "/" + platform + "/" + System.mapLibraryName(LIBRARY);
    }

    /** The message of the {@link UnsatisfiedLinkError} thrown when every way failed. */
    static String failureMessage(String osName, String osArch, String platform, List<String> tried) {
        StringBuilder sb = new StringBuilder()
                .append("dibs: cannot load the native library for os.name=").append(osName)
                .append(", os.arch=").append(osArch)
                .append(" (platform ").append(platform).append("). Tried:");
        for (int i = 0; i < tried.size(); i++) {
            sb.append("\n  ").append(i + 1).append(". ").append(tried.get(i));
        }
        return sb.append("\nSet -D").append(PATH_PROPERTY)
                .append("=/absolute/path/to/").append(System.mapLibraryName(LIBRARY))
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

    /** Extracts a bundled library and loads it; returns null on success, else why it failed. */
    private static String loadResource(String resource) {
        byte[] library;
        ClassLoader cl = NativeLoader.class.getClassLoader();
        try (InputStream in = cl == null
                ? ClassLoader.getSystemResourceAsStream(resource)
                : cl.getResourceAsStream(resource)) {
            if (in == null) {
                return "not on the class path (no build for this platform in the jar)";
            }
            library = in.readAllBytes();
        } catch (IOException e) {
            return "cannot read it: " + e;
        }
        Path dir = Paths.get(System.getProperty(TMPDIR_PROPERTY, System.getProperty("java.io.tmpdir")));
        Path file;
        try {
            removeStaleCopies(dir);
            file = extract(library, dir);
        } catch (IOException | RuntimeException e) {
            return "cannot extract it to " + dir + " (set -D" + TMPDIR_PROPERTY + " to a writable"
                    + " directory): " + e;
        }
        String why = loadFile(file);
        return why == null ? null : "extracted to " + file + " but " + why;
    }

    /**
     * Writes the library to a new file in {@code dir}, named {@code dibs-<version>-<hash>-<unique>}
     * plus the platform's library suffix, and locks its lock file for the life of this JVM.
     */
    private static Path extract(byte[] library, Path dir) throws IOException {
        String base = COPY_PREFIX + VERSION + "-" + sha256Prefix(library) + "-";
        String suffix = librarySuffix();
        for (int attempt = 0; ; attempt++) {
            // Not Files.createTempFile: its SecureRandom costs a seeding at startup, for names
            // that only need to differ, and CREATE_NEW already makes them exclusive.
            String name = base + Long.toHexString(ProcessHandle.current().pid()) + "-"
                    + Integer.toHexString(ThreadLocalRandom.current().nextInt());
            Path lock = dir.resolve(name + LOCK_SUFFIX);
            FileChannel channel;
            try {
                channel = FileChannel.open(lock, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            } catch (FileAlreadyExistsException e) {
                if (attempt < 16) {
                    continue;
                }
                throw e;
            }
            channel.lock();
            if (!Files.exists(lock)) { // another JVM's clean-up took it between create and lock
                channel.close();
                continue;
            }
            Path file = dir.resolve(name + suffix);
            Files.write(file, library, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            copyLock = channel;
            // Registered lock first, so the library is deleted before it (hooks run in reverse).
            lock.toFile().deleteOnExit();
            file.toFile().deleteOnExit();
            return file;
        }
    }

    /**
     * Deletes the copies in {@code dir} whose lock no JVM holds, or whose lock file is gone: those
     * of JVMs that were killed, and those that Windows would not let their JVM delete on exit (a
     * loaded DLL cannot be deleted; its lock file can). Never fails the load.
     */
    static int removeStaleCopies(Path dir) {
        int removed = 0;
        String suffix = librarySuffix();
        try (DirectoryStream<Path> copies = Files.newDirectoryStream(dir, COPY_PREFIX + "*" + suffix)) {
            for (Path copy : copies) {
                String n = copy.getFileName().toString();
                // A copy is written after its lock file, so without one its JVM has exited.
                if (!Files.exists(dir.resolve(n.substring(0, n.length() - suffix.length()) + LOCK_SUFFIX))) {
                    try {
                        Files.deleteIfExists(copy);
                        removed++;
                    } catch (IOException | RuntimeException e) {
                        // still loaded somewhere (Windows): a later start removes it
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // an unreadable directory: the extraction that follows says why
        }
        try (DirectoryStream<Path> locks = Files.newDirectoryStream(dir, COPY_PREFIX + "*" + LOCK_SUFFIX)) {
            for (Path lock : locks) {
                String n = lock.getFileName().toString();
                String base = n.substring(0, n.length() - LOCK_SUFFIX.length());
                try (FileChannel channel = FileChannel.open(lock, StandardOpenOption.WRITE)) {
                    FileLock held = channel.tryLock();
                    if (held == null) {
                        continue; // its JVM is alive
                    }
                    try (DirectoryStream<Path> copies = Files.newDirectoryStream(dir, base + ".*")) {
                        for (Path copy : copies) {
                            if (!copy.equals(lock)) {
                                Files.deleteIfExists(copy);
                            }
                        }
                    }
                    Files.deleteIfExists(lock);
                    removed++;
                } catch (OverlappingFileLockException e) {
                    // held by this JVM: another class loader's copy
                } catch (IOException | RuntimeException e) {
                    // in use, or not ours to delete: leave it
                }
            }
        } catch (IOException | RuntimeException e) {
            // an unreadable directory: the extraction that follows says why
        }
        return removed;
    }

    /** What follows the name in a library file name: {@code .so}, {@code .dylib} or {@code .dll}. */
    private static String librarySuffix() {
        String mapped = System.mapLibraryName(LIBRARY);
        return mapped.substring(mapped.indexOf(LIBRARY) + LIBRARY.length());
    }

    /** The first 16 hex digits of the SHA-256 of {@code bytes}. */
    static String sha256Prefix(byte[] bytes) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes);
            StringBuilder hex = new StringBuilder();
            for (int i = 0; i < 8; i++) {
                hex.append(String.format("%02x", digest[i]));
            }
            return hex.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
