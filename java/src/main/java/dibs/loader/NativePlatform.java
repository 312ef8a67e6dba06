package dibs.loader;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;

/**
 * Names the platform of a native library: {@code <os>-<arch>[-musl]} (see {@link NativeLoader}),
 * where its library lies on the class path, and the suffix of a library file name.
 */
final class NativePlatform {
    private NativePlatform() {}

    /** {@code <os>-<arch>[-musl]} as used in the resource path, e.g. {@code linux-x86_64-musl}. */
    static String platform(String osName, String osArch, boolean musl) {
        String os = String.valueOf(osName).toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) {
            os = "linux";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            os = "macos";
        } else if (os.startsWith("windows")) {
            os = "windows";
        } else {
            os = os.replaceAll("[^a-z0-9]", "");
        }
        String arch = String.valueOf(osArch).toLowerCase(Locale.ROOT);
        switch (arch) {
            case "amd64":
            case "x86_64":
            case "x86-64":
            case "x64":
                arch = "x86_64";
                break;
            case "aarch64":
            case "arm64":
                arch = "aarch64";
                break;
            default:
                arch = arch.replaceAll("[^a-z0-9_]", "");
        }
        return os + "-" + arch + (musl && os.equals("linux") ? "-musl" : "");
    }

    /** The platform of this process, as {@link #platform(String, String, boolean)} names it. */
    static String currentPlatform() {
        return platform(
                System.getProperty("os.name"),
                System.getProperty("os.arch"),
                isMusl(Paths.get("/proc/self/maps"), Paths.get("/lib")));
    }

    /**
     * Whether this process runs on musl: its memory map names musl's dynamic loader. Where the map
     * cannot be read, whether {@code libDir} has musl's loader and no glibc one.
     */
    static boolean isMusl(Path procMaps, Path libDir) {
        // One read and one search: a line reader (and Files.lines with a lambda) costs a cold JVM
        // several milliseconds more, for the ~200 lines of a JVM's map.
        try (InputStream in = new FileInputStream(procMaps.toFile())) {
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1).contains("/ld-musl-");
        } catch (IOException | RuntimeException e) {
            // no /proc (not Linux, or hidden): fall back to what is installed
        }
        boolean musl = false;
        boolean glibc = false;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(libDir, "ld-*")) {
            for (Path f : files) {
                String n = f.getFileName().toString();
                musl |= n.startsWith("ld-musl-");
                glibc |= n.startsWith("ld-linux");
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
        return musl && !glibc;
    }

    /** The class-path resource of the bundled library for a platform. */
    static String resourcePath(String platform) {
        return NativeLoader.RESOURCE_DIR + "/" + platform + "/" + libraryName(platform);
    }

    /**
     * The file name of a platform's library, as scripts/build-natives.sh names it: that of its OS,
     * whatever this JVM's OS (a diff's base may be another OS's library).
     */
    static String libraryName(String platform) {
        if (platform.startsWith("windows-")) {
            return NativeLoader.LIBRARY + ".dll";
        }
        return "lib" + NativeLoader.LIBRARY + (platform.startsWith("macos-") ? ".dylib" : ".so");
    }

    /** What follows the name in a library file name: {@code .so}, {@code .dylib} or {@code .dll}. */
    static String librarySuffix() {
        String mapped = System.mapLibraryName(NativeLoader.LIBRARY);
        return mapped.substring(mapped.indexOf(NativeLoader.LIBRARY) + NativeLoader.LIBRARY.length());
    }
}
