package dibs;

/**
 * The codes of how a locked call ended, as Rust decides it ({@code dibs::Ending::code}); Java
 * only dispatches them. Rust also writes the ending's warning.
 */
final class Ending {
    /** Ours to the end, and deleted: the task outlived atLeast. */
    static final int RELEASED = 1;
    /** Ours to the end, and kept for the rest of atLeast. */
    static final int KEPT_FOR_AT_LEAST = 2;
    /** At release the lock was no longer ours: it expired while the task ran. */
    static final int NO_LONGER_OURS = 3;
    /** Keep-alive found the lock taken while the task ran. */
    static final int LOST_WHILE_RUNNING = 4;
    /** The release could not be done; the lock expires by itself within atMost. */
    static final int RELEASE_FAILED = 5;
    /**
     * The release's reply was lost and its retry found no key: gone, but whether it was ours
     * to the end cannot be proven. Never told as released.
     */
    static final int UNPROVEN = 6;

    private Ending() {}

    static boolean ownedToTheEnd(int code) {
        return code == RELEASED || code == KEPT_FOR_AT_LEAST;
    }

    /** The {@link DibsListener} event that tells an ending: released, releaseFailed, unproven or expired. */
    static String event(int code) {
        return ownedToTheEnd(code)
                ? "released"
                : code == RELEASE_FAILED ? "releaseFailed" : code == UNPROVEN ? "unproven" : "expired";
    }
}
