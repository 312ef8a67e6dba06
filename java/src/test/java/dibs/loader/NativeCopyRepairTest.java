package dibs.loader;

import static dibs.loader.NativeLoaderProcessTest.after;
import static dibs.loader.NativeLoaderProcessTest.probe;
import static dibs.loader.NativeLoaderProcessTest.sha256;
import static dibs.loader.NativeLoaderProcessTest.suffix;
import static dibs.loader.NativeLoaderProcessTest.withBundle;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.DibsConnectionException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 42, item 12: a damaged copy of the library where the loader reuses copies (a JVM that
 * crashed before the copy's data reached the disk) is replaced from the jar, not trusted for ever;
 * what is not dibs's at that path (a link, another user's file) is left alone. Each case is a
 * child JVM, so that the real loader runs from a clean class loader, with the copy laid there
 * first; it must load the library and call it ({@code RESULT} a connection error, port 1 being
 * closed), with no {@code java.library.path} to fall back on.
 */
@Tag("jvm")
@Timeout(90)
class NativeCopyRepairTest {
    @TempDir
    static Path work;

    private static byte[] built;
    private static String copyName;

    @BeforeAll
    static void layOut() throws Exception {
        NativeLoaderProcessTest.layOut(work);
        built = Files.readAllBytes(NativeLoaderProcessTest.builtLibrary);
        copyName =
                "dibs-" + NativeLoaderProcessTest.version + "-" + sha256(built).substring(0, 16) + suffix();
    }

    /** A child JVM loading the bundle with {@code tmp} as its temp directory; its output. */
    private static String load(Path tmp) throws Exception {
        List<String> lines =
                probe(withBundle(), "-Ddibs.native.tmpdir=" + tmp, "-Djava.library.path=/nonexistent-dibs-dir");
        String all = String.join("\n", lines);
        assertEquals(DibsConnectionException.class.getName(), after(lines, "RESULT"), all);
        return all;
    }

    private static Path tmp(String name) throws Exception {
        return Files.createDirectories(work.resolve(name + "-" + System.nanoTime()));
    }

    @Test
    void aCopyOfTheRightSizeWithBytesChangedInTheMiddleIsReplaced() throws Exception {
        Path tmp = tmp("flipped");
        byte[] damaged = built.clone();
        for (int i = damaged.length / 2; i < damaged.length / 2 + 4096; i++) {
            damaged[i] ^= (byte) 0xff;
        }
        Files.write(tmp.resolve(copyName), damaged);
        String all = load(tmp);
        assertArrayEquals(built, Files.readAllBytes(tmp.resolve(copyName)), all);
        assertTrue(all.contains("found " + tmp.resolve(copyName) + ", its CRC-32 is "), all);
        assertTrue(all.contains("replaced it with the jar's library"), all);
    }

    @Test
    void aCopyOfTheRightSizeThatIsNotALibraryIsReplaced() throws Exception {
        Path tmp = tmp("zeros");
        Files.write(tmp.resolve(copyName), new byte[built.length]);
        String all = load(tmp);
        assertArrayEquals(built, Files.readAllBytes(tmp.resolve(copyName)), all);
        assertTrue(all.contains("replaced it with the jar's library"), all);
    }

    /**
     * A copy that passes the check of a copy found in place (its size and CRC-32) and still does
     * not load: zeros whose last four bytes give them the library's CRC-32. The loader tries once
     * more, with a copy of its own from the jar.
     */
    @Test
    void aCopyFoundWholeThatDoesNotLoadIsTriedAgainFromTheJar() throws Exception {
        Path tmp = tmp("forged");
        byte[] forged = new byte[built.length];
        forceCrc32(forged, NativeLoaderProcessTest.crc32(built));
        assertEquals(NativeLoaderProcessTest.crc32(built), NativeLoaderProcessTest.crc32(forged));
        Files.write(tmp.resolve(copyName), forged);
        String all = load(tmp);
        assertTrue(all.contains("reused " + tmp.resolve(copyName) + " but java.lang.UnsatisfiedLinkError"), all);
        assertTrue(all.contains("loading a private copy from the jar"), all);
    }

    @Test
    void aSymbolicLinkWhereTheCopyGoesIsLeftAlone() throws Exception {
        Path tmp = tmp("link");
        // What the link points at is no library: loaded through the link, the call would fail.
        Path target = Files.write(work.resolve("link-target-" + System.nanoTime()), new byte[built.length]);
        Path link = Files.createSymbolicLink(tmp.resolve(copyName), target);
        String all = load(tmp);
        assertTrue(Files.isSymbolicLink(link), "still a link: " + all);
        assertEquals(target, Files.readSymbolicLink(link));
        assertArrayEquals(new byte[built.length], Files.readAllBytes(target), "its target untouched");
        assertTrue(all.contains("found " + link + ", a symbolic link: not dibs's to replace"), all);
    }

    @Test
    void aSymbolicLinkWhereTheLockFileGoesIsNotFollowed() throws Exception {
        Path tmp = tmp("lock-link");
        String lockName = copyName.substring(0, copyName.length() - suffix().length()) + ".lck";
        Path target = work.resolve("lock-target-" + System.nanoTime()); // none yet: opened, it would be made
        Path link = Files.createSymbolicLink(tmp.resolve(lockName), target);
        load(tmp);
        assertTrue(Files.isSymbolicLink(link), "still a link");
        assertTrue(Files.notExists(target, LinkOption.NOFOLLOW_LINKS), "nothing made through it");
    }

    @Test
    void anotherUsersFileWhereTheCopyGoesIsLeftAlone() throws Exception {
        Assumptions.assumeTrue(
                "root".equals(System.getProperty("user.name")), "only root can give a file to another user");
        Path tmp = tmp("others");
        Path theirs = Files.write(tmp.resolve(copyName), new byte[built.length]);
        Files.setAttribute(theirs, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);
        load(tmp);
        assertEquals(65534, Files.getAttribute(theirs, "unix:uid", LinkOption.NOFOLLOW_LINKS), "still theirs");
        assertArrayEquals(new byte[built.length], Files.readAllBytes(theirs), "and as they wrote it");
    }

    /**
     * Sets the last four bytes of {@code bytes} so that their CRC-32 is {@code crc}: the CRC's
     * register is run backwards from the wanted one through four table steps, each step's byte
     * told by the top byte of the register after it.
     */
    private static void forceCrc32(byte[] bytes, long crc) {
        long[] table = new long[256];
        for (int n = 0; n < 256; n++) {
            long c = n;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? 0xEDB88320L ^ (c >>> 1) : c >>> 1;
            }
            table[n] = c;
        }
        java.util.zip.CRC32 head = new java.util.zip.CRC32();
        head.update(bytes, 0, bytes.length - 4);
        long before = ~head.getValue() & 0xffffffffL;
        long r = ~crc & 0xffffffffL;
        for (int i = 0; i < 4; i++) {
            int j = 0;
            while ((table[j] >>> 24) != (r >>> 24)) {
                j++;
            }
            r = (((r ^ table[j]) << 8) | j) & 0xffffffffL;
        }
        long word = r ^ before;
        for (int i = 0; i < 4; i++) {
            bytes[bytes.length - 4 + i] = (byte) (word >>> (8 * i));
        }
    }
}
