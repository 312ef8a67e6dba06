package dibs.spring;

import dibs.DibsListener;
import java.time.Duration;
import java.util.List;

/**
 * Every {@link DibsListener} bean, as the one listener a {@code DibsClient} takes. dibs already
 * logs and ignores a listener that throws; here one listener that throws must not keep the
 * others from hearing the event either, so each is called apart.
 */
final class CompositeListener implements DibsListener {
    private static final System.Logger LOG = System.getLogger("dibs.spring");
    private final List<DibsListener> listeners;

    CompositeListener(List<DibsListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    @Override
    public void attempt(String lockName) {
        each(lockName, "attempt", l -> l.attempt(lockName));
    }

    @Override
    public void tick(String lockName, String tick, boolean catchUp) {
        each(lockName, "tick", l -> l.tick(lockName, tick, catchUp));
    }

    @Override
    public void failed(String lockName, Throwable error) {
        each(lockName, "failed", l -> l.failed(lockName, error));
    }

    @Override
    public void acquireFailed(String lockName, Throwable error) {
        each(lockName, "acquireFailed", l -> l.acquireFailed(lockName, error));
    }

    @Override
    public void skipped(String lockName) {
        each(lockName, "skipped", l -> l.skipped(lockName));
    }

    @Override
    public void unconfirmed(String lockName) {
        each(lockName, "unconfirmed", l -> l.unconfirmed(lockName));
    }

    @Override
    public void acquired(String lockName) {
        each(lockName, "acquired", l -> l.acquired(lockName));
    }

    @Override
    public void acquired(String lockName, long fencingToken) {
        each(lockName, "acquired", l -> l.acquired(lockName, fencingToken));
    }

    @Override
    public void finished(String lockName, Duration duration) {
        each(lockName, "finished", l -> l.finished(lockName, duration));
    }

    @Override
    public void released(String lockName, Duration heldFor) {
        each(lockName, "released", l -> l.released(lockName, heldFor));
    }

    @Override
    public void expired(String lockName, Duration heldFor) {
        each(lockName, "expired", l -> l.expired(lockName, heldFor));
    }

    @Override
    public void releaseFailed(String lockName, Duration heldFor) {
        each(lockName, "releaseFailed", l -> l.releaseFailed(lockName, heldFor));
    }

    @Override
    public void unproven(String lockName, Duration heldFor) {
        each(lockName, "unproven", l -> l.unproven(lockName, heldFor));
    }

    private void each(String lockName, String event, java.util.function.Consumer<DibsListener> call) {
        for (DibsListener l : listeners) {
            try {
                call.accept(l);
            } catch (RuntimeException e) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "DibsListener " + l.getClass().getName() + "." + event + " threw for lock '" + lockName
                                + "'; ignored",
                        e);
            }
        }
    }

    @Override
    public String toString() {
        return "CompositeListener"
                + listeners.stream().map(l -> l.getClass().getSimpleName()).toList();
    }
}
