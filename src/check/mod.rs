//! The dead-man's switch, the one judge of a job's health: what its recorded runs, and the runs
//! holding its locks now, prove about a window that ends now. `dibs check` and the starter's job
//! health (through the JVM's `DibsClient.check`) ask it the same [`Question`] and get the same
//! answer.
//!
//! A success within the window proves the job ran; no success proves it did not only where the
//! history is complete over the whole window (see [`History::complete_since_unix_ms`]); anywhere
//! else the answer is that the history cannot tell. A success counts from when its lock was free
//! for the next run: for a run of the name asked, the end of what was left of its atLeast (the
//! lock was kept that long), else its release. Further [`Rules`]: a success too short to be
//! trusted, a run that holds its lock too long, and a grace after a run's start.

mod read;
#[cfg(test)]
mod tests;
mod why;

use std::time::Duration;

use crate::error::{Error, Result};
use crate::fleet::History;
use crate::history::{Ended, HeldLock, Run};

pub use read::{Checked, RUNS_SHOWN};
pub use why::{evicted_note, unseen_why, utc, Unknown};

/// What is asked of a job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Question {
    /// The window a success must fall in; `None` asks no dead-man's switch, only the [`Rules`].
    pub within: Option<Duration>,
    pub rules: Rules,
    /// With no success recorded, the window counts from here (when the asker began to expect the
    /// job), not before: a job not expected for a whole window yet is not late.
    pub expected_since_unix_ms: Option<u64>,
    /// A run holding the job's own lock now excuses its lateness, however long it has run (a job
    /// expected from its schedule is not late while a run outlasts its period). A grace after
    /// start, where set, decides instead.
    pub held_excuses: bool,
    /// The asker's own runs are not recorded (its conn's `history` is off): an absence in the
    /// history then proves nothing, neither a job late nor a success the last.
    pub runs_unrecorded: bool,
}

impl Question {
    /// Checks every duration asked, before any I/O: each more than 0.
    pub fn validate(&self) -> Result<()> {
        let rules = &self.rules;
        for (arg, value) in [
            ("within", self.within),
            ("minDuration", rules.min_duration),
            ("maxDuration", rules.max_duration),
            ("graceAfterStart", rules.grace_after_start),
        ] {
            positive(arg, value)?;
        }
        if let (Some(min), Some(max)) = (rules.min_duration, rules.max_duration) {
            if min > max {
                return Err(Error::invalid(
                    "minDuration",
                    "minDuration must not exceed maxDuration: no run could pass both",
                ));
            }
        }
        if self.within.is_none() && self.expected_since_unix_ms.is_some() {
            return Err(Error::invalid(
                "expectedSince",
                "expectedSince needs a window: without one, nothing is due",
            ));
        }
        Ok(())
    }
}

fn positive(arg: &'static str, value: Option<Duration>) -> Result<()> {
    match value {
        Some(d) if d.is_zero() => Err(Error::invalid(arg, format!("{arg} must be more than 0"))),
        _ => Ok(()),
    }
}

/// The window asked: `within`, or that of a job expected `every` period with its `grace` (see
/// [`expected_window`]), or none. A grace without a period, or both a window and a period, is
/// refused naming it.
pub fn window(
    within: Option<Duration>,
    every: Option<Duration>,
    grace: Option<Duration>,
) -> Result<Option<Duration>> {
    match (within, every, grace) {
        (Some(_), Some(_), _) => Err(Error::invalid(
            "within",
            "within and every both give the window: give one",
        )),
        (_, None, Some(_)) => Err(Error::invalid(
            "grace",
            "grace is the grace of a job expected every period: give the period, or widen the window",
        )),
        (_, Some(period), grace) => expected_window(period, grace).map(Some),
        (within, None, None) => Ok(within),
    }
}

/// The window of a job expected every `period`: it is late after the period and a grace,
/// `grace`, or by default half the period, at most an hour.
pub fn expected_window(period: Duration, grace: Option<Duration>) -> Result<Duration> {
    positive("period", Some(period))?;
    let grace = grace.unwrap_or_else(|| (period / 2).min(Duration::from_secs(3600)));
    Ok(period.saturating_add(grace))
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

impl Rules {
    /// Whether a rule needs the runs holding the job's locks now (a scan).
    pub fn need_running(&self) -> bool {
        self.max_duration.is_some() || self.grace_after_start.is_some()
    }
}

/// What a history proves about a window that ends now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict<'h> {
    /// A run succeeded within the window: the newest that did.
    Ran(&'h Run),
    /// No success is recorded, but the window has not passed since the asker began to expect the
    /// job ([`Question::expected_since_unix_ms`]): it is not late yet.
    Awaited { latest: Option<&'h Run> },
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
    /// No window was asked: only the further rules judge.
    Unwatched { last_success: Option<&'h Run> },
}

impl<'h> Verdict<'h> {
    /// The newest success recorded, within the window or not.
    pub fn last_success(&self) -> Option<&'h Run> {
        match self {
            Verdict::Ran(run) => Some(run),
            Verdict::Awaited { .. } => None,
            Verdict::Overdue { last_success, .. }
            | Verdict::Unknown { last_success, .. }
            | Verdict::Unwatched { last_success } => *last_success,
        }
    }

    /// Whether the job is late: no success within the window, and not awaited.
    pub fn late(&self) -> bool {
        matches!(self, Verdict::Overdue { .. } | Verdict::Unknown { .. })
    }
}

/// When a run's lock was free for the next run of `name`: at its release, or, for a run of that
/// very lock, at the end of what was left of its atLeast (kept after the release; the server's
/// clock throughout).
pub fn free_since(run: &Run, name: &str) -> u64 {
    let kept = if run.name == name {
        run.at_least_ms.saturating_sub(run.duration_ms)
    } else {
        0 // a per-tick name: the next tick's lock is another one
    };
    run.recorded_at_unix_ms.saturating_add(kept)
}

impl History {
    /// What this history of `name` proves about `question`'s window, ending at `now_unix_ms`.
    pub fn verdict(&self, name: &str, now_unix_ms: u64, question: &Question) -> Verdict<'_> {
        let last_success = self.runs.iter().find(|run| run.succeeded());
        let latest = self.runs.first();
        let Some(within) = question.within else {
            return Verdict::Unwatched { last_success };
        };
        let start =
            now_unix_ms.saturating_sub(u64::try_from(within.as_millis()).unwrap_or(u64::MAX));
        match (last_success, question.expected_since_unix_ms) {
            (Some(run), _) if self.lock_free_since(run, name) >= start => Verdict::Ran(run),
            (None, Some(since)) if since >= start => Verdict::Awaited { latest },
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

    /// When the lock of `run` was free for the next run of `name` (see [`free_since`]), or
    /// sooner, where an operator forced a later release of it.
    fn lock_free_since(&self, run: &Run, name: &str) -> u64 {
        let kept = free_since(run, name);
        self.newer_than(run)
            .filter(|r| r.ended == Ended::Forced && r.name == run.name)
            .map(|r| r.recorded_at_unix_ms.max(run.recorded_at_unix_ms))
            .fold(kept, u64::min)
    }

    /// The runs recorded after `run`, one of these runs.
    fn newer_than<'a>(&'a self, run: &'a Run) -> impl Iterator<Item = &'a Run> {
        self.runs.iter().take_while(move |r| !std::ptr::eq(*r, run))
    }

    /// The newest run whose outcome dibs did not see, where the history cannot tell past it
    /// (see [`History::complete_since_unix_ms`]): it may have succeeded.
    pub fn unseen(&self) -> Option<&Run> {
        self.runs.iter().find(|run| {
            run.outcome_unknown() && run.recorded_at_unix_ms + 1 == self.complete_since_unix_ms
        })
    }
}

/// What a job's history and the runs holding its locks now prove, under a [`Question`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement<'h> {
    /// What the history proves about the window (see [`History::verdict`]).
    pub verdict: Verdict<'h>,
    /// The newest success, when it took less than the minimum duration (for a window, only a
    /// success within it).
    pub suspect: Option<&'h Run>,
    /// The runs holding their lock for longer than the maximum duration, by the holder's clock.
    pub too_long: Vec<&'h HeldLock>,
    /// With the job late: the run holding its lock now that excuses it, started within the grace
    /// after start (or, where [`Question::held_excuses`], holding the job's own lock).
    pub excused_by: Option<&'h HeldLock>,
    /// The rule whose answer a run missing from a scan cut short could change: then the job's
    /// standing is unknown, never ok, running or overdue on a guess.
    pub unproven: Option<Unproven>,
    /// The asker's own runs are not recorded, and the answer rests on the history's absence of
    /// one (the job late, or its last success suspect): unknown.
    pub unrecorded: bool,
    /// A run after a suspect success whose outcome dibs did not see: it may have been a success
    /// long enough, so the suspect one is not proven the last: unknown.
    pub unseen_after: Option<&'h Run>,
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

impl<'h> Judgement<'h> {
    /// How the job stands, the worst first: too long, overdue, suspect, unknown, ok (see
    /// [`Standing`]); unknown where a scan cut short leaves a rule unproven, or where the asker's
    /// runs are not recorded and the answer rests on their absence.
    pub fn standing(&self) -> Standing {
        // Never with a run too long: `judge` leaves a rule unproven only where none was found.
        let unknown = self.unrecorded || self.unseen_after.is_some();
        if self.unproven.is_some() || (unknown && self.too_long.is_empty()) {
            Standing::Unknown
        } else {
            self.proven_standing()
        }
    }

    /// The standing by what was found, as if every run holding its lock had been, and the
    /// asker's runs recorded.
    fn proven_standing(&self) -> Standing {
        if !self.too_long.is_empty() {
            Standing::TooLong
        } else if self.excused_by.is_some() {
            Standing::Running
        } else {
            match (&self.verdict, self.suspect) {
                (Verdict::Overdue { .. }, _) => Standing::Overdue,
                (_, Some(_)) => Standing::Suspect,
                (Verdict::Unknown { .. }, None) => Standing::Unknown,
                (_, None) => Standing::Ok,
            }
        }
    }

    /// Whether the job is proven overdue (a run too long besides changes nothing of it).
    pub fn overdue(&self) -> bool {
        matches!(self.verdict, Verdict::Overdue { .. })
            && self.excused_by.is_none()
            && self.unproven.is_none()
            && !self.unrecorded
    }

    /// Its last success, proven too short: none where a later one may be missing.
    pub fn proven_suspect(&self) -> Option<&'h Run> {
        self.suspect
            .filter(|_| !self.unrecorded && self.unseen_after.is_none())
    }

    /// Why the job's standing is unknown, where something is: the first of the asker's runs not
    /// recorded, a history that cannot tell, a rule a scan cut short leaves unproven.
    pub fn unknown(&self, history: &'h History) -> Option<Unknown<'h>> {
        if self.unrecorded {
            return Some(Unknown::Unrecorded);
        }
        if let Some(run) = self.unseen_after {
            return Some(Unknown::Unseen(run));
        }
        if let (Verdict::Unknown { .. }, None) = (&self.verdict, self.excused_by) {
            return Some(match history.unseen() {
                Some(run) => Unknown::Unseen(run),
                None => Unknown::Incomplete {
                    complete_since_unix_ms: history.complete_since_unix_ms,
                },
            });
        }
        self.unproven.map(Unknown::Unproven)
    }
}

/// How a job stands, one word each, as `dibs check` exits with it and the starter's health
/// says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// A success within the window, long enough (or none asked, or none due yet); nothing runs
    /// too long.
    Ok,
    /// No success within the window, and the history is complete over it.
    Overdue,
    /// The window's newest success took less than the minimum duration.
    Suspect,
    /// No success recorded within the window, and the history cannot prove there was none; or a
    /// rule that the runs found holding their locks cannot settle ([`Unproven`]); or an answer
    /// that rests on the absence of the asker's own runs, not recorded.
    Unknown,
    /// No success within the window, but a run holding its lock now excuses it.
    Running,
    /// A run has held its lock longer than the maximum duration.
    TooLong,
}

/// The age of a held lock at `now_unix_ms`, by its holder's clock; `None` for a value dibs did
/// not write, or one acquired further in the future than clocks may differ ([`crate::CLOCK_SKEW`]):
/// its age cannot be told.
pub fn held_for(lock: &HeldLock, now_unix_ms: u64) -> Option<Duration> {
    let at = lock.state.holder.as_ref()?.acquired_at_unix_ms;
    let skew = u64::try_from(crate::CLOCK_SKEW.as_millis()).unwrap_or(u64::MAX);
    (at <= now_unix_ms.saturating_add(skew))
        .then(|| Duration::from_millis(now_unix_ms.saturating_sub(at)))
}

/// Whether a run holds `lock` whose age cannot be told (its holder's clock far ahead).
fn age_unknown(lock: &HeldLock, now_unix_ms: u64) -> bool {
    lock.state.holder.is_some() && held_for(lock, now_unix_ms).is_none()
}

/// Judges what was read of the job `name`: its history, the runs holding its locks now
/// (`running`, all of them unless their scan was cut short), and its own lock where a run holds
/// it (`held`).
pub(crate) fn judge<'h>(
    name: &str,
    history: &'h History,
    running: &'h [HeldLock],
    all_running: bool,
    held: Option<&'h HeldLock>,
    now_unix_ms: u64,
    question: &Question,
) -> Judgement<'h> {
    let rules = &question.rules;
    let verdict = history.verdict(name, now_unix_ms, question);
    let suspect = match (&verdict, rules.min_duration) {
        (Verdict::Ran(run), Some(min))
        | (
            Verdict::Unwatched {
                last_success: Some(run),
            },
            Some(min),
        ) if Duration::from_millis(run.duration_ms) < min => Some(*run),
        _ => None,
    };
    let too_long = rules.max_duration.map_or_else(Vec::new, |max| {
        running
            .iter()
            .filter(|lock| held_for(lock, now_unix_ms).is_some_and(|age| age > max))
            .collect()
    });
    let excused_by = match rules.grace_after_start {
        _ if !verdict.late() => None,
        Some(grace) => running
            .iter()
            .find(|lock| held_for(lock, now_unix_ms).is_some_and(|age| age <= grace)),
        None if question.held_excuses => held,
        None => None,
    };
    let unrecorded =
        question.runs_unrecorded && ((verdict.late() && excused_by.is_none()) || suspect.is_some());
    let unseen_after =
        suspect.and_then(|success| history.newer_than(success).find(|r| r.outcome_unknown()));
    // A run whose age cannot be told is as one a scan missed: it may run too long, or have
    // started within the grace.
    let all_running = all_running && !running.iter().any(|l| age_unknown(l, now_unix_ms));
    let mut judgement = Judgement {
        verdict,
        suspect,
        too_long,
        excused_by,
        unproven: None,
        unrecorded,
        unseen_after,
    };
    if !all_running && !unrecorded {
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
