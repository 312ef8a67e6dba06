package dibs;

import java.time.Duration;

/**
 * Tells a {@link DibsListener} of a lease's lifecycle: a null listener costs a null check, and
 * one that throws is logged (by {@link Log}, which never throws) and ignored, so that it never breaks the lifecycle or changes the
 * call's outcome. Static, so that telling allocates nothing.
 */
final class Events {
    private Events() {}

    static void attempt(DibsListener listener, String name) {
        if (listener != null) {
            try {
                listener.attempt(name);
            } catch (RuntimeException | Error e) {
                ignored(name, "attempt", e);
            }
        }
    }

    static void tick(DibsListener listener, String name, String tick, boolean catchUp) {
        if (listener != null) {
            try {
                listener.tick(name, tick, catchUp);
            } catch (RuntimeException | Error e) {
                ignored(name, "tick", e);
            }
        }
    }

    static void failed(DibsListener listener, String name, Throwable error) {
        if (listener != null) {
            try {
                listener.failed(name, error);
            } catch (RuntimeException | Error e) {
                ignored(name, "failed", e);
            }
        }
    }

    static void acquireFailed(DibsListener listener, String name, Throwable error) {
        if (listener != null) {
            try {
                listener.acquireFailed(name, error);
            } catch (RuntimeException | Error e) {
                ignored(name, "acquireFailed", e);
            }
        }
    }

    static void skipped(DibsListener listener, String name) {
        if (listener != null) {
            try {
                listener.skipped(name);
            } catch (RuntimeException | Error e) {
                ignored(name, "skipped", e);
            }
        }
    }

    static void unconfirmed(DibsListener listener, String name) {
        if (listener != null) {
            try {
                listener.unconfirmed(name);
            } catch (RuntimeException | Error e) {
                ignored(name, "unconfirmed", e);
            }
        }
    }

    static void acquired(DibsListener listener, String name, long fencingToken) {
        if (listener != null) {
            try {
                listener.acquired(name, fencingToken);
            } catch (RuntimeException | Error e) {
                ignored(name, "acquired", e);
            }
        }
    }

    static void finished(DibsListener listener, String name, Duration duration) {
        if (listener != null) {
            try {
                listener.finished(name, duration);
            } catch (RuntimeException | Error e) {
                ignored(name, "finished", e);
            }
        }
    }

    /** One of released, expired, releaseFailed or unproven, as the release's ending says. */
    static void ended(DibsListener listener, String name, Border.Ending ending, Duration heldFor) {
        if (listener != null) {
            String event = "expired";
            try {
                switch (ending) {
                    case RELEASED:
                    case KEPT_FOR_AT_LEAST:
                        event = "released";
                        listener.released(name, heldFor);
                        break;
                    case RELEASE_FAILED:
                        event = "releaseFailed";
                        listener.releaseFailed(name, heldFor);
                        break;
                    case UNPROVEN:
                        event = "unproven";
                        listener.unproven(name, heldFor);
                        break;
                    default: // no longer ours, or lost while running
                        listener.expired(name, heldFor);
                }
            } catch (RuntimeException | Error e) {
                ignored(name, event, e);
            }
        }
    }

    private static void ignored(String name, String event, Throwable e) {
        Log.warning("DibsListener." + event + " threw for lock '" + name + "'; ignored", e);
    }
}
