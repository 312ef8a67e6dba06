package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dibs.demo.TickRace;
import java.io.IOException;
import java.net.URL;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The loader end to end, in child JVMs whose class path holds the dibs classes but no bundled
 * library, so that this JVM's loaded library is never disturbed.
 */
@Timeout(60)
class NativeLoaderProcessTest {
    @TempDir
    static Path classes;
    private static Path builtLibrary;

    @BeforeAll
    static void copyClassesWithoutTheLibrary() throws IOException, URISyntaxException {
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
        String platform = NativeLoader.platform(System.getProperty("os.name"), System.getProperty("os.arch"));
        URL staged = NativeLoader.class.getClassLoader().getResource(NativeLoader.resourcePath(platform));
        assertNotNull(staged, "the build stages the native library on the test class path");
        builtLibrary = Paths.get(staged.toURI());
    }

    private static List<String> probe(String... props) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        for (String flag : TickRace.inheritedJvmFlags()) {
            if (!flag.startsWith("-D")) { // our own -D flags decide where the library comes from
                cmd.add(flag);
            }
        }
        for (String p : props) {
            cmd.add(p);
        }
        cmd.add("-cp");
        cmd.add(classes.toString());
        cmd.add(LoaderProbe.class.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        List<String> lines = new ArrayList<>();
        for (String line : new String(out, StandardCharsets.UTF_8).split("\n")) {
            lines.add(line);
        }
        return lines;
    }

    private static String resultOf(List<String> lines) {
        for (String l : lines) {
            if (l.startsWith("RESULT ")) {
                return l.substring(7);
            }
        }
        throw new AssertionError("no RESULT in " + lines);
    }

    @Test
    void failureListsThePlatformAndEveryPathTried() throws Exception {
        List<String> lines = probe("-Ddibs.native.path=/bogus/dir/libdibs.so", "-Djava.library.path=/nonexistent-dibs-dir");
        String all = String.join("\n", lines);
        assertEquals(UnsatisfiedLinkError.class.getName(), resultOf(lines), all);
        assertTrue(all.contains("os.name=" + System.getProperty("os.name")), all);
        assertTrue(all.contains("os.arch=" + System.getProperty("os.arch")), all);
        assertTrue(all.contains("-Ddibs.native.path=/bogus/dir/libdibs.so: no such file"), all);
        assertTrue(all.contains("classpath:dibs/native/"), all);
        assertTrue(all.contains("System.loadLibrary(\"dibs\") with java.library.path=/nonexistent-dibs-dir"), all);
    }

    @Test
    void loadsFromTheNativePathProperty() throws Exception {
        assertTrue(Files.isRegularFile(builtLibrary), "built library at " + builtLibrary);
        List<String> lines = probe("-Ddibs.native.path=" + builtLibrary, "-Djava.library.path=/nonexistent-dibs-dir");
        assertEquals(DibsConnectionException.class.getName(), resultOf(lines), String.join("\n", lines));
    }

    @Test
    void loadsFromTheLibraryPath() throws Exception {
        assertTrue(Files.isRegularFile(builtLibrary), "built library at " + builtLibrary);
        List<String> lines = probe("-Djava.library.path=" + builtLibrary.getParent());
        assertEquals(DibsConnectionException.class.getName(), resultOf(lines), String.join("\n", lines));
    }
}
