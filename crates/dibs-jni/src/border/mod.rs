//! What crosses the JNI border besides the native methods' own arguments, declared once, here.
//!
//! A record is a Java object that Java makes and Rust fills by field name (so that a call never
//! allocates after its lock exists, and no fact has a slot number); a list of codes is a Java
//! enum whose constants are these variants in this order. `java/src/main/java/dibs/Border.java`
//! is generated from these declarations ([`java::source`]): a unit test of this crate, in the
//! quick lane, fails when the file is not what they generate, and
//! `DIBS_BORDER_WRITE=1 cargo test -p dibs-jni --lib border` writes it.

#[macro_use]
mod declare;
mod fingerprint;
#[cfg(test)]
mod java;
mod natives;

pub(crate) use fingerprint::FINGERPRINT;

pub(crate) use declare::Warning;

codes! {
    /// How an acquire ended.
    AcquireOutcome {
        /// This call holds the lock: the task runs.
        Won,
        /// Another holder has the lock (or the tick's lock): skipped.
        Taken,
        /// Durable acquire won the lock, could not confirm it on the replicas in time, and gave it
        /// back: the task must not run.
        Unconfirmed,
        /// The tick ran already, by its job's history: not tried.
        Ran,
        /// Whether the tick ran cannot be proven (the history does not reach back to it): not tried.
        Unknown,
        /// The tick was due longer ago than catch-up looks back: not tried.
        BeyondReach,
    }
}

codes! {
    /// Whether a tick of a job ran, by its lock and its job's history.
    TickState {
        /// It did not run.
        Missed,
        /// It ran.
        Ran,
        /// Whether it ran cannot be proven.
        Unknown,
        /// It was due before the job's first recorded run: a new job, nothing to catch up.
        BeforeFirstRun,
        /// It was due longer ago than catch-up looks back (30 days): not looked at.
        BeyondReach,
    }
}

codes! {
    /// How the task ended, as the caller of a release says it, for the run history.
    Task {
        /// It ran to success.
        Succeeded,
        /// It threw.
        Failed,
        /// dibs did not see how it ended (the caller did not say): recorded as unknown.
        Unknown,
    }
}

codes! {
    /// What became of the lock at the end of a call whose task ran (the core's `Ended`).
    Ending {
        /// Ours to the end, and deleted: the task outlived atLeast.
        Released,
        /// Ours to the end, and kept for the rest of atLeast.
        KeptForAtLeast,
        /// At release the lock was no longer ours: it expired while the task ran.
        NoLongerOurs,
        /// Keep-alive found the lock taken while the task ran.
        LostWhileRunning,
        /// The release could not be done; the lock expires by itself within atMost.
        ReleaseFailed,
        /// The release's reply was lost and its retry found no key: gone, but whether it was ours
        /// to the end cannot be proven. Never told as released.
        Unproven,
    }
}

codes! {
    /// What an operator's forced release found.
    ForcedRelease {
        /// The lock held the token given, and was deleted.
        Released,
        /// The lock was free: nothing to release.
        Free,
        /// Another holder has the lock now: not touched.
        OtherHolder,
    }
}

codes! {
    /// How a job stands, one word, the worst first (the core's `Standing`).
    Standing {
        /// A success within the window, long enough (or none asked, or none due yet).
        Ok,
        /// No success within the window, and the history is complete over it.
        Overdue,
        /// The window's newest success took less than the minimum duration.
        Suspect,
        /// The history, or a scan cut short, cannot tell (see the check's reason).
        Unknown,
        /// Late, but a run holding its lock now excuses it.
        Running,
        /// A run has held its lock longer than the maximum duration.
        TooLong,
    }
}

record! {
    /// What an acquire says.
    Acquired {
        /// How it ended.
        outcome: AcquireOutcome,
        /// The lease's id while Rust holds it for Java: 0 unless won.
        lease_id: i64,
        /// The lease's fencing token: 0 unless won, or when the server's ACL refuses TIME.
        fencing_token: i64,
        /// The acquire's warning for the log (unconfirmed, an unknown tick, or a keep-alive schedule
        /// that cannot hold for this atMost), or null.
        warning: Warning,
        /// The lock's job (the core's `job_of`), where the call asked for it (a listener hears
        /// the call), else null.
        job: Option<String>,
    }
}

record! {
    /// What a release says.
    Released {
        /// What became of the lock.
        ending: Ending,
        /// Whether the lock was ours from acquisition to release (the core's rule).
        owned_to_the_end: bool,
        /// How long the lock was held, acquisition to release, in milliseconds.
        held_ms: i64,
        /// The ending's warning for the log, or null when the lock was ours to the end.
        warning: Warning,
    }
}

record! {
    /// Who holds a lock, as one round trip read it; the lock unchanged.
    Inspected {
        /// Whether the lock is held.
        held: bool,
        /// How long until it expires, in milliseconds; -1 when held without expiry, or free.
        remaining_ms: i64,
        /// The holder's host, or null (free, or a value dibs did not write).
        host: Option<String>,
        /// The holder's process id; -1 when unknown.
        pid: i64,
        /// When the holder acquired it, Unix ms by its clock; -1 when unknown.
        acquired_at_ms: i64,
    }
}

record! {
    /// One recorded run of a job, from its history.
    Run {
        /// When the release recorded it, Unix ms by the server's clock.
        recorded_at_ms: i64,
        /// The lock's whole name, its tick included.
        lock_name: String,
        /// The host of the instance that ran it.
        host: String,
        /// The process id of the instance that ran it.
        pid: i64,
        /// The conn's instance id, or null.
        instance_id: Option<String>,
        /// When the lock was acquired, Unix ms by the holder's clock.
        started_at_ms: i64,
        /// How long the lock was held, in milliseconds.
        duration_ms: i64,
        /// The run's fencing token.
        fencing_token: i64,
        /// How the run ended, as the history writes it (released, kept, expired, ...).
        ended: String,
        /// How its task ended, as its caller said.
        task: Task,
        /// Who forced its release, or null.
        forced_by: Option<String>,
        /// Its atLeast, in milliseconds.
        at_least_ms: i64,
        /// Whether it was a catch-up's run.
        catch_up: bool,
    }
}

record! {
    /// The last recorded runs of a job or lock, and what they prove.
    History {
        /// The job whose history holds them, or null when nothing matched.
        job: Option<String>,
        /// Since when the history holds every run of the job, Unix ms.
        complete_since_ms: i64,
        /// When the history last evicted a run of any job, Unix ms; -1 for never.
        evicted_at_ms: i64,
        /// When the history last evicted a run of this job, Unix ms; -1 for never.
        job_evicted_at_ms: i64,
        /// The runs, newest first.
        runs: Vec<Run>,
    }
}

record! {
    /// A lock held now, with its holder's token.
    Held {
        /// The lock's name.
        name: String,
        /// The holder's host, or null when the value was not written by dibs.
        host: Option<String>,
        /// The holder's process id; -1 when unknown.
        pid: i64,
        /// When the holder acquired it, Unix ms by its clock; -1 when unknown.
        acquired_at_ms: i64,
        /// How long until it expires, in milliseconds; -1 when it has no expiry.
        remaining_ms: i64,
        /// The holder's token, or null.
        token: Option<String>,
        /// Whether a run holds it (a lock kept for the rest of atLeast, or a tick's done mark, is
        /// held by none).
        running: bool,
    }
}

record! {
    /// A job with a recorded run.
    Recorded {
        /// The job's name.
        job: String,
        /// When its last run was recorded, Unix ms.
        last_recorded_ms: i64,
    }
}

record! {
    /// What a scan of the keyspace found: complete, or cut short by its time budget.
    Listing {
        /// Whether the scan reached the end of the keyspace on every master (when false, another
        /// match may exist).
        complete: bool,
        /// Whether more matched than the limit (the items are then the first of them).
        truncated: bool,
        /// About how many keys the scan looked at.
        scanned: i64,
        /// How many keys there are (summed over the masters).
        keys: i64,
        /// The held locks found (a listing of locks), else empty.
        locks: Vec<Held>,
        /// The jobs found (a listing of jobs), else empty.
        jobs: Vec<Recorded>,
    }
}

record! {
    /// What a check of a job read, and how the core's judge answered it.
    Judged {
        /// How the job stands.
        standing: Standing,
        /// Whether it is proven overdue (a run too long besides changes nothing of it).
        overdue: bool,
        /// Whether its last success is proven shorter than its minimum duration.
        suspect: bool,
        /// Whether a run has held its lock longer than its maximum duration.
        too_long: bool,
        /// Why its standing is unknown, for a person, or null.
        unknown: Warning,
        /// The window a success must fall in, in milliseconds; -1 when none was asked.
        window_ms: i64,
        /// When it was read, Unix ms by this process's clock.
        read_at_ms: i64,
        /// Its last runs (a few), newest first.
        history: History,
        /// Its last success, however far back the history had to be read for it, or null.
        last_success: Option<Run>,
        /// Its own lock, where a run holds it now and the check let that excuse it, or null.
        held: Option<Held>,
        /// The runs holding its locks now, where a rule needed them, or null.
        running: Option<Listing>,
    }
}

codes! {
    /// What a value of a Java `Map` conn is, as `dibs.ConnCache` flattens it into text tokens
    /// (key, the code, the value), and `crate::tokens` reads them.
    ConnToken {
        /// A string (a Clojure keyword too): the value as it is.
        Str,
        /// An integer of any Java width: its decimal text.
        Int,
        /// A boolean: `true` or `false`.
        Bool,
        /// A null: an empty value.
        Null,
        /// A nested map: the number of its entries, whose triples follow.
        Map,
        /// Any other type: its class's name, for the error that names it.
        Other,
    }
}

/// The longest a catch-up looks back (the core's `MAX_CATCH_UP_AGE`), in ms.
#[cfg(test)]
const MAX_CATCH_UP_AGE: java::Limit = java::Limit {
    name: "MAX_CATCH_UP_AGE_MS",
    value: dibs_core::MAX_CATCH_UP_AGE.as_millis() as i64,
    doc: &["The longest a catch-up looks back, in ms: the core's `MAX_CATCH_UP_AGE`."],
};

/// Every declaration, in the order `Border.java` has them.
#[cfg(test)]
pub(crate) const ALL: &[java::Declaration] = &[
    java::Declaration::Codes(&AcquireOutcome::JAVA),
    java::Declaration::Codes(&TickState::JAVA),
    java::Declaration::Codes(&Task::JAVA),
    java::Declaration::Codes(&Ending::JAVA),
    java::Declaration::Codes(&ForcedRelease::JAVA),
    java::Declaration::Codes(&Standing::JAVA),
    java::Declaration::Codes(&ConnToken::JAVA),
    java::Declaration::Limit(&MAX_CATCH_UP_AGE),
    java::Declaration::Record(&Acquired::JAVA),
    java::Declaration::Record(&Released::JAVA),
    java::Declaration::Record(&Inspected::JAVA),
    java::Declaration::Record(&Run::JAVA),
    java::Declaration::Record(&History::JAVA),
    java::Declaration::Record(&Held::JAVA),
    java::Declaration::Record(&Recorded::JAVA),
    java::Declaration::Record(&Listing::JAVA),
    java::Declaration::Record(&Judged::JAVA),
];
