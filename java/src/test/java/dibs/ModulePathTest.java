package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dibs.testsupport.TestSupport;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The library on the module path (issue 45, 5): an application module that {@code requires dibs}
 * takes a lock through the exported API, its native library loaded from inside the module, and
 * cannot reach the loader's package, which the module does not export. Compiled and run in a JVM
 * of its own, against the library's module ({@code module-info.class} beside its classes).
 */
@Timeout(120)
class ModulePathTest extends RedisTestBase {
    private static final String MAIN = String.join(
            "\n",
            "package app;",
            "public final class Main {",
            "    public static void main(String[] args) throws Exception {",
            "        System.out.println(\"MODULE \" + dibs.Dibs.class.getModule().getName());",
            "        System.out.println(\"RAN \" + dibs.Dibs.execute(args[0], args[1], 10, 0, () -> {}));",
            "        try {",
            "            Class.forName(\"dibs.loader.NativeLoader\").getMethod(\"load\").invoke(null);",
            "            System.out.println(\"LOADER reached\");",
            "        } catch (IllegalAccessException hidden) {",
            "            System.out.println(\"LOADER hidden\");",
            "        }",
            "    }",
            "}",
            "");

    @Test
    void anApplicationModuleLocksThroughTheExportedApiAndReachesNothingElse() throws Exception {
        Path library = Paths.get(
                Dibs.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertTrue(Files.exists(library.resolve("module-info.class")), library + " holds no module-info.class");
        Path dir = Files.createTempDirectory("dibs-module-path");
        Path source = dir.resolve("src");
        Files.createDirectories(source.resolve("app"));
        Files.write(
                source.resolve("module-info.java"), "module app { requires dibs; }\n".getBytes(StandardCharsets.UTF_8));
        Files.write(source.resolve("app/Main.java"), MAIN.getBytes(StandardCharsets.UTF_8));
        Path classes = dir.resolve("classes");
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assumeTrue(javac != null, "a JDK's compiler (this JVM is a runtime alone)");
        int compiled = javac.run(
                null,
                null,
                null,
                "-d",
                classes.toString(),
                "--module-path",
                library.toString(),
                source.resolve("module-info.java").toString(),
                source.resolve("app/Main.java").toString());
        assertEquals(0, compiled, "the application module compiles against module dibs");

        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        if (Runtime.version().feature() >= 24) {
            command.add("--enable-native-access=dibs"); // JEP 472: the module that loads it
        }
        command.add("--module-path");
        command.add(library + File.pathSeparator + classes);
        command.add("-m");
        command.add("app/app.Main");
        command.add("redis://127.0.0.1:" + redis.port());
        command.add(TestSupport.uniqueName("module-path"));
        Process run = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(run.waitFor(60, TimeUnit.SECONDS), out);
        assertEquals(0, run.exitValue(), out);
        assertTrue(out.contains("MODULE dibs"), out);
        assertTrue(out.contains("RAN true"), out);
        assertTrue(out.contains("LOADER hidden"), out);
    }
}
