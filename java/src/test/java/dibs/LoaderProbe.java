package dibs;

/**
 * Main class for {@link NativeLoaderProcessTest}: touches the native library twice and prints
 * what happened, as {@code RESULT <throwable class or none>} and the message, then
 * {@code AGAIN <throwable class or none>} and {@code SAME-MESSAGE <true|false>}. With the argument
 * {@code hold} it then prints {@code HOLDING} and sleeps, for a test to kill it.
 */
public final class LoaderProbe {
    private LoaderProbe() {}

    public static void main(String[] args) throws InterruptedException {
        Throwable first = attempt();
        System.out.println("RESULT " + name(first));
        System.out.println(first == null ? "" : first.getMessage());
        Throwable again = attempt();
        System.out.println("AGAIN " + name(again));
        System.out.println("SAME-MESSAGE " + (first != null && again != null
                && String.valueOf(first.getMessage()).equals(again.getMessage())));
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
