package dibs.loader;

import dibs.Dibs;
import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Main class for {@link NativeLoaderProcessTest}: touches the native library twice and prints
 * what happened, as {@code RESULT <throwable class or none>} and the message, then
 * {@code AGAIN <throwable class or none>} and {@code SAME-MESSAGE <true|false>}. With the argument
 * {@code hold} it then prints {@code HOLDING} and sleeps, for a test to kill it. With
 * {@code second-loader} it then loads dibs again in a second class loader and prints
 * {@code SECOND <throwable class or none>} and {@code FILES <the names in dibs.native.tmpdir>}.
 */
public final class LoaderProbe {
    private LoaderProbe() {}

    public static void main(String[] args) throws Exception {
        Throwable first = attempt();
        System.out.println("RESULT " + name(first));
        System.out.println(first == null ? "" : first.getMessage());
        Throwable again = attempt();
        System.out.println("AGAIN " + name(again));
        System.out.println("SAME-MESSAGE "
                + (first != null
                        && again != null
                        && String.valueOf(first.getMessage()).equals(again.getMessage())));
        if (args.length > 0 && args[0].equals("second-loader")) {
            List<URL> urls = new ArrayList<>();
            for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
                urls.add(Paths.get(entry).toUri().toURL());
            }
            // Not closed: the library it loaded stays loaded for the life of the JVM anyway.
            URLClassLoader second = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
            Method attempt =
                    Class.forName(LoaderProbe.class.getName(), true, second).getDeclaredMethod("attempt");
            attempt.setAccessible(true);
            Throwable t = (Throwable) attempt.invoke(null);
            System.out.println("SECOND " + name(t));
            System.out.println(t == null ? "" : t.getMessage());
            TreeSet<String> files = new TreeSet<>();
            try (DirectoryStream<Path> in =
                    Files.newDirectoryStream(Paths.get(System.getProperty("dibs.native.tmpdir")))) {
                in.forEach(f -> files.add(f.getFileName().toString()));
            }
            System.out.println("FILES " + String.join(",", files));
        }
        if (args.length > 0 && args[0].equals("hold")) {
            System.out.println("HOLDING");
            System.out.flush();
            Thread.sleep(120_000);
        }
    }

    private static Throwable attempt() {
        try {
            // Port 1 is closed: with the library loaded this is a connection error.
            Dibs.execute("redis://127.0.0.1:1", "probe", 1, 0, () -> {});
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    private static String name(Throwable t) {
        return t == null ? "none" : t.getClass().getName();
    }
}
