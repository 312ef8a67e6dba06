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

    /** What an operator's forced release found. */
    enum ForcedRelease {
        /** The lock held the token given, and was deleted. */
        RELEASED,
        /** The lock was free: nothing to release. */
        FREE,
        /** Another holder has the lock now: not touched. */
        OTHER_HOLDER;

        private static final ForcedRelease[] BY_CODE = values();

        /** The constant of a code Rust sent. */
        static ForcedRelease of(int code) {
            return BY_CODE[code];
        }

        /** The code Rust reads. */
        int code() {
            return ordinal();
        }
    }

    /** How a job stands, one word, the worst first (the core's `Standing`). */
    enum Standing {
        /** A success within the window, long enough (or none asked, or none due yet). */
        OK,
        /** No success within the window, and the history is complete over it. */
        OVERDUE,
        /** The window's newest success took less than the minimum duration. */
        SUSPECT,
        /** The history, or a scan cut short, cannot tell (see the check's reason). */
        UNKNOWN,
        /** Late, but a run holding its lock now excuses it. */
        RUNNING,
        /** A run has held its lock longer than the maximum duration. */
        TOO_LONG;

        private static final Standing[] BY_CODE = values();

        /** The constant of a code Rust sent. */
        static Standing of(int code) {
            return BY_CODE[code];
        }

        /** The code Rust reads. */
        int code() {
            return ordinal();
        }
    }

    /**
     * What a value of a Java `Map` conn is, as `dibs.ConnCache` flattens it into text tokens
     * (key, the code, the value), and `crate::tokens` reads them.
     */
    enum ConnToken {
        /** A string (a Clojure keyword too): the value as it is. */
        STR,
        /** An integer of any Java width: its decimal text. */
        INT,
        /** A boolean: `true` or `false`. */
        BOOL,
        /** A null: an empty value. */
        NULL,
        /** A nested map: the number of its entries, whose triples follow. */
        MAP,
        /** Any other type: its class's name, for the error that names it. */
        OTHER;

        private static final ConnToken[] BY_CODE = values();

        /** The constant of a code Rust sent. */
        static ConnToken of(int code) {
            return BY_CODE[code];
        }

        /** The code Rust reads. */
        int code() {
            return ordinal();
        }
    }

    /** The longest a catch-up looks back, in ms: the core's `MAX_CATCH_UP_AGE`. */
    static final long MAX_CATCH_UP_AGE_MS = 2592000000L;

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

        /**
         * The lock's job (the core's `job_of`), where the call asked for it (a listener hears
         * the call), else null.
         */
        String job;

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

    /** Who holds a lock, as one round trip read it; the lock unchanged. */
    static final class Inspected {
        /** Whether the lock is held. */
        boolean held;

        /** How long until it expires, in milliseconds; -1 when held without expiry, or free. */
        long remainingMs;

        /** The holder's host, or null (free, or a value dibs did not write). */
        String host;

        /** The holder's process id; -1 when unknown. */
        long pid;

        /** When the holder acquired it, Unix ms by its clock; -1 when unknown. */
        long acquiredAtMs;
    }

    /** One recorded run of a job, from its history. */
    static final class Run {
        /** When the release recorded it, Unix ms by the server's clock. */
        long recordedAtMs;

        /** The lock's whole name, its tick included. */
        String lockName;

        /** The host of the instance that ran it. */
        String host;

        /** The process id of the instance that ran it. */
        long pid;

        /** The conn's instance id, or null. */
        String instanceId;

        /** When the lock was acquired, Unix ms by the holder's clock. */
        long startedAtMs;

        /** How long the lock was held, in milliseconds. */
        long durationMs;

        /** The run's fencing token. */
        long fencingToken;

        /** How the run ended, as the history writes it (released, kept, expired, ...). */
        String ended;

        /** How its task ended, as its caller said. */
        int task;

        /** Who forced its release, or null. */
        String forcedBy;

        /** Its atLeast, in milliseconds. */
        long atLeastMs;

        /** Whether it was a catch-up's run. */
        boolean catchUp;

        /** How its task ended, as its caller said. */
        Task task() {
            return Task.of(task);
        }
    }

    /** The last recorded runs of a job or lock, and what they prove. */
    static final class History {
        /** The job whose history holds them, or null when nothing matched. */
        String job;

        /** Since when the history holds every run of the job, Unix ms. */
        long completeSinceMs;

        /** When the history last evicted a run of any job, Unix ms; -1 for never. */
        long evictedAtMs;

        /** When the history last evicted a run of this job, Unix ms; -1 for never. */
        long jobEvictedAtMs;

        /** The runs, newest first. */
        Run[] runs;
    }

    /** A lock held now, with its holder's token. */
    static final class Held {
        /** The lock's name. */
        String name;

        /** The holder's host, or null when the value was not written by dibs. */
        String host;

        /** The holder's process id; -1 when unknown. */
        long pid;

        /** When the holder acquired it, Unix ms by its clock; -1 when unknown. */
        long acquiredAtMs;

        /** How long until it expires, in milliseconds; -1 when it has no expiry. */
        long remainingMs;

        /** The holder's token, or null. */
        String token;

        /**
         * Whether a run holds it (a lock kept for the rest of atLeast, or a tick's done mark, is
         * held by none).
         */
        boolean running;
    }

    /** A job with a recorded run. */
    static final class Recorded {
        /** The job's name. */
        String job;

        /** When its last run was recorded, Unix ms. */
        long lastRecordedMs;
    }

    /** What a scan of the keyspace found: complete, or cut short by its time budget. */
    static final class Listing {
        /**
         * Whether the scan reached the end of the keyspace on every master (when false, another
         * match may exist).
         */
        boolean complete;

        /** Whether more matched than the limit (the items are then the first of them). */
        boolean truncated;

        /** About how many keys the scan looked at. */
        long scanned;

        /** How many keys there are (summed over the masters). */
        long keys;

        /** The held locks found (a listing of locks), else empty. */
        Held[] locks;

        /** The jobs found (a listing of jobs), else empty. */
        Recorded[] jobs;
    }

    /** What a check of a job read, and how the core's judge answered it. */
    static final class Judged {
        /** How the job stands. */
        int standing;

        /** Whether it is proven overdue (a run too long besides changes nothing of it). */
        boolean overdue;

        /** Whether its last success is proven shorter than its minimum duration. */
        boolean suspect;

        /** Whether a run has held its lock longer than its maximum duration. */
        boolean tooLong;

        /** Why its standing is unknown, for a person, or null. */
        String unknown;

        /** The window a success must fall in, in milliseconds; -1 when none was asked. */
        long windowMs;

        /** When it was read, Unix ms by this process's clock. */
        long readAtMs;

        /** Its last runs (a few), newest first. */
        History history;

        /** Its last success, however far back the history had to be read for it, or null. */
        Run lastSuccess;

        /** Its own lock, where a run holds it now and the check let that excuse it, or null. */
        Held held;

        /** The runs holding its locks now, where a rule needed them, or null. */
        Listing running;

        /** How the job stands. */
        Standing standing() {
            return Standing.of(standing);
        }
    }

    /** The fingerprint of the border: {@link NativeLib} refuses a native library of another. */
    static final String FINGERPRINT = "0b8ceeef05011973";
}
