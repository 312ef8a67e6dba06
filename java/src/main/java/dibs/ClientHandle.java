package dibs;

/**
 * What every locked call on one {@link DibsClient} carries to its lease: the native client
 * handle, the client's listener and its interrupt policy. Immutable.
 */
final class ClientHandle {
    /** The native client handle ({@link NativeLib#connectUri}, {@link NativeLib#connectMap}). */
    final long id;
    /** Hears every locked call of the client; null for none. */
    final DibsListener listener;
    /** Whether a lock found lost interrupts the thread that runs the task. */
    final boolean interruptOnLost;

    ClientHandle(long id, DibsListener listener, boolean interruptOnLost) {
        this.id = id;
        this.listener = listener;
        this.interruptOnLost = interruptOnLost;
    }
}
