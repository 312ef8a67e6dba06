package dibs.loader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * The copy of the bundled library that {@link NativeLoader} loads: found in place, or extracted
 * from the jar, and the clean-up of the copies no JVM uses any more.
 *
 * <p>An existing copy is loaded without reading the bundled library only if it is a regular file
 * (not a link) of the indexed size and CRC-32, owned by this user and writable by no one else: its
 * name carries the hash, and only its owner could have written it (see {@link NativeCopyFile}).
 * This user's copy that is not that (a JVM crashed before its data reached the disk, or it was
 * changed since) is replaced: the library is read from the jar, checked against the indexed size,
 * written to a temporary file, synced to the disk and renamed into place, so a copy under its
 * final name is always whole. Where the shared copy cannot be used (a link or another user's file
 * lies at its path, which dibs never touches, or another class loader of this JVM loaded it), a
 * copy private to this class loader is written, named {@code dibs-<version>-<hash>-<pid>-<random>}.
 *
 * <p>Each copy has a lock file beside it ({@code .lck}), locked by every JVM that loaded the copy,
 * for the life of that JVM. Whenever a copy was written, the copies whose lock no live JVM holds
 * are deleted: those of other versions and builds, and private copies of JVMs that exited or were
 * killed. The common start, which finds its copy in place, writes and deletes nothing.
 */
final class NativeCopies {
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
    private static final Pattern COPY_BASE =
            Pattern.compile("dibs-[0-9][0-9A-Za-z.+_-]*-[0-9a-f]{16}(-[0-9a-f]+-[0-9a-f]+)?");
    /** What follows {@code <base>.} in a file being written: {@code <pid>-<random>.part}. */
    private static final Pattern PART_TAIL = Pattern.compile("[0-9a-f]+-[0-9a-f]+\\.part");

    /** Held open (and so locked) until the JVM exits: marks our extracted copy as in use. */
    @SuppressWarnings("unused")
    private static FileChannel copyLock;
    /**
     * Channels opened on a lock file that this JVM holds through another channel (another class
     * loader's copy). Never closed: POSIX locks belong to the process, so closing any channel of
     * the file would release the lock held through the other one.
     */
    private static final List<FileChannel> KEPT_OPEN = Collections.synchronizedList(new ArrayList<>());

    /** The bundled library's bytes: read whole from the jar, or made from its diff. */
    @FunctionalInterface
    interface Source {
        byte[] read() throws IOException;
    }

    /**
     * The jar's library is not the one its index names (another build's, or a diff that does not
     * make it): no directory would help, unlike the other {@link IOException}s of {@link #copyOf}.
     */
    static final class NotTheIndexedLibrary extends IOException {
        private static final long serialVersionUID = 1L;

        NotTheIndexedLibrary(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private NativeCopies() {}

    /** The copy to load, and what was found at the shared copy's path and done about it. */
    static final class Copy {
        final Path file;
        /** Found in place, not written now. */
        final boolean reused;
        /**
         * What lay at the shared copy's path that was not the library, and what was done, for the
         * loader's list of ways tried; null if nothing (the copy was absent or whole).
         */
        final String found;
        /** Whether {@link #found} is worth a warning: a damaged copy or a link, not another user's copy. */
        final boolean unexpected;

        Copy(Path file, boolean reused, String found, boolean unexpected) {
            this.file = file;
            this.reused = reused;
            this.found = found;
            this.unexpected = unexpected;
        }
    }

    /**
     * The copy of the bundled library to load, in {@code dir}: the shared one if it is in place
     * and whole (no read of the jar), else one written now, after which the stale copies in
     * {@code dir} are removed. Locks the copy's lock file for the life of this JVM.
     */
    static Copy copyOf(Source source, NativeIndex.Library library, String version, Path dir) throws IOException {
        String base = COPY_PREFIX + version + "-" + library.sha256.substring(0, 16);
        String suffix = NativePlatform.librarySuffix();
        Path copy = dir.resolve(base + suffix);
        FileChannel shared = lockShared(dir.resolve(base + LOCK_SUFFIX));
        NativeCopyFile.Found found = null;
        if (shared != null) {
            found = NativeCopyFile.examine(copy, library);
            if (found.kind == NativeCopyFile.Kind.WHOLE) {
                copyLock = shared;
                return new Copy(copy, true, null, false);
            }
            if (found.kind == NativeCopyFile.Kind.NOT_OURS) {
                closeQuietly(shared);
                shared = null;
            }
        }
        Path written = null;
        byte[] bytes;
        try {
            bytes = read(source, library);
            if (shared != null) {
                Path part = dir.resolve(base + "." + unique() + PART_SUFFIX);
                NativeCopyFile.write(part, bytes, true);
                try {
                    NativeCopyFile.moveInto(part, copy);
                    copyLock = shared;
                    written = copy;
                } catch (IOException e) {
                    // (Windows) one loaded elsewhere that cannot be replaced, or a directory that
                    // changed since it was examined
                    Files.deleteIfExists(part);
                }
            }
        } finally {
            if (shared != null && written == null) {
                closeQuietly(shared);
            }
        }
        if (written == null) {
            // Never synced: a private copy is deleted on exit, never loaded by another JVM.
            written = privateCopy(bytes, dir, base, suffix);
        }
        String name = written.getFileName().toString();
        removeStaleCopies(dir, name.substring(0, name.length() - suffix.length()));
        if (found == null || found.kind == NativeCopyFile.Kind.ABSENT) {
            return new Copy(written, false, null, false);
        }
        boolean notOurs = found.kind == NativeCopyFile.Kind.NOT_OURS;
        String did = written.equals(copy)
                ? "replaced it with the jar's library"
                : notOurs
                        ? "not dibs's to replace: left it alone and loaded a private copy, " + written
                        : "could not replace it: loaded a private copy, " + written;
        return new Copy(
                written,
                false,
                "found " + copy + ", " + found.why + ": " + did,
                !found.why.equals(NativeCopyFile.ANOTHER_USERS));
    }

    /**
     * A copy of the bundled library for this class loader alone, written now: for when the shared
     * copy, found whole, did not load.
     */
    static Path privateCopyOf(Source source, NativeIndex.Library library, String version, Path dir) throws IOException {
        String base = COPY_PREFIX + version + "-" + library.sha256.substring(0, 16);
        byte[] bytes = read(source, library);
        if (copyLock != null) {
            closeQuietly(copyLock); // the shared copy's: not the one loaded
            copyLock = null;
        }
        return privateCopy(bytes, dir, base, NativePlatform.librarySuffix());
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
                channel = FileChannel.open(
                        lock,
                        StandardOpenOption.CREATE,
                        StandardOpenOption.READ,
                        StandardOpenOption.WRITE,
                        LinkOption.NOFOLLOW_LINKS);
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
     * The bundled library's bytes, checked against the indexed size. Not hashed here: in a cold
     * JVM, SHA-256 of a few MB costs hundreds of milliseconds, on every start where the temp dir
     * is new (a container's). That the index's hash is that of the library beside it is checked
     * where both are made: scripts/check-natives.py --jar, and NativeDiffTest for the diffs.
     */
    private static byte[] read(Source source, NativeIndex.Library library) throws IOException {
        byte[] bytes = source.read();
        if (bytes.length != library.size) {
            throw new NotTheIndexedLibrary(
                    "the bundled library is " + bytes.length + " bytes, and the jar's " + NativeLoader.INDEX + " says "
                            + library.size + ": the jar was assembled from different builds",
                    null);
        }
        return bytes;
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
                channel = FileChannel.open(
                        lock, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
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
            NativeCopyFile.write(file, library, false);
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
        String suffix = NativePlatform.librarySuffix();
        TreeSet<String> bases = new TreeSet<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, COPY_PREFIX + "*")) {
            for (Path f : files) {
                String n = f.getFileName().toString();
                String base = n.endsWith(LOCK_SUFFIX)
                        ? n.substring(0, n.length() - LOCK_SUFFIX.length())
                        : n.endsWith(suffix) ? n.substring(0, n.length() - suffix.length()) : null;
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
            channel = FileChannel.open(
                    lock,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.READ,
                    StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS);
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
                if (Files.exists(f, LinkOption.NOFOLLOW_LINKS) && !ownRegularFile(f)) {
                    gone = false; // a link, or another user's file: not dibs's to delete
                    continue;
                }
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
        files.add(dir.resolve(base + NativePlatform.librarySuffix()));
        String partPrefix = base + ".";
        try (DirectoryStream<Path> all = Files.newDirectoryStream(dir, COPY_PREFIX + "*")) {
            for (Path f : all) {
                String n = f.getFileName().toString();
                if (n.startsWith(partPrefix)
                        && PART_TAIL.matcher(n.substring(partPrefix.length())).matches()) {
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
            return a.isRegularFile() && NativeCopyFile.ownedByThisUser(file, a);
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
}
