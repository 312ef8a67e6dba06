package dibs;

/**
 * Main class for {@link NativeLoaderProcessTest}: touches the native library once and prints
 * what happened, as {@code RESULT <throwable class or none>} and then the message.
 */
public final class LoaderProbe {
    private LoaderProbe() {}

    public static void main(String[] args) {
        try {
            // Port 1 is closed: with the library loaded this is a connection error.
            Dibs.execute("redis://127.0.0.1:1", "probe", 1, 0, () -> {});
            System.out.println("RESULT none");
        } catch (Throwable t) {
            System.out.println("RESULT " + t.getClass().getName());
            System.out.println(t.getMessage());
        }
    }
}
