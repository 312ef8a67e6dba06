package dibs;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * Loads the dibs native library once per class loader.
 *
 * <p>The jar carries an index, {@value #INDEX} (written by {@code scripts/build-natives.sh}): the
 * native version this jar needs ({@code version}) and, per bundled library, its SHA-256 and size
 * ({@code <platform>.sha256}, {@code <platform>.size}). A jar without it fails to load, saying so.
 *
 * <p>If the system property {@value #PATH_PROPERTY} names a file, that file is loaded and nothing
 * else is tried: an explicit choice that fails is an error, never a silent fall-back. Otherwise,
 * in order:
 *
 * <ol>
 *   <li>the library bundled in the jar at {@code dibs/native/<platform>/<libname>}, as a copy in
 *       {@value #TMPDIR_PROPERTY} (default {@code java.io.tmpdir}) named by the version and the
 *       indexed hash, e.g. {@code dibs-0.1.0-3f2a9c0e11d2b4a7.so}, shared by every JVM that loads
 *       the same library;
 *   <li>{@code System.loadLibrary("dibs")}, which searches {@code java.library.path}.
 * </ol>
 *
 * <p>{@code <platform>} is {@code <os>-<arch>[-musl]}: {@code linux}, {@code macos} or
 * {@code windows}; {@code x86_64} or {@code aarch64}; {@code -musl} on a Linux whose running
 * process uses musl's dynamic loader (Alpine), told from {@code /proc/self/maps}, never from
 * {@code os.name}. {@code <libname>} is {@code System.mapLibraryName("dibs")}.
 *
 * <p>An existing copy is loaded without reading or hashing the bundled library only if it is a
 * regular file (not a link) of the indexed size, owned by this user and writable by no one else:
 * its name carries the hash, and only its owner could have written it. Otherwise the library is
 * read from the jar, checked against the indexed size, written to a temporary file and renamed
 * into place, so a copy under its final name is always whole. Where the shared copy
 * cannot be used (another user owns it, or another class loader of this JVM loaded it), a copy
 * private to this class loader is written, named {@code dibs-<version>-<hash>-<pid>-<random>}.
 *
 * <p>Each copy has a lock file beside it ({@code .lck}), locked by every JVM that loaded the copy,
 * for the life of that JVM. Whenever a copy was written, the copies whose lock no live JVM holds
 * are deleted: those of other versions and builds, and private copies of JVMs that exited or were
 * killed. The common start, which finds its copy in place, writes and deletes nothing.
 *
 * <p>Whatever was loaded must report the indexed {@code version}, or loading fails with both
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
    /** The index of the bundled libraries, beside them; scripts/build-natives.sh writes it. */
    static final String INDEX = RESOURCE_DIR + "/natives.properties";
    static final String LIBRARY = "dibs";
    /** Extracted copies and their lock files start with this. */
    static final String COPY_PREFIX = "dibs-";
    static final String LOCK_SUFFIX = ".lck";
    /** A file being written, renamed to its copy's name once whole. */
    static final String PART_SUFFIX = ".part";
    /**
     * The names dibs gives its copies, without suffix: {@code dibs-<version>-<16 hex of the
     * sha256>}, and {@code -<pid>-<random>} after it for a private copy. The clean-up touches no
     * other name: a name is never made into a pattern, so no file someone else put in a shared
     * temp directory can widen what it deletes.
     */
    private static final Pattern COPY_BASE = Pattern.compile("dibs-[0-9][0-9A-Za-z.+_-]*-[0-9a-f]{16}(-[0-9a-f]+-[0-9a-f]+)?");
    /** What follows {@code <base>.} in a file being written: {@code <pid>-<random>.part}. */
    private static final Pattern PART_TAIL = Pattern.compile("[0-9a-f]+-[0-9a-f]+\\.part");

    private static boolean loaded;
    /** The message of the first failure, given again to every later call. */
    private static String failure;
    /** Held open (and so locked) until the JVM exits: marks our extracted copy as in use. */
    @SuppressWarnings("unused")
    private static FileChannel copyLock;
    /**
     * Channels opened on a lock file that this JVM holds through another channel (another class
     * loader's copy). Never closed: POSIX locks belong to the process, so closing any channel of
     * the file would release the lock held through the other one.
     */
    private static final List<FileChannel> KEPT_OPEN = Collections.synchronizedList(new ArrayList<>());

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
        Index index;
        try {
            index = Index.read(NativeLoader.class.getClassLoader());
        } catch (IndexException e) {
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
            return why == null ? null
                    : "dibs: cannot load the native library named by -D" + PATH_PROPERTY + "=" + explicit
                            + ": " + why + "\nThe bundled library is not tried when -D" + PATH_PROPERTY
                            + " is set; unset it to use the library in the jar.";
        }
        String platform = platform(osName, osArch, isMusl(Paths.get("/proc/self/maps"), Paths.get("/lib")));
        List<String> tried = new ArrayList<>();
        String resource = resourcePath(platform);
        String why = loadResource(resource, index, platform);
        if (why == null) {
            return checked("classpath:" + resource, index.version);
        }
        tried.add("classpath:" + resource + ": " + why);
        try {
            System.loadLibrary(LIBRARY);
            return checked("System.loadLibrary(\"" + LIBRARY + "\") with java.library.path="
                    + System.getProperty("java.library.path"), index.version);
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
     * @throws IndexException if the jar carries no valid index
     */
    static String expectedVersion() throws IndexException {
        return Index.read(NativeLoader.class.getClassLoader()).version;
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
        // One read and one search: a line reader (and Files.lines with a lambda) costs a cold JVM
        // several milliseconds more, for the ~200 lines of a JVM's map.
        try (InputStream in = new FileInputStream(procMaps.toFile())) {
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1).contains("/ld-musl-");
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

    /** Loads the bundled library through its copy; returns null on success, else why it failed. */
    private static String loadResource(String resource, Index index, String platform) {
        ClassLoader cl = NativeLoader.class.getClassLoader();
        URL url = cl == null ? ClassLoader.getSystemResource(resource) : cl.getResource(resource);
        if (url == null) {
            return "not on the class path (no build for this platform in the jar)";
        }
        Index.Library library = index.library(platform);
        if (library == null) {
            return "the jar's " + INDEX + " has no " + platform + ".sha256 and " + platform + ".size for it"
                    + " (a jar whose libraries were staged without scripts/build-natives.sh)";
        }
        Path dir = Paths.get(System.getProperty(TMPDIR_PROPERTY, System.getProperty("java.io.tmpdir")));
        Path file;
        try {
            file = copyOf(url, library, index.version, dir);
        } catch (IOException | RuntimeException e) {
            return "cannot extract it to " + dir + " (set -D" + TMPDIR_PROPERTY + " to a writable"
                    + " directory): " + e;
        }
        String why = loadFile(file);
        return why == null ? null : "extracted to " + file + " but " + why;
    }

    /**
     * The copy of the bundled library to load, in {@code dir}: the shared one if it is in place
     * and trusted (no read of the jar, no hashing), else one written now, after which the stale
     * copies in {@code dir} are removed. Locks the copy's lock file for the life of this JVM.
     */
    private static Path copyOf(URL url, Index.Library library, String version, Path dir) throws IOException {
        String base = COPY_PREFIX + version + "-" + library.sha256.substring(0, 16);
        String suffix = librarySuffix();
        Path copy = dir.resolve(base + suffix);
        FileChannel shared = lockShared(dir.resolve(base + LOCK_SUFFIX));
        if (shared != null && trusted(copy, library.size)) {
            copyLock = shared;
            return copy;
        }
        Path written = null;
        byte[] bytes;
        try {
            bytes = read(url, library);
            if (shared != null) {
                Path part = dir.resolve(base + "." + unique() + PART_SUFFIX);
                write(part, bytes);
                try {
                    moveInto(part, copy);
                    copyLock = shared;
                    written = copy;
                } catch (IOException e) {
                    // another user's copy, or (Windows) one loaded elsewhere that cannot be replaced
                    Files.deleteIfExists(part);
                }
            }
        } finally {
            if (shared != null && written == null) {
                closeQuietly(shared);
            }
        }
        if (written == null) {
            written = privateCopy(bytes, dir, base, suffix);
        }
        String name = written.getFileName().toString();
        removeStaleCopies(dir, name.substring(0, name.length() - suffix.length()));
        return written;
    }

    /**
     * Opens {@code lock} (creating it) and takes a shared lock on it. Null if this JVM holds it
     * already (another class loader loaded the copy: it needs a copy of its own) or the file is
     * not ours to lock.
     */
    private static FileChannel lockShared(Path lock) {
        for (int attempt = 0; attempt < 16; attempt++) {
            FileChannel channel;
            try {
                channel = FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
            } catch (IOException | RuntimeException e) {
                return null;
            }
            try {
                channel.lock(0, Long.MAX_VALUE, true);
                // A clean-up marks a lock file it is deleting: a JVM that waited on it opens the new one.
                if (channel.size() == 0) {
                    return channel;
                }
            } catch (OverlappingFileLockException e) {
                KEPT_OPEN.add(channel);
                return null;
            } catch (IOException e) {
                closeQuietly(channel);
                return null;
            }
            closeQuietly(channel);
        }
        return null;
    }

    /**
     * Whether {@code copy} may be loaded as the library of that size whose hash its name carries:
     * a regular file, not a link, of that size, owned by this user and writable by no one else.
     */
    static boolean trusted(Path copy, long size) {
        try {
            PosixFileAttributes a = Files.readAttributes(copy, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            Set<PosixFilePermission> p = a.permissions();
            return a.isRegularFile() && a.size() == size && !p.contains(PosixFilePermission.GROUP_WRITE)
                    && !p.contains(PosixFilePermission.OTHERS_WRITE) && ownedByThisUser(copy, a);
        } catch (UnsupportedOperationException e) {
            // Windows: no POSIX permissions, and java.io.tmpdir is the user's own temp directory
            try {
                BasicFileAttributes a = Files.readAttributes(copy, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                return a.isRegularFile() && a.size() == size;
            } catch (IOException | RuntimeException again) {
                return false;
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Whether this process's user owns {@code copy}: by uid where {@code /proc/self} tells this
     * process's (Linux: also right for a uid without a passwd entry, as in many containers), else
     * by user name.
     */
    private static boolean ownedByThisUser(Path copy, PosixFileAttributes attributes) {
        Object self;
        try {
            self = Files.getAttribute(Paths.get("/proc/self"), "unix:uid");
        } catch (IOException | RuntimeException e) {
            return attributes.owner().getName().equals(System.getProperty("user.name"));
        }
        try {
            return self.equals(Files.getAttribute(copy, "unix:uid", LinkOption.NOFOLLOW_LINKS));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * The bundled library's bytes, checked against the indexed size. Not hashed here: in a cold
     * JVM, SHA-256 of a few MB costs hundreds of milliseconds, on every start where the temp dir
     * is new (a container's). That the index's hash is that of the library beside it is checked
     * where both are made: scripts/check-natives.py --jar.
     */
    private static byte[] read(URL url, Index.Library library) throws IOException {
        byte[] bytes;
        try (InputStream in = url.openStream()) {
            bytes = in.readAllBytes();
        }
        if (bytes.length != library.size) {
            throw new IOException("the bundled library is " + bytes.length + " bytes, and the jar's " + INDEX
                    + " says " + library.size + ": the jar was assembled from different builds");
        }
        return bytes;
    }

    /** Writes a new file, writable by its owner only (a copy writable by others is never trusted). */
    private static void write(Path file, byte[] bytes) throws IOException {
        Set<StandardOpenOption> options = EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        FileAttribute<?>[] attrs = file.getFileSystem().supportedFileAttributeViews().contains("posix")
                ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--"))}
                : new FileAttribute<?>[0];
        try (FileChannel out = FileChannel.open(file, options, attrs)) {
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining()) {
                out.write(buffer);
            }
        }
    }

    /** Renames {@code part} to {@code copy}, replacing it: readers see the old file or the whole new one. */
    private static void moveInto(Path part, Path copy) throws IOException {
        try {
            Files.move(part, copy, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(part, copy, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * Writes a copy for this class loader alone, {@code <base>-<pid>-<random>} plus the library
     * suffix, with a lock file locked for the life of this JVM.
     */
    private static Path privateCopy(byte[] library, Path dir, String base, String suffix) throws IOException {
        for (int attempt = 0; ; attempt++) {
            String name = base + "-" + unique();
            Path lock = dir.resolve(name + LOCK_SUFFIX);
            FileChannel channel;
            try {
                channel = FileChannel.open(lock, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
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
            write(file, library);
            copyLock = channel;
            // Registered lock first, so the library is deleted before it (hooks run in reverse).
            lock.toFile().deleteOnExit();
            file.toFile().deleteOnExit();
            return file;
        }
    }

    /** {@code <pid>-<random>} in hex: differs between JVMs and between attempts. */
    private static String unique() {
        // Not Files.createTempFile: its SecureRandom costs a seeding at startup, for names that
        // only need to differ, and CREATE_NEW already makes them exclusive.
        return Long.toHexString(ProcessHandle.current().pid()) + "-"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt());
    }

    /**
     * Deletes the copies in {@code dir} whose lock no JVM holds, with their lock files and any file
     * left half-written: those of other versions and builds, those of JVMs that were killed, and
     * those that Windows would not let their JVM delete on exit (a loaded DLL cannot be deleted).
     * Never fails the load. Returns how many copies went.
     */
    static int removeStaleCopies(Path dir) {
        return removeStaleCopies(dir, null);
    }

    /** As {@link #removeStaleCopies(Path)}, leaving alone the copy {@code ownBase} (ours, in use). */
    private static int removeStaleCopies(Path dir, String ownBase) {
        String suffix = librarySuffix();
        TreeSet<String> bases = new TreeSet<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, COPY_PREFIX + "*")) {
            for (Path f : files) {
                String n = f.getFileName().toString();
                String base = n.endsWith(LOCK_SUFFIX) ? n.substring(0, n.length() - LOCK_SUFFIX.length())
                        : n.endsWith(suffix) ? n.substring(0, n.length() - suffix.length())
                        : null;
                if (base != null && COPY_BASE.matcher(base).matches()) {
                    bases.add(base);
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0; // an unreadable directory: nothing to clean
        }
        int removed = 0;
        for (String base : bases) {
            if (!base.equals(ownBase) && removeIfUnused(dir, base)) {
                removed++;
            }
        }
        return removed;
    }

    /**
     * Deletes the copy {@code base} (its library, its lock file, and any file of it left
     * half-written) if no JVM holds its lock file. The lock is taken (the file created if a copy
     * lost it) before anything is deleted, and the lock file is marked before it goes, so a JVM
     * that waited on it knows to start again. A lock file that is not this user's own regular
     * file is not ours to act on: the copy is left alone.
     */
    private static boolean removeIfUnused(Path dir, String base) {
        Path lock = dir.resolve(base + LOCK_SUFFIX);
        if (Files.exists(lock, LinkOption.NOFOLLOW_LINKS) && !ownRegularFile(lock)) {
            return false;
        }
        FileChannel channel;
        try {
            channel = FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | RuntimeException e) {
            return false; // not ours to delete: leave it
        }
        try {
            FileLock held = channel.tryLock();
            if (held == null || channel.size() > 0 || !ownRegularFile(lock)) {
                return false; // in use by a live JVM, being deleted by another clean-up, or not ours
            }
            boolean gone = true;
            for (Path f : filesOf(dir, base)) {
                try {
                    Files.deleteIfExists(f);
                } catch (IOException | RuntimeException e) {
                    gone = false; // still loaded somewhere (Windows): a later clean-up removes it
                }
            }
            if (!gone) {
                return false;
            }
            channel.write(ByteBuffer.wrap(new byte[] {'x'}));
            Files.deleteIfExists(lock);
            return true;
        } catch (OverlappingFileLockException e) {
            KEPT_OPEN.add(channel); // held by this JVM: our copy, or another class loader's
            channel = null;
            return false;
        } catch (IOException | RuntimeException e) {
            return false; // not ours to delete: leave it
        } finally {
            if (channel != null) {
                closeQuietly(channel);
            }
        }
    }

    /** The library of copy {@code base} and its half-written files, by exact name. */
    private static List<Path> filesOf(Path dir, String base) throws IOException {
        List<Path> files = new ArrayList<>();
        files.add(dir.resolve(base + librarySuffix()));
        String partPrefix = base + ".";
        try (DirectoryStream<Path> all = Files.newDirectoryStream(dir, COPY_PREFIX + "*")) {
            for (Path f : all) {
                String n = f.getFileName().toString();
                if (n.startsWith(partPrefix) && PART_TAIL.matcher(n.substring(partPrefix.length())).matches()) {
                    files.add(f);
                }
            }
        }
        return files;
    }

    /** Whether {@code file} is a regular file (not a link) of this process's user. */
    private static boolean ownRegularFile(Path file) {
        try {
            PosixFileAttributes a = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return a.isRegularFile() && ownedByThisUser(file, a);
        } catch (UnsupportedOperationException e) {
            return Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS); // Windows: the user's own temp directory
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // nothing held
        }
    }

    /** What follows the name in a library file name: {@code .so}, {@code .dylib} or {@code .dll}. */
    private static String librarySuffix() {
        String mapped = System.mapLibraryName(LIBRARY);
        return mapped.substring(mapped.indexOf(LIBRARY) + LIBRARY.length());
    }

    /** The jar's index is missing or unreadable. */
    static final class IndexException extends Exception {
        private static final long serialVersionUID = 1L;

        IndexException(String message) {
            super(message);
        }
    }

    /** {@value #INDEX}: the native version this jar needs, and each bundled library's hash and size. */
    static final class Index {
        final String version;
        private final Properties entries;

        private Index(String version, Properties entries) {
            this.version = version;
            this.entries = entries;
        }

        static Index read(ClassLoader cl) throws IndexException {
            Properties p = new Properties();
            try (InputStream in = cl == null ? ClassLoader.getSystemResourceAsStream(INDEX)
                    : cl.getResourceAsStream(INDEX)) {
                if (in == null) {
                    throw new IndexException("the dibs jar carries no " + INDEX + ", which names the native"
                            + " library version it needs and the bundled libraries' hashes: build the jar with"
                            + " its pom.xml or build.gradle.kts, which run scripts/build-natives.sh to write it");
                }
                p.load(in);
            } catch (IOException | IllegalArgumentException e) {
                throw new IndexException("cannot read the dibs jar's " + INDEX + ": " + e);
            }
            return parse(p);
        }

        static Index parse(Properties p) throws IndexException {
            String version = p.getProperty("version", "").trim();
            if (version.isEmpty()) {
                throw new IndexException("the dibs jar's " + INDEX + " names no version");
            }
            return new Index(version, p);
        }

        /** The hash and size of {@code platform}'s library, or null if the index has none. */
        Library library(String platform) {
            String sha256 = entries.getProperty(platform + ".sha256", "").trim().toLowerCase(Locale.ROOT);
            String size = entries.getProperty(platform + ".size", "").trim();
            if (sha256.length() != 64 || !allOf(sha256, "0123456789abcdef")
                    || size.isEmpty() || size.length() > 18 || !allOf(size, "0123456789")) {
                return null;
            }
            return new Library(sha256, Long.parseLong(size));
        }

        /** Whether every character of {@code s} is in {@code allowed} (no regex: it costs startup time). */
        private static boolean allOf(String s, String allowed) {
            for (int i = 0; i < s.length(); i++) {
                if (allowed.indexOf(s.charAt(i)) < 0) {
                    return false;
                }
            }
            return true;
        }

        /** One bundled library, as the index describes it. */
        static final class Library {
            final String sha256;
            final long size;

            Library(String sha256, long size) {
                this.sha256 = sha256;
                this.size = size;
            }
        }
    }
}
