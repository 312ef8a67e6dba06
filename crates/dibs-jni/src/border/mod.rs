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
#[cfg(test)]
mod java;

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

/// Every declaration, in the order `Border.java` has them.
#[cfg(test)]
pub(crate) const ALL: &[java::Declaration] = &[
    java::Declaration::Codes(&AcquireOutcome::JAVA),
    java::Declaration::Codes(&TickState::JAVA),
    java::Declaration::Codes(&Task::JAVA),
    java::Declaration::Codes(&Ending::JAVA),
    java::Declaration::Record(&Acquired::JAVA),
    java::Declaration::Record(&Released::JAVA),
];
