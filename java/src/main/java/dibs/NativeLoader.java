package dibs;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Loads the dibs native library once per class loader, trying in order:
 *
 * <ol>
 *   <li>the file named by the system property {@value #PATH_PROPERTY} (an absolute path), with
 *       {@link System#load};
 *   <li>the library bundled in the jar at {@code dibs/native/<os>-<arch>/<libname>}, copied to a
 *       fresh directory under {@value #TMPDIR_PROPERTY} (default {@code java.io.tmpdir}), deleted
 *       on exit;
 *   <li>{@code System.loadLibrary("dibs")}, which searches {@code java.library.path}.
 * </ol>
 *
 * <p>{@code <os>} is {@code linux}, {@code macos} or {@code windows}; {@code <arch>} is
 * {@code x86_64} or {@code aarch64}; {@code <libname>} is {@code System.mapLibraryName("dibs")}.
 * If every way fails, an {@link UnsatisfiedLinkError} lists {@code os.name}, {@code os.arch} and
 * each path tried with the reason it failed.
 */
final class NativeLoader {
    /** System property: absolute path of a native library to load instead of the bundled one. */
    static final String PATH_PROPERTY = "dibs.native.path";
    /** System property: directory to extract the bundled library to (default java.io.tmpdir). */
    static final String TMPDIR_PROPERTY = "dibs.native.tmpdir";
    /** Where the bundled libraries live on the class path; the builds stage them there. */
    static final String RESOURCE_DIR = "dibs/native";
    static final String LIBRARY = "dibs";

    private static boolean loaded;

    private NativeLoader() {}

    /** Loads the library unless already loaded. Thread-safe; a failed attempt may be retried. */
    static synchronized void load() {
        if (loaded) {
            return;
        }
        List<String> tried = new ArrayList<>();
        String explicit = System.getProperty(PATH_PROPERTY);
        if (explicit != null && !explicit.isEmpty()) {
            String failure = loadFile(Paths.get(explicit));
            if (failure == null) {
                loaded = true;
                return;
            }
            tried.add("-D" + PATH_PROPERTY + "=" + explicit + ": " + failure);
        }
        String resource = resourcePath(platform(System.getProperty("os.name"), System.getProperty("os.arch")));
        String failure = loadResource(resource);
        if (failure == null) {
            loaded = true;
            return;
        }
        tried.add("classpath:" + resource + ": " + failure);
        try {
            System.loadLibrary(LIBRARY);
            loaded = true;
            return;
        } catch (UnsatisfiedLinkError | SecurityException e) {
            tried.add("System.loadLibrary(\"" + LIBRARY + "\") with java.library.path="
                    + System.getProperty("java.library.path") + ": " + e.getMessage());
        }
        throw new UnsatisfiedLinkError(
                failureMessage(System.getProperty("os.name"), System.getProperty("os.arch"), tried));
    }

    /** {@code <os>-<arch>} as used in the resource path, e.g. {@code linux-x86_64}. */
    static String platform(String osName, String osArch) {
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
        return os + "-" + arch;
    }

    /** The class-path resource of the bundled library for a platform. */
    static String resourcePath(String platform) {
        return RESOURCE_DIR + "/" + platform + "/" + System.mapLibraryName(LIBRARY);
    }

    /** The message of the {@link UnsatisfiedLinkError} thrown when every way failed. */
    static String failureMessage(String osName, String osArch, List<String> tried) {
        StringBuilder sb = new StringBuilder()
                .append("dibs: cannot load the native library for os.name=").append(osName)
                .append(", os.arch=").append(osArch)
                .append(" (platform ").append(platform(osName, osArch)).append("). Tried:");
        for (int i = 0; i < tried.size(); i++) {
            sb.append("\n  ").append(i + 1).append(". ").append(tried.get(i));
        }
        return sb.append("\nSet -D").append(PATH_PROPERTY)
                .append("=/absolute/path/to/").append(System.mapLibraryName(LIBRARY))
                .append(" to use a library built for this platform.")
                .toString();
    }

    /** Loads a library file; returns null on success, else why it failed. */
    static String loadFile(Path file) {
        if (!file.isAbsolute()) {
            return "not an absolute path";
        }
        if (!Files.isRegularFile(file)) {
            return "no such file";
        }
        try {
            System.load(file.toString());
            return null;
        } catch (UnsatisfiedLinkError | SecurityException e) {
            return e.toString();
        }
    }

    /** Extracts a bundled library and loads it; returns null on success, else why it failed. */
    private static String loadResource(String resource) {
        ClassLoader cl = NativeLoader.class.getClassLoader();
        try (InputStream in = cl == null
                ? ClassLoader.getSystemResourceAsStream(resource)
                : cl.getResourceAsStream(resource)) {
            if (in == null) {
                return "not on the class path (no build for this platform in the jar)";
            }
            Path dir = Paths.get(System.getProperty(TMPDIR_PROPERTY, System.getProperty("java.io.tmpdir")));
            Path tmp = Files.createTempDirectory(dir, "dibs-native-");
            tmp.toFile().deleteOnExit(); // registered first, so deleted after the file
            Path file = tmp.resolve(System.mapLibraryName(LIBRARY));
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            file.toFile().deleteOnExit();
            String failure = loadFile(file);
            if (failure == null) {
                return null;
            }
            Files.deleteIfExists(file);
            Files.deleteIfExists(tmp);
            return "extracted to " + file + " but " + failure;
        } catch (IOException | SecurityException e) {
            return "cannot extract: " + e;
        }
    }
}
