package dibs.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The loader's naming and its failure message; none of this unloads or reloads the library. */
@Tag("jvm")
class NativeLoaderTest {
    @Test
    void platformNamesAreNormalized() {
        assertEquals("linux-x86_64", NativePlatform.platform("Linux", "amd64", false));
        assertEquals("linux-x86_64", NativePlatform.platform("Linux", "x86_64", false));
        assertEquals("linux-aarch64", NativePlatform.platform("Linux", "aarch64", false));
        assertEquals("macos-aarch64", NativePlatform.platform("Mac OS X", "aarch64", false));
        assertEquals("macos-aarch64", NativePlatform.platform("Mac OS X", "arm64", false));
        assertEquals("macos-x86_64", NativePlatform.platform("Mac OS X", "x86_64", false));
        assertEquals("windows-x86_64", NativePlatform.platform("Windows 11", "amd64", false));
        assertEquals("freebsd-x86_64", NativePlatform.platform("FreeBSD", "amd64", false));
        assertEquals("linux-x86_64-musl", NativePlatform.platform("Linux", "amd64", true));
        assertEquals("linux-aarch64-musl", NativePlatform.platform("Linux", "aarch64", true));
        assertEquals("macos-aarch64", NativePlatform.platform("Mac OS X", "aarch64", true), "musl is Linux only");
    }

    @Test
    void muslIsToldFromTheProcessMapThenFromTheLoadersInstalled(@TempDir Path dir) throws Exception {
        Path maps = dir.resolve("maps");
        Path lib = Files.createDirectories(dir.resolve("lib"));
        Files.write(maps, List.of("7f00-7f01 r-xp 00000000 08:01 1 /lib/ld-musl-x86_64.so.1"));
        assertTrue(NativePlatform.isMusl(maps, lib));
        Files.write(maps, List.of("7f00-7f01 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"));
        assertFalse(NativePlatform.isMusl(maps, lib), "a readable map decides, even with musl installed");
        Path noMaps = dir.resolve("no-such-maps");
        Files.createFile(lib.resolve("ld-musl-aarch64.so.1"));
        assertTrue(NativePlatform.isMusl(noMaps, lib));
        Files.createFile(lib.resolve("ld-linux-aarch64.so.1"));
        assertFalse(NativePlatform.isMusl(noMaps, lib), "glibc beside musl: glibc is the default");
        assertFalse(NativePlatform.isMusl(noMaps, dir.resolve("no-such-lib")));
    }

    @Test
    void thisProcessIsNotMusl() {
        // The JVMs the tests run on here are glibc builds; /proc/self/maps says so.
        assertFalse(NativePlatform.isMusl(Paths.get("/proc/self/maps"), Paths.get("/lib")));
    }

    @Test
    void aVersionMismatchNamesBothVersions() {
        assertNull(NativeLoader.versionMismatch("1.2.3", "1.2.3"));
        String old = NativeLoader.versionMismatch("0.0.9", "1.2.3");
        assertTrue(old.contains("0.0.9") && old.contains("1.2.3"), old);
        String none = NativeLoader.versionMismatch(null, "1.2.3");
        assertTrue(none.contains("does not report a dibs version") && none.contains("1.2.3"), none);
    }

    @Test
    void theLoadedLibraryIsThisJarsVersion() throws Exception {
        NativeLoader.load();
        assertEquals(NativeLoader.expectedVersion(), NativeLoader.version());
    }

    @Test
    void theIndexNamesTheVersionAndThisPlatformsLibrary() throws Exception {
        // What scripts/build-natives.sh wrote: the crate version, and the hash and size of the
        // very library staged beside it.
        String expected = NativeLoader.expectedVersion();
        assertFalse(expected.isEmpty());
        NativeIndex index = NativeIndex.read(NativeLoader.class.getClassLoader());
        String platform = NativePlatform.currentPlatform();
        NativeIndex.Library library = index.library(platform);
        assertNotNull(library, "the index describes " + platform);
        Path staged = Paths.get(NativeLoader.class
                .getClassLoader()
                .getResource(NativePlatform.resourcePath(platform))
                .toURI());
        byte[] bytes = Files.readAllBytes(staged);
        assertEquals(bytes.length, library.size);
        assertEquals(NativeLoaderProcessTest.sha256(bytes), library.sha256);
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(bytes);
        assertEquals(crc.getValue(), library.crc32);
    }

    @Test
    void anIndexWithoutVersionOrWithABadEntryIsRefusedOrIgnored() throws Exception {
        java.util.Properties p = new java.util.Properties();
        NativeIndex.IndexException e = org.junit.jupiter.api.Assertions.assertThrows(
                NativeIndex.IndexException.class, () -> NativeIndex.parse(p));
        assertTrue(e.getMessage().contains("names no version"), e.getMessage());
        p.setProperty("version", "1.2.3");
        String sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        p.setProperty("linux-x86_64.sha256", sha);
        p.setProperty("linux-x86_64.size", "42");
        p.setProperty("linux-x86_64.crc32", "fedcba98");
        p.setProperty("linux-aarch64.sha256", "not-a-hash");
        p.setProperty("linux-aarch64.size", "42");
        p.setProperty("linux-aarch64.crc32", "fedcba98");
        p.setProperty("macos-aarch64.sha256", sha);
        p.setProperty("macos-aarch64.size", "-1");
        p.setProperty("macos-aarch64.crc32", "fedcba98");
        p.setProperty("macos-x86_64.sha256", sha);
        p.setProperty("macos-x86_64.size", "42");
        p.setProperty("macos-x86_64.crc32", "fedcba9");
        p.setProperty("linux-x86_64-musl.sha256", sha);
        p.setProperty("linux-x86_64-musl.size", "42");
        NativeIndex index = NativeIndex.parse(p);
        assertEquals("1.2.3", index.version);
        assertEquals(42, index.library("linux-x86_64").size);
        assertEquals(sha, index.library("linux-x86_64").sha256);
        assertEquals(0xfedcba98L, index.library("linux-x86_64").crc32);
        assertNull(index.library("linux-aarch64"), "a malformed hash is no entry");
        assertNull(index.library("macos-aarch64"), "a malformed size is no entry");
        assertNull(index.library("macos-x86_64"), "a malformed CRC-32 is no entry");
        assertNull(index.library("linux-x86_64-musl"), "no CRC-32, no entry");
        assertNull(index.library("windows-x86_64"));
    }

    @Test
    void onlyAPrivateRegularFileOfTheIndexedSizeAndCrcIsWhole(@TempDir Path dir) throws Exception {
        byte[] bytes = {1, 2, 3};
        String sha = NativeLoaderProcessTest.sha256(bytes);
        NativeIndex.Library library = new NativeIndex.Library(sha, 3, NativeLoaderProcessTest.crc32(bytes));
        Path copy = dir.resolve("dibs-1.2.3-0011223344556677.so");
        assertEquals(NativeCopyFile.Kind.ABSENT, NativeCopyFile.examine(copy, library).kind);
        Files.write(copy, bytes);
        Files.setPosixFilePermissions(copy, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        assertEquals(NativeCopyFile.Kind.WHOLE, NativeCopyFile.examine(copy, library).kind);
        NativeCopyFile.Found other = NativeCopyFile.examine(copy, new NativeIndex.Library(sha, 4, library.crc32));
        assertEquals(NativeCopyFile.Kind.DAMAGED, other.kind, "another size is another library");
        assertTrue(other.why.contains("3 bytes, not the library's 4"), other.why);
        Files.write(copy, new byte[] {1, 9, 3});
        NativeCopyFile.Found damaged = NativeCopyFile.examine(copy, library);
        assertEquals(NativeCopyFile.Kind.DAMAGED, damaged.kind, "the size, but not the bytes");
        assertTrue(damaged.why.contains("CRC-32"), damaged.why);
        Files.write(copy, bytes);
        Files.setPosixFilePermissions(copy, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-r--"));
        assertEquals(
                NativeCopyFile.Kind.DAMAGED,
                NativeCopyFile.examine(copy, library).kind,
                "writable by the group: anyone in it could have swapped it");
        Files.setPosixFilePermissions(copy, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--rw-"));
        assertEquals(NativeCopyFile.Kind.DAMAGED, NativeCopyFile.examine(copy, library).kind, "writable by others");
        Files.setPosixFilePermissions(copy, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        Path link = Files.createSymbolicLink(dir.resolve("dibs-1.2.3-8899aabbccddeeff.so"), copy);
        NativeCopyFile.Found linked = NativeCopyFile.examine(link, library);
        assertEquals(NativeCopyFile.Kind.NOT_OURS, linked.kind, "a link could point anywhere");
        assertEquals("a symbolic link", linked.why);
        assertEquals(NativeCopyFile.Kind.NOT_OURS, NativeCopyFile.examine(dir, library).kind, "a directory");
        java.nio.file.attribute.UserPrincipal nobody;
        try {
            nobody = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
            Files.setOwner(copy, nobody);
        } catch (java.io.IOException | UnsupportedOperationException e) {
            return; // not root: this user cannot give a file away, and so cannot test another's
        }
        assertEquals(
                NativeCopyFile.Kind.NOT_OURS,
                NativeCopyFile.examine(copy, library).kind,
                "another user's file, whose contents that user chose");
    }

    @Test
    void staleCopiesGoAndLiveOnesStay(@TempDir Path dir) throws Exception {
        Path staleLock = Files.createFile(dir.resolve("dibs-0.0.1-00112233aabbccdd-1f-2a.lck"));
        Path staleCopy = Files.createFile(dir.resolve("dibs-0.0.1-00112233aabbccdd-1f-2a.so"));
        Path liveLock = dir.resolve("dibs-0.0.1-00112233aabbccdd-1f-2b.lck");
        Path liveCopy = Files.createFile(dir.resolve("dibs-0.0.1-00112233aabbccdd-1f-2b.so"));
        Path unrelated = Files.createFile(dir.resolve("dibs-report.txt"));
        // A copy its JVM was killed while writing.
        Path half = Files.createFile(dir.resolve("dibs-0.0.1-00112233aabbccdd-1f-2a.77-88.part"));
        // What Windows leaves: the JVM deleted its lock file on exit, but not its loaded DLL.
        Path orphan = Files.createFile(dir.resolve("dibs-0.0.1-00112233aabbccdd-1f-2c.so"));
        try (FileChannel channel = FileChannel.open(liveLock, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                FileLock held = channel.lock()) {
            assertTrue(held.isValid());
            assertEquals(2, NativeCopies.removeStaleCopies(dir));
        }
        assertFalse(Files.exists(orphan));
        assertFalse(Files.exists(staleLock));
        assertFalse(Files.exists(staleCopy));
        assertFalse(Files.exists(half));
        assertFalse(
                Files.exists(dir.resolve("dibs-0.0.1-00112233aabbccdd-1f-2c.lck")),
                "no lock file made for the orphan stays");
        assertTrue(Files.exists(liveLock) && Files.exists(liveCopy) && Files.exists(unrelated));
    }

    /**
     * Issue 17 (7): a file anyone can create in a shared temp directory must not widen what the
     * clean-up deletes. Before, a {@code dibs-*.lck} made the clean-up glob {@code dibs-*.*} and
     * delete every copy there, live ones included; a lock file of another user made it delete
     * this user's copy of that name.
     */
    @Test
    void theCleanUpDeletesOnlyItsOwnNamesWhateverElseTheDirectoryHolds(@TempDir Path dir) throws Exception {
        Path liveLock = dir.resolve("dibs-0.0.1-00112233aabbccdd-1f-2b.lck");
        Path liveCopy = Files.createFile(dir.resolve("dibs-0.0.1-00112233aabbccdd-1f-2b.so"));
        Path otherCopy = Files.createFile(dir.resolve("dibs-0.0.1-00112233aabbccdd.so"));
        Path foreign = Files.createFile(dir.resolve("dibs-*.lck"));
        Files.setPosixFilePermissions(foreign, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
        Path braces = Files.createFile(dir.resolve("dibs-{0.0.1-00112233aabbccdd}.lck"));
        Path othersLock = dir.resolve("dibs-0.0.1-00112233aabbccdd.lck");
        Files.createFile(othersLock);
        boolean root = "root".equals(System.getProperty("user.name"));
        if (root) { // another user's lock file beside this user's copy of that name
            Files.setAttribute(othersLock, "unix:uid", 65534);
        }
        try (FileChannel channel = FileChannel.open(liveLock, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                FileLock held = channel.lock()) {
            assertTrue(held.isValid());
            int removed = NativeCopies.removeStaleCopies(dir);
            assertTrue(Files.exists(liveCopy) && Files.exists(liveLock), "a live copy stays");
            assertTrue(Files.exists(foreign) && Files.exists(braces), "names dibs does not make are not touched");
            if (root) {
                assertTrue(Files.exists(otherCopy), "a copy whose lock file is another user's stays");
                assertEquals(0, removed);
            }
        }
    }

    @Test
    void resourcePathFollowsTheLayoutTheBuildsStage() {
        // Each platform's own file name, whatever this JVM's OS: a diff's base may be another OS's.
        assertEquals("dibs/native/linux-x86_64/libdibs.so", NativePlatform.resourcePath("linux-x86_64"));
        assertEquals("dibs/native/linux-aarch64-musl/libdibs.so", NativePlatform.resourcePath("linux-aarch64-musl"));
        assertEquals("dibs/native/macos-aarch64/libdibs.dylib", NativePlatform.resourcePath("macos-aarch64"));
        assertEquals("dibs/native/windows-x86_64/dibs.dll", NativePlatform.resourcePath("windows-x86_64"));
        assertEquals(
                System.mapLibraryName("dibs"),
                NativePlatform.libraryName(NativePlatform.currentPlatform()),
                "this JVM's own");
    }

    @Test
    void theLibraryForThisPlatformIsOnTheClassPath() {
        String platform = NativePlatform.currentPlatform();
        String resource = NativePlatform.resourcePath(platform);
        assertNotNull(
                NativeLoader.class.getClassLoader().getResource(resource),
                resource + " should be staged by the build (mvn without -Dcargo.skip, or after cargo build --release)");
    }

    @Test
    void aBogusPathGivesAReasonInsteadOfLoading(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("no-such-libdibs.so");
        assertEquals("no such file", NativeLoader.loadFile(missing));
        assertEquals("not an absolute path", NativeLoader.loadFile(Paths.get("libdibs.so")));
        Path notALibrary = dir.resolve("garbage.so");
        java.nio.file.Files.write(notALibrary, new byte[] {1, 2, 3});
        String reason = NativeLoader.loadFile(notALibrary);
        assertTrue(reason != null && reason.contains("UnsatisfiedLinkError"), reason);
    }

    @Test
    void failureMessageListsThePlatformAndEveryPathTried() {
        String message = NativeLoader.failureMessage(
                "Plan9",
                "mips",
                "plan9-mips",
                List.of(
                        "-Ddibs.native.path=/nope/libdibs.so: no such file",
                        "classpath:dibs/native/plan9-mips/libdibs.so: not on the class path",
                        "System.loadLibrary(\"dibs\") with java.library.path=/usr/lib: no dibs in java.library.path"));
        assertTrue(message.contains("os.name=Plan9"), message);
        assertTrue(message.contains("os.arch=mips"), message);
        assertTrue(message.contains("plan9-mips"), message);
        assertTrue(message.contains("1. -Ddibs.native.path=/nope/libdibs.so: no such file"), message);
        assertTrue(message.contains("2. classpath:dibs/native/plan9-mips/libdibs.so"), message);
        assertTrue(message.contains("3. System.loadLibrary"), message);
        assertTrue(message.contains("-Ddibs.native.path="), "says how to fix it: " + message);
    }
}
