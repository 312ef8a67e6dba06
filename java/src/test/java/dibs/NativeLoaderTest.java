package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The loader's naming and its failure message; none of this unloads or reloads the library. */
class NativeLoaderTest {
    @Test
    void platformNamesAreNormalized() {
        assertEquals("linux-x86_64", NativeLoader.platform("Linux", "amd64"));
        assertEquals("linux-x86_64", NativeLoader.platform("Linux", "x86_64"));
        assertEquals("linux-aarch64", NativeLoader.platform("Linux", "aarch64"));
        assertEquals("macos-aarch64", NativeLoader.platform("Mac OS X", "aarch64"));
        assertEquals("macos-aarch64", NativeLoader.platform("Mac OS X", "arm64"));
        assertEquals("macos-x86_64", NativeLoader.platform("Mac OS X", "x86_64"));
        assertEquals("windows-x86_64", NativeLoader.platform("Windows 11", "amd64"));
        assertEquals("freebsd-x86_64", NativeLoader.platform("FreeBSD", "amd64"));
    }

    @Test
    void resourcePathFollowsTheLayoutTheBuildsStage() {
        String lib = System.mapLibraryName("dibs");
        assertEquals("dibs/native/linux-x86_64/" + lib, NativeLoader.resourcePath("linux-x86_64"));
    }

    @Test
    void theLibraryForThisPlatformIsOnTheClassPath() {
        String platform = NativeLoader.platform(System.getProperty("os.name"), System.getProperty("os.arch"));
        String resource = NativeLoader.resourcePath(platform);
        assertNotNull(NativeLoader.class.getClassLoader().getResource(resource),
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
        String message = NativeLoader.failureMessage("Plan9", "mips", List.of(
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
