package dibs;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** A DibsListener for tests: records every event as "event" or "event:ms". */
final class EventRecorder implements DibsListener {
    final List<String> events = Collections.synchronizedList(new ArrayList<>());
    final List<String> names = Collections.synchronizedList(new ArrayList<>());
    volatile Duration finished;
    volatile Duration heldFor;

    @Override
    public void attempt(String lockName) {
        add("attempt", lockName);
    }

    @Override
    public void skipped(String lockName) {
        add("skipped", lockName);
    }

    volatile long fencingToken;

    @Override
    public void acquired(String lockName) {
        add("acquired", lockName);
    }

    @Override
    public void acquired(String lockName, long token) {
        fencingToken = token;
        acquired(lockName);
    }

    @Override
    public void unconfirmed(String lockName) {
        add("unconfirmed", lockName);
    }

    @Override
    public void finished(String lockName, Duration duration) {
        finished = duration;
        add("finished", lockName);
    }

    @Override
    public void released(String lockName, Duration held) {
        heldFor = held;
        add("released", lockName);
    }

    @Override
    public void expired(String lockName, Duration held) {
        heldFor = held;
        add("expired", lockName);
    }

    @Override
    public void releaseFailed(String lockName, Duration held) {
        heldFor = held;
        add("releaseFailed", lockName);
    }

    @Override
    public void unproven(String lockName, Duration held) {
        heldFor = held;
        add("unproven", lockName);
    }

    private void add(String event, String lockName) {
        events.add(event);
        names.add(lockName);
    }
}
