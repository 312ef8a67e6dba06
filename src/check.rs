//! The dead-man's switch of `dibs check`: what a name's recorded runs prove about a window of
//! time. A success within the window proves the job ran; no success proves it did not only where
//! the history is complete over the whole window (see [`History::complete_since_unix_ms`]);
//! anywhere else the answer is that the history cannot tell.

use std::time::Duration;

use crate::fleet::History;
use crate::history::Run;

/// What a history proves about a window that ends now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict<'h> {
    /// A run succeeded within the window: the newest that did.
    Ran(&'h Run),
    /// No run succeeded within the window, and the history holds every run of it.
    Overdue {
        last_success: Option<&'h Run>,
        latest: Option<&'h Run>,
    },
    /// No success is recorded within the window, but runs of its start may be missing from the
    /// history (trimmed, expired or evicted): whether the job ran cannot be told.
    Unknown {
        last_success: Option<&'h Run>,
        latest: Option<&'h Run>,
        complete_since_unix_ms: u64,
    },
}

impl History {
    /// Whether a run succeeded within `within` before `now_unix_ms`, and what proves it.
    pub fn check(&self, now_unix_ms: u64, within: Duration) -> Verdict<'_> {
        let start =
            now_unix_ms.saturating_sub(u64::try_from(within.as_millis()).unwrap_or(u64::MAX));
        let last_success = self.runs.iter().find(|run| run.succeeded());
        let latest = self.runs.first();
        match last_success {
            Some(run) if run.recorded_at_unix_ms >= start => Verdict::Ran(run),
            _ if start >= self.complete_since_unix_ms => Verdict::Overdue {
                last_success,
                latest,
            },
            _ => Verdict::Unknown {
                last_success,
                latest,
                complete_since_unix_ms: self.complete_since_unix_ms,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::Matched;
    use crate::history::{RunEnded, TaskResult};

    fn run(at: u64, task: TaskResult) -> Run {
        Run {
            recorded_at_unix_ms: at,
            name: "job".into(),
            host: "h".into(),
            pid: 1,
            instance: None,
            started_at_unix_ms: at,
            duration_ms: 0,
            at_least_ms: 0,
            fence: 1,
            ended: RunEnded::Released,
            task: Some(task),
            forced_by: None,
            catch_up: false,
        }
    }

    fn history(runs: Vec<Run>, since: u64) -> History {
        History {
            matched: Matched::Job,
            runs,
            complete_since_unix_ms: since,
            evicted_at_unix_ms: None,
        }
    }

    #[test]
    fn a_success_in_the_window_proves_it_ran_and_its_absence_proves_only_what_is_complete() {
        let hour = Duration::from_secs(3600);
        let now = 10 * 3_600_000;
        let ok = history(vec![run(now - 1_000, TaskResult::Succeeded)], 0);
        assert!(matches!(ok.check(now, hour), Verdict::Ran(_)));
        let old = history(vec![run(now - 2 * 3_600_000, TaskResult::Succeeded)], 0);
        assert!(matches!(old.check(now, hour), Verdict::Overdue { .. }));
        // Complete only for the last 30 minutes: a success of 50 minutes ago may be missing.
        let failed = history(vec![run(now - 1_000, TaskResult::Failed)], now - 1_800_000);
        assert!(matches!(failed.check(now, hour), Verdict::Unknown { .. }));
        assert!(matches!(
            failed.check(now, Duration::from_secs(600)),
            Verdict::Overdue { .. }
        ));
        let nothing = history(vec![], now - 1_800_000);
        assert!(matches!(nothing.check(now, hour), Verdict::Unknown { .. }));
    }
}
