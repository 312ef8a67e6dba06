//! The dead-man's switch of `dibs check`: what a name's recorded runs prove about a window of
//! time. A success within the window proves the job ran; no success proves it did not only where
//! the history is complete over the whole window (see [`History::complete_since_unix_ms`]);
//! anywhere else the answer is that the history cannot tell. Further [`Rules`]: a success too
//! short to be trusted, a run that holds its lock too long, and a grace after a run's start.

use std::time::Duration;

use crate::fleet::History;
use crate::history::{HeldLock, Run};

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

impl<'h> Verdict<'h> {
    /// The newest success recorded, within the window or not.
    pub fn last_success(&self) -> Option<&'h Run> {
        match self {
            Verdict::Ran(run) => Some(run),
            Verdict::Overdue { last_success, .. } | Verdict::Unknown { last_success, .. } => {
                *last_success
            }
        }
    }
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

/// The dead-man's switch's further rules: each off when `None`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    /// A success that took less is suspect: it ran, but too briefly to have done its work.
    pub min_duration: Option<Duration>,
    /// A run that has held its lock longer is flagged: running too long (stuck, or slowed).
    pub max_duration: Option<Duration>,
    /// With no success within the window, a run that started less than this ago and runs now is
    /// given the time to finish: the job is running, not overdue.
    pub grace_after_start: Option<Duration>,
}

/// What a history and the runs holding their locks now prove, under [`Rules`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement<'h> {
    /// What the history proves about the window (see [`History::check`]).
    pub verdict: Verdict<'h>,
    /// The window's newest success, when it took less than the minimum duration.
    pub suspect: Option<&'h Run>,
    /// The runs holding their lock for longer than the maximum duration, by the holder's clock.
    pub too_long: Vec<&'h HeldLock>,
    /// With no success within the window: the run that started within the grace after start and
    /// runs now, which excuses the job.
    pub starting: Option<&'h HeldLock>,
    /// The rule whose answer a run missing from a scan cut short could change: then the job's
    /// standing is unknown, never ok, running or overdue on a guess.
    pub unproven: Option<Unproven>,
}

/// A rule that the runs found holding their locks cannot settle, their scan cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unproven {
    /// No run found has held its lock longer than the maximum duration, but one may be missing.
    TooLong,
    /// The job is late and no run found started within the grace after start, but one may be
    /// missing.
    Starting,
}

impl Judgement<'_> {
    /// How the job stands, the worst first: too long, overdue, suspect, unknown, ok (see
    /// [`Standing`]); unknown where a scan cut short leaves a rule unproven.
    pub fn standing(&self) -> Standing {
        // Never with a run too long: `judge` leaves a rule unproven only where none was found.
        if self.unproven.is_some() {
            Standing::Unknown
        } else {
            self.proven_standing()
        }
    }

    /// The standing by what was found, as if every run holding its lock had been.
    fn proven_standing(&self) -> Standing {
        if !self.too_long.is_empty() {
            Standing::TooLong
        } else if self.starting.is_some() {
            Standing::Running
        } else {
            match (&self.verdict, self.suspect) {
                (Verdict::Overdue { .. }, _) => Standing::Overdue,
                (_, Some(_)) => Standing::Suspect,
                (Verdict::Unknown { .. }, None) => Standing::Unknown,
                (Verdict::Ran(_), None) => Standing::Ok,
            }
        }
    }
}

/// How a job stands, one word each, as `dibs check` exits with it and the starter's health
/// says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// A success within the window, long enough; nothing runs too long.
    Ok,
    /// No success within the window, and the history is complete over it.
    Overdue,
    /// The window's newest success took less than the minimum duration.
    Suspect,
    /// No success recorded within the window, and the history cannot prove there was none; or a
    /// rule that the runs found holding their locks cannot settle ([`Unproven`]).
    Unknown,
    /// No success within the window, but a run started within the grace after start runs now.
    Running,
    /// A run has held its lock longer than the maximum duration.
    TooLong,
}

/// The age of a held lock at `now_unix_ms`, by its holder's clock; `None` for a value dibs did
/// not write.
pub fn held_for(lock: &HeldLock, now_unix_ms: u64) -> Option<Duration> {
    let at = lock.state.holder.as_ref()?.acquired_at_unix_ms;
    Some(Duration::from_millis(now_unix_ms.saturating_sub(at)))
}

impl History {
    /// [`History::check`], with the runs of the job holding their locks now (see
    /// [`crate::Locker::running`]), whether `running` holds every one of them (false when their
    /// scan was cut short), and the further rules.
    pub fn judge<'h>(
        &'h self,
        running: &'h [HeldLock],
        all_running: bool,
        now_unix_ms: u64,
        within: Duration,
        rules: &Rules,
    ) -> Judgement<'h> {
        let verdict = self.check(now_unix_ms, within);
        let suspect = match (&verdict, rules.min_duration) {
            (Verdict::Ran(run), Some(min)) if Duration::from_millis(run.duration_ms) < min => {
                Some(*run)
            }
            _ => None,
        };
        let too_long = rules.max_duration.map_or_else(Vec::new, |max| {
            running
                .iter()
                .filter(|lock| held_for(lock, now_unix_ms).is_some_and(|age| age > max))
                .collect()
        });
        let starting = match (&verdict, rules.grace_after_start) {
            (Verdict::Ran(_), _) | (_, None) => None,
            (_, Some(grace)) => running
                .iter()
                .find(|lock| held_for(lock, now_unix_ms).is_some_and(|age| age <= grace)),
        };
        let mut judgement = Judgement {
            verdict,
            suspect,
            too_long,
            starting,
            unproven: None,
        };
        if !all_running {
            // A missing run could only make it worse than ok or running (too long), or excuse
            // its being overdue (started within the grace): a suspect success is proven.
            judgement.unproven = match judgement.proven_standing() {
                Standing::Overdue if rules.grace_after_start.is_some() => Some(Unproven::Starting),
                Standing::Ok | Standing::Running if rules.max_duration.is_some() => {
                    Some(Unproven::TooLong)
                }
                _ => None,
            };
        }
        judgement
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
            job_evicted_at_unix_ms: None,
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

    fn held(name: &str, acquired_at: u64) -> HeldLock {
        HeldLock {
            name: name.into(),
            state: crate::LockState {
                remaining_ms: Some(1_000),
                holder: Some(crate::Holder {
                    host: "h".into(),
                    pid: 1,
                    acquired_at_unix_ms: acquired_at,
                }),
            },
            token: None,
        }
    }

    #[test]
    fn each_rule_has_its_outcome_and_the_worst_wins() {
        let hour = Duration::from_secs(3600);
        let now = 10 * 3_600_000;
        let minute = Duration::from_secs(60);
        let mut quick = run(now - 1_000, TaskResult::Succeeded);
        quick.duration_ms = 200;
        let ok = history(vec![quick], 0);
        let off = Rules::default();
        assert_eq!(
            ok.judge(&[], true, now, hour, &off).standing(),
            Standing::Ok
        );
        let min = Rules {
            min_duration: Some(Duration::from_secs(1)),
            ..off
        };
        assert_eq!(
            ok.judge(&[], true, now, hour, &min).standing(),
            Standing::Suspect
        );
        // Running for 2 minutes: too long past a 1-minute maximum, whatever else holds.
        let running = [held("job", now - 120_000)];
        let max = Rules {
            max_duration: Some(minute),
            ..min
        };
        assert_eq!(
            ok.judge(&running, true, now, hour, &max).standing(),
            Standing::TooLong
        );
        // No success in the window: overdue, unless a run started within the grace runs now.
        let late = history(vec![run(now - 2 * 3_600_000, TaskResult::Succeeded)], 0);
        assert_eq!(
            late.judge(&running, true, now, hour, &off).standing(),
            Standing::Overdue
        );
        let graced = |secs| Rules {
            grace_after_start: Some(Duration::from_secs(secs)),
            ..off
        };
        assert_eq!(
            late.judge(&running, true, now, hour, &graced(300))
                .standing(),
            Standing::Running
        );
        assert_eq!(
            late.judge(&running, true, now, hour, &graced(60))
                .standing(),
            Standing::Overdue
        );
    }

    #[test]
    fn a_scan_cut_short_leaves_unproven_what_a_missing_run_could_change() {
        let hour = Duration::from_secs(3600);
        let now = 10 * 3_600_000;
        let minute = Duration::from_secs(60);
        let ok = history(vec![run(now - 1_000, TaskResult::Succeeded)], 0);
        let late = history(vec![run(now - 2 * 3_600_000, TaskResult::Succeeded)], 0);
        let max = Rules {
            max_duration: Some(minute),
            ..Rules::default()
        };
        let grace = Rules {
            grace_after_start: Some(minute),
            ..Rules::default()
        };
        let judged = |h: &History, running: &[HeldLock], rules: &Rules| {
            let j = h.judge(running, false, now, hour, rules);
            (j.standing(), j.unproven)
        };
        // Ok, but a run too long may be missing.
        assert_eq!(
            judged(&ok, &[], &max),
            (Standing::Unknown, Some(Unproven::TooLong))
        );
        // Overdue, but a run that excuses it may be missing.
        assert_eq!(
            judged(&late, &[], &grace),
            (Standing::Unknown, Some(Unproven::Starting))
        );
        // What was found settles it: a run too long, a run within its grace (as for no rule
        // that needs the runs).
        let long = [held("job", now - 120_000)];
        assert_eq!(judged(&ok, &long, &max), (Standing::TooLong, None));
        let starting = [held("job", now - 1_000)];
        assert_eq!(judged(&late, &starting, &grace), (Standing::Running, None));
        // Running within its grace, but a run too long may be missing.
        let both = Rules {
            max_duration: Some(Duration::from_secs(3600)),
            ..grace
        };
        assert_eq!(
            judged(&late, &starting, &both),
            (Standing::Unknown, Some(Unproven::TooLong))
        );
        assert_eq!(judged(&late, &[], &max), (Standing::Overdue, None));
        assert_eq!(judged(&ok, &[], &Rules::default()), (Standing::Ok, None));
        let min = Rules {
            min_duration: Some(Duration::from_secs(1)),
            ..max
        };
        assert_eq!(judged(&ok, &[], &min), (Standing::Suspect, None));
    }
}
