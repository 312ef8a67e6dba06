package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.demo.TickRace;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The loader end to end, in child JVMs, so that this JVM's loaded library is never disturbed.
 * Their class path holds the dibs classes and, only where a test says so, the bundled library
 * (a directory laid out like the jar: {@code dibs/native/<platform>/<lib>}).
 */
@Timeout(90)
class NativeLoaderProcessTest {
    @TempDir
    static Path work;
    private static Path classes;
    private static Path bundle;
    private static Path builtLibrary;

    @BeforeAll
    static void layOutClassesAndBundle() throws IOException, URISyntaxException {
        classes = Files.createDirectories(work.resolve("classes"));
        Path main = Paths.get(Dibs.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path test = Paths.get(LoaderProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path out = Files.createDirectories(classes.resolve("dibs"));
        for (Path dir : List.of(main.resolve("dibs"), test.resolve("dibs"))) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.class")) {
                for (Path f : files) {
                    String n = f.getFileName().toString();
                    if (dir.startsWith(main) || n.startsWith("LoaderProbe")) {
                        Files.copy(f, out.resolve(n));
                    }
                }
            }
        }
        // Found as a resource: Maven stages it beside the classes, Gradle in a resources dir.
        String resource = NativeLoader.resourcePath(NativeLoader.currentPlatform());
        URL staged = NativeLoader.class.getClassLoader().getResource(resource);
        assertNotNull(staged, "the build stages the native library on the test class path");
        builtLibrary = Paths.get(staged.toURI());
        bundle = work.resolve("bundle");
        Files.createDirectories(bundle.resolve(resource).getParent());
        Files.copy(builtLibrary, bundle.resolve(resource));
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

    private static List<String> probe(List<String> classPath, String... args) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command(classPath, args)).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return List.of(new String(out, StandardCharsets.UTF_8).split("\n"));
    }

    private static List<String> probe(String... args) throws IOException, InterruptedException {
        return probe(List.of(classes.toString()), args);
    }

    /** A child JVM that loaded dibs from the bundle into {@code tmp} and now sleeps. */
    private static Process holder(Path tmp) throws IOException {
        Process p = new ProcessBuilder(command(List.of(classes.toString(), bundle.toString()),
                "-Ddibs.native.tmpdir=" + tmp, "hold")).redirectErrorStream(true).start();
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

    private static String after(List<String> lines, String tag) {
        for (String l : lines) {
            if (l.startsWith(tag + " ")) {
                return l.substring(tag.length() + 1);
            }
        }
        throw new AssertionError("no " + tag + " in " + lines);
    }

    private static TreeSet<String> names(Path dir) throws IOException {
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
        assertTrue(all.contains("(platform " + NativeLoader.currentPlatform() + ")"), all);
        assertTrue(all.contains("classpath:dibs/native/" + NativeLoader.currentPlatform() + "/"), all);
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
        List<String> lines = probe(List.of(classes.toString(), bundle.toString()),
                "-Ddibs.native.path=/bogus/dir/libdibs.so", "-Djava.library.path=" + builtLibrary.getParent());
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
        assertTrue(all.contains("loaded the native library from System.loadLibrary(\"dibs\") with java.library.path="
                + libDir), all);
        assertTrue(all.contains("does not report a dibs version"), all);
        assertTrue(all.contains(NativeLoader.VERSION), all);
        assertEquals("true", after(lines, "SAME-MESSAGE"), all);
    }

    @Test
    void extractedCopiesCarryVersionAndHashAndAKilledJvmsCopyIsRemoved() throws Exception {
        Path tmp = Files.createDirectories(work.resolve("extract-" + System.nanoTime()));
        String hash = NativeLoader.sha256Prefix(Files.readAllBytes(builtLibrary));
        String suffix = System.mapLibraryName("dibs").substring(System.mapLibraryName("dibs").indexOf("dibs") + 4);

        Process alive = holder(tmp);
        TreeSet<String> aliveFiles = names(tmp);
        try {
            assertEquals(2, aliveFiles.size(), "a copy and its lock: " + aliveFiles);
            String copy = aliveFiles.first().endsWith(suffix) ? aliveFiles.first() : aliveFiles.last();
            assertTrue(copy.startsWith("dibs-" + NativeLoader.VERSION + "-" + hash + "-"), copy);
            assertTrue(aliveFiles.contains(copy.substring(0, copy.length() - suffix.length()) + ".lck"), aliveFiles.toString());

            Process killed = holder(tmp);
            killed.destroyForcibly(); // SIGKILL: no shutdown hook runs
            assertTrue(killed.waitFor(30, TimeUnit.SECONDS));
            TreeSet<String> left = names(tmp);
            left.removeAll(aliveFiles);
            assertEquals(2, left.size(), "the killed JVM left its copy and lock: " + left);

            // The next JVM to load dibs removes the killed JVM's copy, and not the live one's.
            List<String> lines = probe(List.of(classes.toString(), bundle.toString()), "-Ddibs.native.tmpdir=" + tmp);
            assertEquals(DibsConnectionException.class.getName(), after(lines, "RESULT"), String.join("\n", lines));
            assertEquals(aliveFiles, names(tmp), "only the live JVM's copy remains");
        } finally {
            alive.destroyForcibly();
            alive.waitFor(30, TimeUnit.SECONDS);
        }
        assertEquals(1, NativeLoader.removeStaleCopies(tmp), "its copy is stale once it is gone");
        assertFalse(names(tmp).iterator().hasNext(), names(tmp).toString());
    }
}
