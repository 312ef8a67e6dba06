//! How a locked call ended. Decided here, once, from what the release found and what keep-alive
//! saw; the JNI glue, the CLI and Java's listeners only dispatch it.

use std::fmt;
use std::time::Duration;

use crate::error::Error;

/// How a run ended: what became of its lock. One list for a release's ending and the history's
/// record of it (whose words [`Ended::as_str`] gives), an operator's forced release and a run
/// found still running or never ended included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Ours to the end, and deleted: the task outlived `atLeast`.
    Released,
    /// Ours to the end, and kept for the rest of `atLeast`.
    KeptForAtLeast,
    /// At release the key was gone or someone else's: the lock expired while the task ran, so
    /// another instance may have run it too.
    NoLongerOurs,
    /// Keep-alive found the lock taken while the task ran.
    LostWhileRunning,
    /// The release could not be done; the lock expires by itself within `atMost`. Never
    /// recorded: the history's record is the release's own write.
    ReleaseFailed,
    /// The release's first try lost its reply, and its retry found the key gone or another
    /// holder's: the first try may have released it, or the lock may have expired (and been
    /// taken by another instance) while the task ran. Which cannot be proven without the first
    /// try's record in the history, so it is never told as released.
    Unproven,
    /// Deleted by an operator (`dibs release`, the actuator): only in the history.
    Forced,
    /// Only its start is recorded, and its holder holds its lock now: it runs (the history's).
    Running,
    /// Only its start is recorded, and its lock is gone or another's: its holder died, or its
    /// release failed (the network, a failover). How its task ended is unknown; a tick's
    /// catch-up counts it as run (see `retry-unended-ticks`). The history's.
    Unended,
}

/// The word of a run's start's entry in the history: unended until its lock is looked at.
pub(crate) const STARTED: &str = "started";

impl Ended {
    /// The word the history records.
    pub fn as_str(self) -> &'static str {
        match self {
            Ended::Released => "released",
            Ended::KeptForAtLeast => "kept",
            Ended::NoLongerOurs => "no-longer-ours",
            Ended::LostWhileRunning => "lost",
            Ended::ReleaseFailed => "release-failed",
            Ended::Unproven => "unproven",
            Ended::Forced => "forced",
            Ended::Running => "running",
            Ended::Unended => "unended",
        }
    }

    /// The word in a record; a start's entry reads as unended until its lock is looked at.
    pub(crate) fn parse(s: &str) -> Option<Ended> {
        if s == STARTED {
            return Some(Ended::Unended);
        }
        [
            Ended::Released,
            Ended::KeptForAtLeast,
            Ended::NoLongerOurs,
            Ended::LostWhileRunning,
            Ended::Unproven,
            Ended::Forced,
        ]
        .into_iter()
        .find(|e| e.as_str() == s)
    }

    /// Whether a release that ended so records its run (a failed release cannot).
    pub(crate) fn recorded(self) -> bool {
        self != Ended::ReleaseFailed
    }

    /// Whether the lock was ours from acquisition to release.
    pub fn owned_to_the_end(self) -> bool {
        matches!(self, Ended::Released | Ended::KeptForAtLeast)
    }
}

impl fmt::Display for Ended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The ending of one call: what became of the lock, and the facts its warning names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    /// The lock's name.
    pub name: String,
    pub ended: Ended,
    /// For a lock kept for the rest of `atLeast`: how long, in ms.
    pub kept_ms: Option<u64>,
    /// For a release that failed: why.
    pub failure: Option<Error>,
    /// From the `SET` reply to the release, on a monotonic clock.
    pub elapsed: Duration,
    pub at_most: Duration,
    /// For a call that went well but is set up to go wrong: said as its warning, once per job
    /// (see [`per_tick_advice`]).
    pub advice: Option<String>,
}

impl Ending {
    /// Whether the lock was ours from acquisition to release.
    pub fn owned_to_the_end(&self) -> bool {
        self.ended.owned_to_the_end()
    }

    /// The warning an operator should see, or `None` when all went well.
    pub fn warning(&self) -> Option<String> {
        let name = &self.name;
        let held = self.elapsed.as_millis();
        let at_most = Millis(self.at_most);
        match self.ended {
            Ended::Released | Ended::KeptForAtLeast => self.advice.clone(),
            Ended::NoLongerOurs => Some(format!(
                "lock '{name}' was no longer ours when it was released, {held} ms after it was \
                 acquired (atMost {at_most}): it expired while the task ran, so another instance \
                 may have run concurrently. Raise atMost above the task's longest run, or use \
                 keep-alive."
            )),
            Ended::LostWhileRunning => Some(format!(
                "lock '{name}' was taken by another holder while the task ran (keep-alive \
                 noticed; the task ran {held} ms in all): another instance may have run \
                 concurrently."
            )),
            Ended::ReleaseFailed => Some(format!(
                "release of lock '{name}' failed: {} (the lock expires by itself at most \
                 {at_most} after it was acquired)",
                self.failure
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), ToString::to_string)
            )),
            Ended::Unproven => Some(format!(
                "lock '{name}' is gone, {held} ms after it was acquired (atMost {at_most}), but \
                 whether it was ours to the end cannot be proven: the release's reply was lost \
                 (a dropped connection, a Redis restart), and its retry found the key gone or \
                 another holder's: the first try may have released it, or it may have expired \
                 while the task ran, so another instance may have run concurrently."
            )),
            // Not a release's: a release never ends so.
            Ended::Forced | Ended::Running | Ended::Unended => None,
        }
    }
}

/// A task this quick, released at once, is done before a scheduler that fires a little later asks.
const QUICK: Duration = Duration::from_secs(1);

/// The advice for a lock whose name says which tick it is, released at once (`atLeast` 0, a
/// quick task): an instance whose scheduler fires a few milliseconds later takes the fresh lock
/// and runs the same tick again (6 ticks in 10 did, in a user's Boot service of 3 instances).
/// Once per job in the process.
pub(crate) fn per_tick_advice(name: &str, at_least_ms: u64, elapsed: Duration) -> Option<String> {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static ADVISED: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    if at_least_ms > 0 || elapsed >= QUICK {
        return None;
    }
    let (job, tick) = crate::job::split_tick(name)?;
    let mut advised = ADVISED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    // Bounded: a process with more jobs than this has heard the advice by then.
    if advised.len() >= 1024 || !advised.insert(job.to_owned()) {
        return None;
    }
    Some(format!(
        "lock '{name}' names a tick of job '{job}', and atLeast 0 released it {} ms after it was \
         acquired: an instance whose scheduler fires a little later takes it afresh and runs the \
         same tick again. Say which tick it is instead: executeOnce(\"{job}\", \"{tick}\", atMost, \
         task) runs it at most once across instances; or give atLeast the schedulers' skew. \
         (Said once per job.)",
        elapsed.as_millis()
    ))
}

/// A duration as "10 s" when whole seconds, else "1500 ms".
struct Millis(Duration);

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        if ms.is_multiple_of(1000) {
            write!(f, "{} s", ms / 1000)
        } else {
            write!(f, "{ms} ms")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ending(ended: Ended) -> Ending {
        Ending {
            name: "n".to_owned(),
            ended,
            kept_ms: None,
            failure: None,
            elapsed: Duration::from_millis(1234),
            at_most: Duration::from_secs(10),
            advice: None,
        }
    }

    #[test]
    fn only_a_lock_owned_to_the_end_is_quiet() {
        assert_eq!(ending(Ended::Released).warning(), None);
        assert_eq!(ending(Ended::KeptForAtLeast).warning(), None);
        let gone = ending(Ended::NoLongerOurs).warning().unwrap();
        assert!(
            gone.contains("no longer ours")
                && gone.contains("1234 ms")
                && gone.contains("atMost 10 s")
        );
        let lost = ending(Ended::LostWhileRunning).warning().unwrap();
        assert!(lost.contains("taken by another holder"));
        let mut failed = ending(Ended::ReleaseFailed);
        failed.failure = Some(Error::Timeout("x: no answer".into()));
        let failed = failed.warning().unwrap();
        assert!(failed.contains("release of lock 'n' failed: x: no answer"));
        assert!(!ending(Ended::LostWhileRunning).owned_to_the_end());
        let unproven = ending(Ended::Unproven);
        assert!(
            !unproven.owned_to_the_end(),
            "an unproven ending is never told as released"
        );
        assert!(unproven.warning().unwrap().contains("cannot be proven"));
    }

    #[test]
    fn a_per_tick_name_released_at_once_is_advised_once_per_job() {
        let quick = Duration::from_millis(3);
        let advice = per_tick_advice("advised-2026-12-01", 0, quick).expect("advice");
        assert!(
            advice.contains(r#"executeOnce("advised", "2026-12-01", atMost, task)"#),
            "{advice}"
        );
        assert_eq!(
            per_tick_advice("advised-2026-12-02", 0, quick),
            None,
            "once per job"
        );
        assert_eq!(
            per_tick_advice("held-2026-12-01", 1500, quick),
            None,
            "atLeast covers it"
        );
        assert_eq!(
            per_tick_advice("slow-2026-12-01", 0, Duration::from_secs(2)),
            None,
            "not quick"
        );
        assert_eq!(per_tick_advice("shard-7", 0, quick), None, "no tick");
        let mut e = ending(Ended::Released);
        e.advice = Some("advice".into());
        assert_eq!(e.warning().as_deref(), Some("advice"));
        assert!(e.owned_to_the_end(), "advice changes no ending");
    }

    #[test]
    fn at_most_reads_in_the_unit_it_was_given() {
        let mut e = ending(Ended::NoLongerOurs);
        e.at_most = Duration::from_millis(1500);
        assert!(e.warning().unwrap().contains("atMost 1500 ms"));
    }
}
