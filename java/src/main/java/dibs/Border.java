// Generated from crates/dibs-jni/src/border/mod.rs: do not edit. A unit test of dibs-jni (in the quick
// lane) fails when this file is not what those declarations generate;
// DIBS_BORDER_WRITE=1 cargo test -p dibs-jni --lib border writes it.
package dibs;

/**
 * What crosses the JNI border besides the native methods' own arguments, declared once in Rust: records
 * that Java makes and Rust fills by field name, and lists of codes whose code is the constant's ordinal.
 */
final class Border {
    private Border() {}

    /** How an acquire ended. */
    enum AcquireOutcome {
        /** This call holds the lock: the task runs. */
        WON,
        /** Another holder has the lock (or the tick's lock): skipped. */
        TAKEN,
        /**
         * Durable acquire won the lock, could not confirm it on the replicas in time, and gave it
         * back: the task must not run.
         */
        UNCONFIRMED,
        /** The tick ran already, by its job's history: not tried. */
        RAN,
        /** Whether the tick ran cannot be proven (the history does not reach back to it): not tried. */
        UNKNOWN,
        /** The tick was due longer ago than catch-up looks back: not tried. */
        BEYOND_REACH;

        private static final AcquireOutcome[] BY_CODE = values();

        /** The constant of a code Rust sent. */
        static AcquireOutcome of(int code) {
            return BY_CODE[code];
        }

        /** The code Rust reads. */
        int code() {
            return ordinal();
        }
    }

    /** Whether a tick of a job ran, by its lock and its job's history. */
    enum TickState {
        /** It did not run. */
        MISSED,
        /** It ran. */
        RAN,
        /** Whether it ran cannot be proven. */
        UNKNOWN,
        /** It was due before the job's first recorded run: a new job, nothing to catch up. */
        BEFORE_FIRST_RUN,
        /** It was due longer ago than catch-up looks back (30 days): not looked at. */
        BEYOND_REACH;

        private static final TickState[] BY_CODE = values();

        /** The constant of a code Rust sent. */
        static TickState of(int code) {
            return BY_CODE[code];
        }

        /** The code Rust reads. */
        int code() {
            return ordinal();
        }
    }

    /** How the task ended, as the caller of a release says it, for the run history. */
    enum Task {
        /** It ran to success. */
        SUCCEEDED,
        /** It threw. */
        FAILED,
        /** dibs did not see how it ended (the caller did not say): recorded as unknown. */
        UNKNOWN;

        private static final Task[] BY_CODE = values();

        /** The constant of a code Rust sent. */
        static Task of(int code) {
            return BY_CODE[code];
        }

        /** The code Rust reads. */
        int code() {
            return ordinal();
        }
    }

    /** What became of the lock at the end of a call whose task ran (the core's `Ended`). */
    enum Ending {
        /** Ours to the end, and deleted: the task outlived atLeast. */
        RELEASED,
        /** Ours to the end, and kept for the rest of atLeast. */
        KEPT_FOR_AT_LEAST,
        /** At release the lock was no longer ours: it expired while the task ran. */
        NO_LONGER_OURS,
        /** Keep-alive found the lock taken while the task ran. */
        LOST_WHILE_RUNNING,
        /** The release could not be done; the lock expires by itself within atMost. */
        RELEASE_FAILED,
        /**
         * The release's reply was lost and its retry found no key: gone, but whether it was ours
         * to the end cannot be proven. Never told as released.
         */
        UNPROVEN;

        private static final Ending[] BY_CODE = values();

        /** The constant of a code Rust sent. */
        static Ending of(int code) {
            return BY_CODE[code];
        }

        /** The code Rust reads. */
        int code() {
            return ordinal();
        }
    }

    /** What an acquire says. */
    static final class Acquired {
        /** How it ended. */
        int outcome;

        /** The lease's id while Rust holds it for Java: 0 unless won. */
        long leaseId;

        /** The lease's fencing token: 0 unless won, or when the server's ACL refuses TIME. */
        long fencingToken;

        /**
         * The acquire's warning for the log (unconfirmed, an unknown tick, or a keep-alive schedule
         * that cannot hold for this atMost), or null.
         */
        String warning;

        /** How it ended. */
        AcquireOutcome outcome() {
            return AcquireOutcome.of(outcome);
        }
    }

    /** What a release says. */
    static final class Released {
        /** What became of the lock. */
        int ending;

        /** Whether the lock was ours from acquisition to release (the core's rule). */
        boolean ownedToTheEnd;

        /** How long the lock was held, acquisition to release, in milliseconds. */
        long heldMs;

        /** The ending's warning for the log, or null when the lock was ours to the end. */
        String warning;

        /** What became of the lock. */
        Ending ending() {
            return Ending.of(ending);
        }
    }
}
