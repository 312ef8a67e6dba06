package dibs.loader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
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
import java.util.EnumSet;
import java.util.Set;
import java.util.zip.CRC32;

/**
 * One file of {@link NativeCopies}: what lies at the path of a shared copy (the library, a damaged
 * copy of it, or a file that is not dibs's to touch), and writing a copy so that a crash leaves
 * either no copy under its name or a whole one.
 */
final class NativeCopyFile {
    /** What {@link #examine} found at a copy's path. */
    enum Kind {
        /** Nothing: the copy is to be written. */
        ABSENT,
        /** This user's copy of the indexed library: loaded as it is. */
        WHOLE,
        /** This user's regular file, but not the indexed library, or writable by others: replaced. */
        DAMAGED,
        /** A link, not a regular file, or another user's: never touched, a private copy is written. */
        NOT_OURS
    }

    /** What {@link #examine} found, and (but for {@link Kind#ABSENT} and {@link Kind#WHOLE}) why. */
    static final class Found {
        final Kind kind;
        final String why;

        private Found(Kind kind, String why) {
            this.kind = kind;
            this.why = why;
        }
    }

    /** The {@link Found#why} of another user's file, which a shared temp directory may hold. */
    static final String ANOTHER_USERS = "another user's file";

    private static final Found ABSENT = new Found(Kind.ABSENT, null);
    private static final Found WHOLE = new Found(Kind.WHOLE, null);

    private NativeCopyFile() {}

    /**
     * What lies at {@code copy}: the library of the index's size and CRC-32, a regular file (not a
     * link) owned by this user and writable by no one else, is {@link Kind#WHOLE}. Reads the copy
     * (a CRC-32: a few ms at most in a cold JVM) but never the jar.
     */
    static Found examine(Path copy, NativeIndex.Library library) {
        BasicFileAttributes basic;
        Set<PosixFilePermission> permissions = null;
        try {
            PosixFileAttributes a = Files.readAttributes(copy, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            permissions = a.permissions();
            basic = a;
            if (!a.isSymbolicLink() && a.isRegularFile() && !ownedByThisUser(copy, a)) {
                return new Found(Kind.NOT_OURS, ANOTHER_USERS);
            }
        } catch (UnsupportedOperationException e) {
            // Windows: no POSIX permissions, and java.io.tmpdir is the user's own temp directory
            try {
                basic = Files.readAttributes(copy, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (IOException | RuntimeException again) {
                return Files.exists(copy, LinkOption.NOFOLLOW_LINKS)
                        ? new Found(Kind.NOT_OURS, "unreadable: " + again)
                        : ABSENT;
            }
        } catch (IOException | RuntimeException e) {
            return Files.exists(copy, LinkOption.NOFOLLOW_LINKS)
                    ? new Found(Kind.NOT_OURS, "unreadable: " + e)
                    : ABSENT;
        }
        if (basic.isSymbolicLink()) {
            return new Found(Kind.NOT_OURS, "a symbolic link");
        }
        if (!basic.isRegularFile()) {
            return new Found(Kind.NOT_OURS, "not a regular file");
        }
        if (permissions != null
                && (permissions.contains(PosixFilePermission.GROUP_WRITE)
                        || permissions.contains(PosixFilePermission.OTHERS_WRITE))) {
            return new Found(Kind.DAMAGED, "writable by others (" + PosixFilePermissions.toString(permissions) + ")");
        }
        if (basic.size() != library.size) {
            return new Found(Kind.DAMAGED, basic.size() + " bytes, not the library's " + library.size);
        }
        long crc;
        try {
            crc = crc32(copy);
        } catch (IOException | RuntimeException e) {
            return new Found(Kind.DAMAGED, "unreadable: " + e);
        }
        if (crc != library.crc32) {
            return new Found(
                    Kind.DAMAGED,
                    "its CRC-32 is " + hex(crc) + ", not the library's " + hex(library.crc32)
                            + " (written by a JVM that crashed, or changed since)");
        }
        return WHOLE;
    }

    /** The CRC-32 of {@code file}, read without following a link. */
    private static long crc32(Path file) throws IOException {
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            // Read, not mapped: Windows keeps a mapped file from being replaced until the mapping
            // is collected. A direct buffer, which CRC32 reads in place.
            ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 18);
            CRC32 crc = new CRC32();
            while (in.read(chunk) >= 0) {
                chunk.flip();
                crc.update(chunk);
                chunk.clear();
            }
            return crc.getValue();
        }
    }

    private static String hex(long crc) {
        String s = Long.toHexString(crc);
        return "00000000".substring(s.length()) + s;
    }

    /**
     * Whether this process's user owns {@code file}: by uid where {@code /proc/self} tells this
     * process's (Linux: also right for a uid without a passwd entry, as in many containers), else
     * by user name.
     */
    static boolean ownedByThisUser(Path file, PosixFileAttributes attributes) {
        Object self;
        try {
            self = Files.getAttribute(Paths.get("/proc/self"), "unix:uid");
        } catch (IOException | RuntimeException e) {
            return attributes.owner().getName().equals(System.getProperty("user.name"));
        }
        try {
            return self.equals(Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Writes a new file, writable by its owner only (a copy writable by others is never trusted).
     * With {@code durable}, its data reaches the disk before this returns ({@code fsync}): a copy
     * renamed into place then is whole after a crash too.
     */
    static void write(Path file, byte[] bytes, boolean durable) throws IOException {
        Set<StandardOpenOption> options = EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        FileAttribute<?>[] attrs =
                file.getFileSystem().supportedFileAttributeViews().contains("posix")
                        ? new FileAttribute<?>[] {
                            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--"))
                        }
                        : new FileAttribute<?>[0];
        try (FileChannel out = FileChannel.open(file, options, attrs)) {
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining()) {
                out.write(buffer);
            }
            if (durable) {
                out.force(true);
            }
        }
    }

    /**
     * Renames {@code part} (written {@code durable}) to {@code copy}, replacing it: readers see the
     * old file or the whole new one. Then syncs the directory, where the platform lets a directory
     * be opened (Linux, macOS; not Windows), so that the rename itself survives a crash.
     */
    static void moveInto(Path part, Path copy) throws IOException {
        try {
            Files.move(part, copy, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(part, copy, StandardCopyOption.REPLACE_EXISTING);
        }
        try (FileChannel dir = FileChannel.open(copy.toAbsolutePath().getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException | RuntimeException e) {
            // no directory sync here: the copy is whole if its name survived, which is all that counts
        }
    }
}
