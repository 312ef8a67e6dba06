package dibs.spring;

import dibs.DibsListener;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * Each locked call as a Micrometer {@link Observation} named {@value #NAME}, so that a trace
 * shows it inside the {@code @Scheduled} task's span (the application's current observation is
 * its parent): started at {@code attempt}, stopped when the call ends. Its low-cardinality keys
 * match the meters: {@code lock} (the job, by the {@link DibsLockTag}), {@code outcome}
 * ({@code ran}, {@code failed}, {@code skipped}, {@code unconfirmed}, {@code lost},
 * {@code unproven}, {@code release-failed}, and {@code error} for a call that threw before its
 * lock was decided) and {@code catch.up}; its high-cardinality ones are
 * the tick ({@code dibs.tick}) and the fencing token ({@code dibs.fencing.token}). While the task
 * runs, the observation is in scope, so the task's own spans are its children. A task that threw
 * is the observation's error. Who held the lock of a skipped call is not known to the call (its
 * acquire is one {@code SET NX}), so it is not said.
 *
 * <p>A call that throws before its lock is won or refused (an unreachable Redis, an invalid
 * name) is stopped with outcome {@code error} and its exception (the span's error status) when
 * dibs tells {@code acquireFailed}, on any thread. A call that threw where dibs could not tell it
 * (an invalid argument refused in Java before the lock was tried, after {@code attempt}) is
 * stopped when the {@code @Scheduled} run it was made from ends, with the exception the run threw,
 * else at the next call on its thread.
 *
 * <p>The events of a call come on its thread, in order; a lease released on another thread (the
 * cleaner's) ends no observation there, and one left open is dropped past {@value #MAX_OPEN} on
 * its thread.
 */
final class DibsObservations implements DibsListener {
    /** The observation's name: its timer {@code dibs.lock.call}, its span's name. */
    static final String NAME = "dibs.lock.call";

    /** Open observations kept per thread, at most: nested locked calls, and leases never ended. */
    private static final int MAX_OPEN = 32;

    private final ObservationRegistry registry;
    private final DibsLockTag tagOf;
    private final ThreadLocal<ArrayDeque<Open>> open = ThreadLocal.withInitial(ArrayDeque::new);

    /** An observation of a call on this thread, and its scope while the task runs. */
    private static final class Open {
        final String lockName;
        final Observation observation;
        Observation.Scope scope;
        /** Won, refused or left unconfirmed: the call got past its acquire. */
        boolean decided;

        Open(String lockName, Observation observation) {
            this.lockName = lockName;
            this.observation = observation;
        }
    }

    DibsObservations(ObservationRegistry registry, DibsLockTag tagOf, TagLimit limit) {
        this.registry = registry;
        this.tagOf = name -> limit.of(tagOf, name);
    }

    @Override
    public void attempt(String lockName) {
        String tag = tagOf.apply(lockName);
        Observation observation = Observation.createNotStarted(NAME, registry)
                .contextualName("dibs " + tag)
                .lowCardinalityKeyValue(DibsMetrics.TAG, tag)
                .lowCardinalityKeyValue("catch.up", "false")
                .start();
        ArrayDeque<Open> calls = open.get();
        // No other call's acquire is under way on this thread: one still undecided threw.
        for (Iterator<Open> it = calls.iterator(); it.hasNext(); ) {
            Open earlier = it.next();
            if (!earlier.decided) {
                it.remove();
                threw(earlier, null);
            }
        }
        if (calls.size() >= MAX_OPEN) {
            calls.pollLast().observation.stop();
        }
        Open call = new Open(lockName, observation);
        calls.push(call);
        DibsScheduledRun.atEnd(thrown -> {
            if (!call.decided && open.get().remove(call)) {
                threw(call, thrown);
            }
        });
    }

    /** Stops the observation of a call that threw before its lock was decided, outcome {@code error}. */
    private static void threw(Open call, Throwable error) {
        if (error != null) {
            call.observation.error(error);
        }
        call.observation.lowCardinalityKeyValue("outcome", "error").stop();
    }

    @Override
    public void tick(String lockName, String tick, boolean catchUp) {
        Open call = find(lockName, false);
        if (call != null) {
            call.observation
                    .highCardinalityKeyValue("dibs.tick", tick)
                    .lowCardinalityKeyValue("catch.up", String.valueOf(catchUp));
        }
    }

    @Override
    public void acquired(String lockName, long fencingToken) {
        Open call = find(lockName, false);
        if (call != null) {
            call.decided = true;
            call.observation.highCardinalityKeyValue("dibs.fencing.token", String.valueOf(fencingToken));
            call.scope = call.observation.openScope();
        }
    }

    @Override
    public void failed(String lockName, Throwable error) {
        Open call = find(lockName, false);
        if (call != null) {
            call.observation.error(error).lowCardinalityKeyValue(KeyValue.of("outcome", "failed"));
        }
    }

    @Override
    public void finished(String lockName, Duration duration) {
        Open call = find(lockName, false);
        if (call != null && call.scope != null) {
            call.scope.close();
            call.scope = null;
        }
    }

    @Override
    public void acquireFailed(String lockName, Throwable error) {
        for (Iterator<Open> it = open.get().iterator(); it.hasNext(); ) {
            Open call = it.next();
            if (call.lockName.equals(lockName) && !call.decided) {
                it.remove();
                threw(call, error);
                return;
            }
        }
    }

    @Override
    public void skipped(String lockName) {
        end(lockName, "skipped");
    }

    @Override
    public void unconfirmed(String lockName) {
        end(lockName, "unconfirmed");
    }

    @Override
    public void released(String lockName, Duration heldFor) {
        end(lockName, "ran");
    }

    @Override
    public void expired(String lockName, Duration heldFor) {
        end(lockName, "lost");
    }

    @Override
    public void unproven(String lockName, Duration heldFor) {
        end(lockName, "unproven");
    }

    @Override
    public void releaseFailed(String lockName, Duration heldFor) {
        end(lockName, "release-failed");
    }

    /** Stops the call's observation with its outcome (a task that threw stays {@code failed}). */
    private void end(String lockName, String outcome) {
        Open call = find(lockName, true);
        if (call == null) {
            return;
        }
        if (call.scope != null) {
            call.scope.close();
        }
        Observation.Context context = call.observation.getContext();
        if (context.getError() == null) {
            call.observation.lowCardinalityKeyValue("outcome", outcome);
        }
        call.observation.stop();
    }

    /** The innermost open call of {@code lockName} on this thread; removed with {@code take}. */
    private Open find(String lockName, boolean take) {
        for (Iterator<Open> it = open.get().iterator(); it.hasNext(); ) {
            Open call = it.next();
            if (call.lockName.equals(lockName)) {
                if (take) {
                    it.remove();
                }
                return call;
            }
        }
        return null;
    }
}
