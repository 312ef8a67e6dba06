package dibs.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The diffs the jar of every platform carries (scripts/native-diff.py writes them, the build
 * stages them on this class path): each makes, from its base, the very library the index names,
 * and a diff that does not fit its base, or is cut or altered, is refused before anything loads.
 */
@Tag("jvm")
class NativeDiffTest {
    /** Every platform whose diff the build staged, with its library staged whole beside it. */
    private static List<String> diffedPlatforms() throws IOException {
        Properties index = new Properties();
        try (InputStream in = resource(NativeLoader.INDEX).openStream()) {
            index.load(in);
        }
        List<String> platforms = new ArrayList<>();
        for (String key : index.stringPropertyNames()) {
            if (key.endsWith(".size")) {
                String platform = key.substring(0, key.length() - ".size".length());
                if (resource(NativeDiff.resourcePath(platform)) != null) {
                    platforms.add(platform);
                }
            }
        }
        assumeTrue(!platforms.isEmpty(), "this build made no diffs (a build of this machine's library alone)");
        return platforms;
    }

    private static URL resource(String name) {
        return NativeDiffTest.class.getClassLoader().getResource(name);
    }

    private static byte[] bytes(String name) throws IOException {
        URL url = resource(name);
        if (url == null) {
            return null;
        }
        try (InputStream in = url.openStream()) {
            return in.readAllBytes();
        }
    }

    private static byte[] apply(byte[] diff) throws IOException {
        return NativeDiff.apply(new ByteArrayInputStream(diff), base -> bytes(NativePlatform.resourcePath(base)));
    }

    @Test
    void everyDiffMakesTheLibraryTheIndexNames() throws Exception {
        NativeIndex index = NativeIndex.read(NativeDiffTest.class.getClassLoader());
        for (String platform : diffedPlatforms()) {
            byte[] made = apply(bytes(NativeDiff.resourcePath(platform)));
            byte[] whole = bytes(NativePlatform.resourcePath(platform));
            assertNotNull(whole, platform + ": the build stages each library whole too");
            assertArrayEquals(whole, made, platform);
            assertEquals(index.library(platform).sha256, NativeLoaderProcessTest.sha256(made), platform);
            assertEquals(index.library(platform).size, made.length, platform);
            assertEquals(index.library(platform).crc32, NativeLoaderProcessTest.crc32(made), platform);
        }
    }

    /**
     * A class path laid out as the jar of every platform (the glibc libraries whole, the others
     * as diffs, the index): the loader's source for each platform is its diff, and makes it.
     */
    @Test
    void theLoaderMakesEachLibraryFromTheJarOfEveryPlatform(@TempDir Path jar) throws Exception {
        List<String> platforms = diffedPlatforms();
        Path root = Paths.get(resource(NativeLoader.INDEX).toURI())
                .getParent()
                .getParent()
                .getParent();
        Path nativeDir = root.resolve(NativeLoader.RESOURCE_DIR);
        try (var files = Files.walk(nativeDir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String rel = nativeDir.relativize(f).toString();
                boolean wholeOfADiffed = platforms.stream().anyMatch(p -> rel.startsWith(p + "/"));
                if (Files.isRegularFile(f) && !wholeOfADiffed) {
                    Path to = jar.resolve(NativeLoader.RESOURCE_DIR).resolve(rel);
                    Files.createDirectories(to.getParent());
                    Files.copy(f, to);
                }
            }
        }
        try (URLClassLoader cl = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null)) {
            for (String platform : platforms) {
                assertNull(cl.getResource(NativePlatform.resourcePath(platform)), platform + " is not there whole");
                NativeCopies.Source source = NativeLoader.bundled(cl, platform);
                assertNotNull(source, platform);
                assertArrayEquals(bytes(NativePlatform.resourcePath(platform)), source.read(), platform);
            }
            assertNull(NativeLoader.bundled(cl, "plan9-mips"), "neither whole nor a diff");
        }
    }

    /**
     * A diff small enough to keep with the tests, so that every build runs these (one of this
     * machine's library alone makes no diff): {@code library.diff} is what scripts/native-diff.py
     * wrote from {@code base.bin} (as linux-x86_64's library) to {@code library.bin} (as
     * linux-x86_64-musl's), 8 KB of random bytes with bytes changed, 300 inserted and 200 removed (8,292 bytes):
     * three steps, each with added bytes, one with copied bytes, seeks forward and back. A change
     * of the format makes it fail: write it again that way.
     */
    private static final String FIXTURE = "dibs/diff-fixture/";

    @Test
    void theKeptDiffMakesItsLibrary() throws Exception {
        assertArrayEquals(bytes(FIXTURE + "library.bin"), fixture(bytes(FIXTURE + "library.diff")));
    }

    @Test
    void aDiffIsRefusedUnlessEverythingFits() throws Exception {
        byte[] diff = bytes(FIXTURE + "library.diff");
        ByteBuffer header = ByteBuffer.wrap(diff);
        header.position(8);
        byte[] name = new byte[header.getShort()];
        header.get(name);
        assertEquals("linux-x86_64", new String(name, java.nio.charset.StandardCharsets.US_ASCII));
        int baseSize = (int) header.getLong();
        header.position(header.position() + 4);
        int sizeAt = header.position();
        header.position(sizeAt + 8 + 4);
        int steps = header.getInt();
        int firstStep = header.position();
        assertEquals(3, steps);

        assertEquals("not a dibs diff (no DIBSDIF1 at its start)", refusal(diff.clone(), "NOTADIFF"));
        for (int cut : new int[] {4, 20, firstStep + 6, firstStep + 12 * steps + 10}) {
            assertEquals("it is truncated", refusal(Arrays.copyOf(diff, cut), null), "cut at " + cut);
        }
        assertEquals(
                "it carries 8291 bytes for a library of 8292", refusal(Arrays.copyOf(diff, diff.length - 1), null));
        assertEquals(
                "it carries 8293 bytes for a library of 8292", refusal(Arrays.copyOf(diff, diff.length + 1), null));
        byte[] huge = diff.clone();
        ByteBuffer.wrap(huge).putLong(sizeAt, Integer.MAX_VALUE - 9); // nothing allocated for it
        assertEquals("it carries 8292 bytes for a library of 2147483638", refusal(huge, null));

        byte[] otherBuild = bytes(FIXTURE + "base.bin");
        otherBuild[otherBuild.length / 2] ^= 1;
        IOException e = assertThrows(
                IOException.class, () -> NativeDiff.apply(new ByteArrayInputStream(diff), b -> otherBuild));
        assertEquals(
                "it was made from another build of the linux-x86_64 library (by size and CRC-32): the jar was"
                        + " assembled from different builds",
                e.getMessage());
        e = assertThrows(IOException.class, () -> NativeDiff.apply(new ByteArrayInputStream(diff), b -> null));
        assertEquals("its base, the linux-x86_64 library, is not on the class path", e.getMessage());

        byte[] altered = diff.clone();
        altered[diff.length - 1] ^= 1; // the last copied byte
        assertEquals("the library it makes is not the one it was made for (CRC-32)", refusal(altered, null));
        byte[] seekAway = diff.clone();
        ByteBuffer.wrap(seekAway).putInt(firstStep + 8, baseSize + 1); // the first step's seek
        assertEquals("step 1 reads outside the base", refusal(seekAway, null));
        byte[] negative = diff.clone();
        ByteBuffer.wrap(negative).putInt(firstStep + 4, -1); // the first step's copy
        assertEquals("step 0 writes outside the library it makes", refusal(negative, null));
    }

    private static byte[] fixture(byte[] diff) throws IOException {
        return NativeDiff.apply(new ByteArrayInputStream(diff), base -> bytes(FIXTURE + "base.bin"));
    }

    /** Why {@link NativeDiff#apply} refuses {@code diff} (with its magic replaced, if given). */
    private static String refusal(byte[] diff, String magic) {
        if (magic != null) {
            System.arraycopy(magic.getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, diff, 0, 8);
        }
        IOException e = assertThrows(IOException.class, () -> fixture(diff));
        return e.getMessage();
    }
}
