package dibs.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.Dibs;
import dibs.DibsConnectionException;
import dibs.demo.TickRace;
import dibs.testsupport.TestSupport;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The loader end to end, in child JVMs, so that this JVM's loaded library is never disturbed.
 * Their class path holds the dibs classes, the jar's index ({@code dibs/native/natives.properties})
 * and, only where a test says so, the bundled library (a directory laid out like the jar:
 * {@code dibs/native/<platform>/<lib>}).
 */
@Tag("jvm")
@Timeout(90)
class NativeLoaderProcessTest {
    @TempDir
    static Path work;

    private static Path classes;
    private static Path index;
    private static Path bundle;
    static Path builtLibrary;
    static String version;

    @BeforeAll
    static void layOutClassesAndBundle() throws Exception {
        layOut(work);
    }

    /** Lays out, in {@code work}, the class path entries the child JVMs of these tests and NativeCopyRepairTest use. */
    static void layOut(Path work) throws Exception {
        classes = Files.createDirectories(work.resolve("classes"));
        Path main = Paths.get(
                Dibs.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path test = Paths.get(LoaderProbe.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        // The library's two packages (no module-info: a class path entry), and the probe.
        for (String pkg : List.of("dibs", "dibs/loader")) {
            Path out = Files.createDirectories(classes.resolve(pkg));
            for (Path dir : List.of(main.resolve(pkg), test.resolve(pkg))) {
                try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.class")) {
                    for (Path f : files) {
                        String n = f.getFileName().toString();
                        if (dir.startsWith(main) || n.startsWith("LoaderProbe")) {
                            Files.copy(f, out.resolve(n));
                        }
                    }
                }
            }
        }
        // Found as a resource: Maven stages it beside the classes, Gradle in a resources dir.
        String resource = NativePlatform.resourcePath(NativePlatform.currentPlatform());
        URL staged = NativeLoader.class.getClassLoader().getResource(resource);
        assertNotNull(staged, "the build stages the native library on the test class path");
        builtLibrary = Paths.get(staged.toURI());
        bundle = work.resolve("bundle");
        Files.createDirectories(bundle.resolve(resource).getParent());
        Files.copy(builtLibrary, bundle.resolve(resource));
        URL stagedIndex = NativeLoader.class.getClassLoader().getResource(NativeLoader.INDEX);
        assertNotNull(stagedIndex, "the build stages the index beside the native library");
        index = work.resolve("index");
        Files.createDirectories(index.resolve(NativeLoader.INDEX).getParent());
        Files.copy(Paths.get(stagedIndex.toURI()), index.resolve(NativeLoader.INDEX));
        version = NativeLoader.expectedVersion();
    }

    /**
     * Another build of the library, as a class path entry with its own index: the built library
     * with {@code extra} bytes after its end (the dynamic loader ignores them), so another hash.
     */
    private static Path otherBuild(String name, int extra) throws Exception {
        Path dir = work.resolve(name);
        String resource = NativePlatform.resourcePath(NativePlatform.currentPlatform());
        Files.createDirectories(dir.resolve(resource).getParent());
        byte[] built = Files.readAllBytes(builtLibrary);
        byte[] bytes = java.util.Arrays.copyOf(built, built.length + extra);
        Files.write(dir.resolve(resource), bytes);
        writeIndex(dir, sha256(bytes), bytes.length, crc32(bytes));
        return dir;
    }

    private static void writeIndex(Path dir, String sha256, long size, long crc32) throws IOException {
        String platform = NativePlatform.currentPlatform();
        Files.createDirectories(dir.resolve(NativeLoader.INDEX).getParent());
        Files.write(
                dir.resolve(NativeLoader.INDEX),
                List.of(
                        "version=" + version,
                        platform + ".sha256=" + sha256,
                        platform + ".size=" + size,
                        platform + ".crc32=" + String.format("%08x", crc32)));
    }

    static long crc32(byte[] bytes) {
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(bytes);
        return crc.getValue();
    }

    private static List<String> command(List<String> classPath, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(TickRace.javaExecutable());
        for (String flag : TickRace.inheritedJvmFlags()) {
            if (!flag.startsWith("-D")) { // our own -D flags decide where the library comes from
                cmd.add(flag);
            }
        }
        List<String> props = new ArrayList<>();
        List<String> rest = new ArrayList<>();
        for (String a : args) {
            (a.startsWith("-D") ? props : rest).add(a);
        }
        cmd.addAll(props);
        cmd.add("-cp");
        cmd.add(String.join(File.pathSeparator, classPath));
        cmd.add(LoaderProbe.class.getName());
        cmd.addAll(rest);
        return cmd;
    }

    static List<String> probe(List<String> classPath, String... args) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command(classPath, args))
                .redirectErrorStream(true)
                .start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return List.of(new String(out, StandardCharsets.UTF_8).split("\n"));
    }

    private static List<String> probe(String... args) throws IOException, InterruptedException {
        return probe(List.of(classes.toString(), index.toString()), args);
    }

    /** The class path of a jar that bundles this platform's library. */
    static List<String> withBundle() {
        return List.of(classes.toString(), index.toString(), bundle.toString());
    }

    /** A child JVM that loaded dibs from the bundle into {@code tmp} and now sleeps. */
    private static Process holder(Path tmp) throws IOException {
        return holder(tmp, withBundle());
    }

    /** A child JVM that loaded dibs with {@code classPath} into {@code tmp} and now sleeps. */
    private static Process holder(Path tmp, List<String> classPath) throws IOException {
        Process p = new ProcessBuilder(command(classPath, "-Ddibs.native.tmpdir=" + tmp, "hold"))
                .redirectErrorStream(true)
                .start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        List<String> seen = new ArrayList<>();
        for (String line; (line = r.readLine()) != null; ) {
            seen.add(line);
            if (line.equals("HOLDING")) {
                assertTrue(seen.contains("RESULT " + DibsConnectionException.class.getName()), seen.toString());
                return p;
            }
        }
        throw new AssertionError("the holder exited: " + seen);
    }

    static String after(List<String> lines, String tag) {
        for (String l : lines) {
            if (l.startsWith(tag + " ")) {
                return l.substring(tag.length() + 1);
            }
        }
        throw new AssertionError("no " + tag + " in " + lines);
    }

    static TreeSet<String> names(Path dir) throws IOException {
        TreeSet<String> names = new TreeSet<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            files.forEach(f -> names.add(f.getFileName().toString()));
        }
        return names;
    }

    @Test
    void failureListsThePlatformAndEveryPathTried() throws Exception {
        List<String> lines = probe("-Djava.library.path=/nonexistent-dibs-dir");
        String all = String.join("\n", lines);
        assertEquals(UnsatisfiedLinkError.class.getName(), after(lines, "RESULT"), all);
        assertTrue(all.contains("os.name=" + System.getProperty("os.name")), all);
        assertTrue(all.contains("os.arch=" + System.getProperty("os.arch")), all);
        assertTrue(all.contains("(platform " + NativePlatform.currentPlatform() + ")"), all);
        assertTrue(all.contains("classpath:dibs/native/" + NativePlatform.currentPlatform() + "/"), all);
        assertTrue(all.contains("System.loadLibrary(\"dibs\") with java.library.path=/nonexistent-dibs-dir"), all);
    }

    @Test
    void everyLaterCallGetsTheSameDetailedError() throws Exception {
        List<String> lines = probe("-Djava.library.path=/nonexistent-dibs-dir");
        String all = String.join("\n", lines);
        assertEquals(UnsatisfiedLinkError.class.getName(), after(lines, "RESULT"), all);
        assertEquals(UnsatisfiedLinkError.class.getName(), after(lines, "AGAIN"), "not NoClassDefFoundError: " + all);
        assertEquals("true", after(lines, "SAME-MESSAGE"), all);
    }

    @Test
    void anExplicitPathThatFailsNeverFallsBack() throws Exception {
        // The bundle and java.library.path both hold a good library; neither may be used.
        List<String> lines = probe(
                withBundle(),
                "-Ddibs.native.path=/bogus/dir/libdibs.so",
                "-Djava.library.path=" + builtLibrary.getParent());
        String all = String.join("\n", lines);
        assertEquals(UnsatisfiedLinkError.class.getName(), after(lines, "RESULT"), all);
        assertTrue(all.contains("-Ddibs.native.path=/bogus/dir/libdibs.so: no such file"), all);
        assertTrue(all.contains("The bundled library is not tried"), all);
        assertEquals("true", after(lines, "SAME-MESSAGE"), all);
    }

    @Test
    void loadsFromTheNativePathProperty() throws Exception {
        List<String> lines = probe("-Ddibs.native.path=" + builtLibrary, "-Djava.library.path=/nonexistent-dibs-dir");
        assertEquals(DibsConnectionException.class.getName(), after(lines, "RESULT"), String.join("\n", lines));
    }

    @Test
    void loadsFromTheLibraryPath() throws Exception {
        List<String> lines = probe("-Djava.library.path=" + builtLibrary.getParent());
        assertEquals(DibsConnectionException.class.getName(), after(lines, "RESULT"), String.join("\n", lines));
    }

    @Test
    void aLibraryWithoutOurVersionIsRefusedWithBothNamed() throws Exception {
        // Stands in for an old libdibs on java.library.path: a real shared library of this
        // JVM's own platform (its java.prefs library) that loads but reports no dibs version.
        Path foreign = Paths.get(System.getProperty("java.home"), "lib", System.mapLibraryName("prefs"));
        assertTrue(Files.isRegularFile(foreign), foreign + " is in every JDK with java.prefs");
        Path libDir = Files.createDirectories(work.resolve("old-lib-path"));
        Files.copy(foreign, libDir.resolve(System.mapLibraryName("dibs")));
        List<String> lines = probe("-Djava.library.path=" + libDir);
        String all = String.join("\n", lines);
        assertEquals(UnsatisfiedLinkError.class.getName(), after(lines, "RESULT"), all);
        assertTrue(
                all.contains(
                        "loaded the native library from System.loadLibrary(\"dibs\") with java.library.path=" + libDir),
                all);
        assertTrue(all.contains("does not report a dibs version"), all);
        assertTrue(all.contains(version), all);
        assertEquals("true", after(lines, "SAME-MESSAGE"), all);
    }

    /**
     * A dibs library of another build (its JNI border's fingerprint another: its methods may take
     * other arguments) is refused before any of its methods is called, both fingerprints named.
     * Made from this build's library with its fingerprint's bytes changed (found by the second
     * attack: a version check alone let such a library be called).
     */
    @Test
    void aLibraryOfAnotherBuildIsRefusedBeforeAnyCall() throws Exception {
        byte[] built = Files.readAllBytes(builtLibrary);
        java.lang.reflect.Field field = Class.forName("dibs.Border").getDeclaredField("FINGERPRINT");
        field.setAccessible(true); // the border's, package-private in dibs
        String fingerprint = (String) field.get(null);
        byte[] mark = fingerprint.getBytes(StandardCharsets.US_ASCII);
        int at = indexOf(built, mark);
        assertTrue(at >= 0, "the library holds its fingerprint " + fingerprint);
        byte[] other = built.clone();
        String changed = fingerprint.charAt(0) == '0' ? "1" : "0";
        other[at] = changed.getBytes(StandardCharsets.US_ASCII)[0];
        Path dir = Files.createDirectories(work.resolve("another-build"));
        Path library = dir.resolve(builtLibrary.getFileName());
        Files.write(library, other);
        List<String> lines = probe("-Ddibs.native.path=" + library);
        String all = String.join("\n", lines);
        assertEquals(UnsatisfiedLinkError.class.getName(), after(lines, "RESULT"), all);
        assertTrue(all.contains("of another build than this jar"), all);
        assertTrue(all.contains(changed + fingerprint.substring(1)) && all.contains(fingerprint), all);
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    @Test
    void aJarWithoutItsIndexSaysSoOnEveryCall() throws Exception {
        // A good library in the bundle and on java.library.path: without the index neither is loaded,
        // since nothing says which version to expect.
        List<String> lines = probe(
                List.of(classes.toString(), bundle.toString()), "-Djava.library.path=" + builtLibrary.getParent());
        String all = String.join("\n", lines);
        assertEquals(UnsatisfiedLinkError.class.getName(), after(lines, "RESULT"), all);
        assertTrue(all.contains("carries no " + NativeLoader.INDEX), all);
        assertEquals("true", after(lines, "SAME-MESSAGE"), all);
    }

    @Test
    void aLibraryThatIsNotTheIndexedOneIsNotLoaded() throws Exception {
        Path tmp = Files.createDirectories(work.resolve("mismatch-" + System.nanoTime()));
        Path wrongIndex = work.resolve("wrong-index");
        byte[] built = Files.readAllBytes(builtLibrary);
        writeIndex(wrongIndex, sha256(built), built.length + 1, crc32(built));
        List<String> lines = probe(
                List.of(classes.toString(), wrongIndex.toString(), bundle.toString()),
                "-Ddibs.native.tmpdir=" + tmp,
                "-Djava.library.path=/nonexistent-dibs-dir");
        String all = String.join("\n", lines);
        assertEquals(UnsatisfiedLinkError.class.getName(), after(lines, "RESULT"), all);
        assertTrue(
                all.contains("and the jar's " + NativeLoader.INDEX + " says " + (Files.size(builtLibrary) + 1)), all);
        assertFalse(all.contains("writable directory"), "no directory would help: " + all);
        assertFalse(names(tmp).stream().anyMatch(n -> n.endsWith(suffix())), "nothing loadable written: " + names(tmp));
    }

    @Test
    void theCopyIsNamedByVersionAndIndexedHashAndReusedByLaterJvms() throws Exception {
        Path tmp = Files.createDirectories(work.resolve("extract-" + System.nanoTime()));
        String copy = "dibs-" + version + "-"
                + sha256(Files.readAllBytes(builtLibrary)).substring(0, 16);

        Process alive = holder(tmp);
        try {
            assertEquals(new TreeSet<>(List.of(copy + suffix(), copy + ".lck")), names(tmp), "a copy and its lock");
            Object written = Files.readAttributes(
                            tmp.resolve(copy + suffix()), java.nio.file.attribute.BasicFileAttributes.class)
                    .fileKey();

            Process killed = holder(tmp);
            killed.destroyForcibly(); // SIGKILL: no shutdown hook runs
            assertTrue(killed.waitFor(30, TimeUnit.SECONDS));
            List<String> lines = probe(withBundle(), "-Ddibs.native.tmpdir=" + tmp);
            assertEquals(DibsConnectionException.class.getName(), after(lines, "RESULT"), String.join("\n", lines));

            // Both loaded the same copy: nothing new, nothing rewritten, and so nothing left behind.
            assertEquals(new TreeSet<>(List.of(copy + suffix(), copy + ".lck")), names(tmp));
            assertEquals(
                    written,
                    Files.readAttributes(
                                    tmp.resolve(copy + suffix()), java.nio.file.attribute.BasicFileAttributes.class)
                            .fileKey(),
                    "the same file, not a new one");
        } finally {
            alive.destroyForcibly();
            alive.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aCopyThatIsNotWholeIsReplaced() throws Exception {
        Path tmp = Files.createDirectories(work.resolve("partial-" + System.nanoTime()));
        String copy = "dibs-" + version + "-"
                + sha256(Files.readAllBytes(builtLibrary)).substring(0, 16);
        Files.write(tmp.resolve(copy + suffix()), new byte[] {0x7f, 'E', 'L', 'F'});
        List<String> lines = probe(withBundle(), "-Ddibs.native.tmpdir=" + tmp);
        assertEquals(DibsConnectionException.class.getName(), after(lines, "RESULT"), String.join("\n", lines));
        assertEquals(Files.size(builtLibrary), Files.size(tmp.resolve(copy + suffix())));
    }

    @Test
    void writingACopyRemovesTheStaleOnesAndNotThoseOfLiveJvms() throws Exception {
        Path tmp = Files.createDirectories(work.resolve("stale-" + System.nanoTime()));
        Path next = otherBuild("next-build", 16);
        Path later = otherBuild("later-build", 32);
        Process alive = holder(tmp);
        TreeSet<String> aliveFiles = names(tmp);
        try {
            Process killed = holder(tmp, List.of(classes.toString(), next.toString()));
            killed.destroyForcibly();
            assertTrue(killed.waitFor(30, TimeUnit.SECONDS));
            // What older dibs versions leave: a killed JVM's copy and lock, and (Windows) a copy alone.
            Files.createFile(tmp.resolve("dibs-0.0.1-00112233aabbccdd-1f-2a.lck"));
            Files.createFile(tmp.resolve("dibs-0.0.1-00112233aabbccdd-1f-2a" + suffix()));
            Files.createFile(tmp.resolve("dibs-0.0.1-00112233aabbccdd-1f-2c" + suffix()));
            assertEquals(
                    aliveFiles.size() + 2 + 3, names(tmp).size(), names(tmp).toString());

            // A JVM that writes a copy (a build not seen before) removes every copy no live JVM holds.
            List<String> lines = probe(List.of(classes.toString(), later.toString()), "-Ddibs.native.tmpdir=" + tmp);
            assertEquals(DibsConnectionException.class.getName(), after(lines, "RESULT"), String.join("\n", lines));
            TreeSet<String> expected = new TreeSet<>(aliveFiles);
            String laterCopy = "dibs-" + version + "-"
                    + sha256(Files.readAllBytes(
                                    later.resolve(NativePlatform.resourcePath(NativePlatform.currentPlatform()))))
                            .substring(0, 16);
            expected.addAll(List.of(laterCopy + suffix(), laterCopy + ".lck"));
            assertEquals(expected, names(tmp), "the live JVM's copy and the one just written remain");
        } finally {
            alive.destroyForcibly();
            alive.waitFor(30, TimeUnit.SECONDS);
        }
        assertEquals(2, NativeCopies.removeStaleCopies(tmp), "both are stale once no JVM holds them");
        assertFalse(names(tmp).iterator().hasNext(), names(tmp).toString());
    }

    @Test
    void aSecondClassLoaderGetsACopyOfItsOwnThatGoesWithItsJvm() throws Exception {
        Path tmp = Files.createDirectories(work.resolve("second-" + System.nanoTime()));
        List<String> lines = probe(withBundle(), "-Ddibs.native.tmpdir=" + tmp, "second-loader");
        String all = String.join("\n", lines);
        assertEquals(DibsConnectionException.class.getName(), after(lines, "RESULT"), all);
        assertEquals(DibsConnectionException.class.getName(), after(lines, "SECOND"), all);
        String copy = "dibs-" + version + "-"
                + sha256(Files.readAllBytes(builtLibrary)).substring(0, 16);
        String[] seen = after(lines, "FILES").split(",");
        assertEquals(4, seen.length, all);
        for (String n : seen) {
            assertTrue(n.startsWith(copy + ".") || n.startsWith(copy + "-"), n);
        }
        // The private copy goes on exit; the shared one stays for the next JVM.
        assertEquals(new TreeSet<>(List.of(copy + suffix(), copy + ".lck")), names(tmp));
    }

    /**
     * The way the jar of every platform carries the musl, macOS and Windows libraries, end to end:
     * scripts/native-diff.py writes this machine's library as its diff from another build of it (a
     * copy with bytes changed throughout), and a child JVM whose class path carries that diff and
     * that base, and not the library, makes it, extracts it, loads it and calls it. The copy is the
     * built library, byte for byte. (Without scripts/build-natives.sh's bsdiff4, which a build of
     * this machine's library alone does not install, the diff holds the library whole.)
     */
    @Test
    void loadsTheLibraryMadeFromItsDiff() throws Exception {
        String platform = NativePlatform.currentPlatform();
        // A pair from the writer's table that is not this machine's: the diff is renamed to ours.
        String base = platform.startsWith("linux-aarch64") ? "linux-x86_64" : "linux-aarch64";
        Path natives = work.resolve("diff-natives");
        byte[] built = Files.readAllBytes(builtLibrary);
        byte[] otherBuild = built.clone();
        for (int i = 4096; i < otherBuild.length; i += 4096) {
            otherBuild[i] ^= 0x5a;
        }
        Path root = TestSupport.repositoryRoot();
        String python = "python3";
        try (DirectoryStream<Path> venvs =
                Files.newDirectoryStream(root.resolve("target/cross-tools"), "venv-bsdiff4-*")) {
            for (Path venv : venvs) {
                python = venv.resolve("bin/python").toString();
                Files.createDirectories(natives.resolve(base));
                Files.write(natives.resolve(base + "/libdibs.so"), otherBuild);
            }
        } catch (java.nio.file.NoSuchFileException e) {
            // no cross tools: the diff holds the library whole
        }
        Files.createDirectories(natives.resolve(base + "-musl"));
        Files.write(natives.resolve(base + "-musl/libdibs.so"), built);
        Process writer = new ProcessBuilder(
                        python, root.resolve("scripts/native-diff.py").toString(), natives.toString())
                .redirectErrorStream(true)
                .start();
        String written = new String(writer.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, writer.waitFor(), written);
        boolean fromBase = Files.exists(natives.resolve(base + "/libdibs.so"));
        assertTrue(
                written.contains(base + "-musl.diff: ") && written.contains(fromBase ? "from " + base : "whole"),
                written);

        Path jar = work.resolve("diff-jar");
        Files.createDirectories(jar.resolve(NativeLoader.RESOURCE_DIR));
        Files.copy(natives.resolve(base + "-musl.diff"), jar.resolve(NativeDiff.resourcePath(platform)));
        if (fromBase) {
            Files.createDirectories(
                    jar.resolve(NativePlatform.resourcePath(base)).getParent());
            Files.write(jar.resolve(NativePlatform.resourcePath(base)), otherBuild);
        }
        Path tmp = Files.createDirectories(work.resolve("diff-tmp"));
        List<String> lines = probe(
                List.of(classes.toString(), index.toString(), jar.toString()),
                "-Ddibs.native.tmpdir=" + tmp,
                "-Djava.library.path=/nonexistent-dibs-dir");
        assertEquals(DibsConnectionException.class.getName(), after(lines, "RESULT"), String.join("\n", lines));
        String copy = "dibs-" + version + "-" + sha256(built).substring(0, 16);
        assertArrayEquals(built, Files.readAllBytes(tmp.resolve(copy + suffix())), written);

        // The same diff beside another build of its base is refused, naming why; nothing loads.
        if (fromBase) {
            Files.write(jar.resolve(NativePlatform.resourcePath(base)), built);
            Path tmp2 = Files.createDirectories(work.resolve("diff-tmp2"));
            lines = probe(
                    List.of(classes.toString(), index.toString(), jar.toString()),
                    "-Ddibs.native.tmpdir=" + tmp2,
                    "-Djava.library.path=/nonexistent-dibs-dir");
            String all = String.join("\n", lines);
            assertEquals(UnsatisfiedLinkError.class.getName(), after(lines, "RESULT"), all);
            assertTrue(all.contains("it was made from another build of the " + base + " library"), all);
            assertFalse(all.contains("writable directory"), "no directory would help: " + all);
            assertEquals(new TreeSet<>(List.of(copy + ".lck")), names(tmp2), all);
        }
    }

    /** The SHA-256 of {@code bytes}, 64 lower-case hex digits, as scripts/build-natives.sh writes it. */
    static String sha256(byte[] bytes) throws java.security.NoSuchAlgorithmException {
        StringBuilder hex = new StringBuilder();
        for (byte b : java.security.MessageDigest.getInstance("SHA-256").digest(bytes)) {
            hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return hex.toString();
    }

    static String suffix() {
        String lib = System.mapLibraryName("dibs");
        return lib.substring(lib.indexOf("dibs") + 4);
    }
}
