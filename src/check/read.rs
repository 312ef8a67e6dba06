//! What a check reads of a job, and the judgement of it: the one read `dibs check` and the JVM's
//! `DibsClient.check` make.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{judge, Judgement, Question, Unknown};
use crate::error::Result;
use crate::fleet::{History, Listing, Matched};
use crate::history::{HeldLock, HISTORY_LENGTH};
use crate::lock::Locker;

/// The runs a check reads first: a job's last few, to show, and its last success if one of them
/// is. Where none is, the check reads the whole history for it.
pub const RUNS_SHOWN: usize = 5;

/// What a check read of a name, at one time; [`Checked::judgement`] judges it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// The job, or the lock, checked.
    pub name: String,
    pub question: Question,
    /// When it was read, Unix ms by this process's clock.
    pub now_unix_ms: u64,
    /// Its last [`RUNS_SHOWN`] runs, or its whole history where none of those succeeded.
    pub history: History,
    /// The runs holding its locks now, where a rule needs them: a job's from a scan (see
    /// [`Locker::running`]), a lock's own.
    pub running: Option<Listing<HeldLock>>,
    /// The job's own lock, where the question lets a run holding it excuse the job and a run
    /// holds it now.
    pub held: Option<HeldLock>,
}

impl Checked {
    /// The judgement of what was read.
    pub fn judgement(&self) -> Judgement<'_> {
        let (running, all_running) = match &self.running {
            Some(found) => (found.items.as_slice(), found.complete),
            None => (&[][..], true),
        };
        judge(
            &self.name,
            &self.history,
            running,
            all_running,
            self.held.as_ref(),
            self.now_unix_ms,
            &self.question,
        )
    }

    /// Why the job's standing is unknown, for a person, where it is; with how far the scan for
    /// its running locks got where it was cut short.
    pub fn unknown_text(&self) -> Option<String> {
        let judgement = self.judgement();
        let why: Unknown = judgement.unknown(&self.history)?;
        let mut text = why.text(&self.history);
        if let Some(found) = self.running.as_ref().filter(|r| !r.complete) {
            text.push_str(&format!(
                "; the scan for its running locks was partial: scanned about {} of {} keys",
                found.scanned, found.keys
            ));
        }
        Some(text)
    }
}

impl Locker {
    /// Reads what [`Checked::judgement`] needs to answer `question` of the job or lock `name`:
    /// its last runs (one round trip; the whole history where none of them succeeded: a second),
    /// the runs holding its locks where a rule needs them (a scan within `budget`, or for a lock
    /// its own: one), and its own lock where [`Question::held_excuses`] (from that scan, or one
    /// round trip).
    pub fn check(&self, name: &str, question: &Question, budget: Duration) -> Result<Checked> {
        question.validate()?;
        crate::fleet::validate_budget(budget)?;
        let now_unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        if question
            .expected_since_unix_ms
            .is_some_and(|since| since > now_unix_ms)
        {
            return Err(crate::error::Error::invalid(
                "expectedSince",
                "expectedSince must not be in the future",
            ));
        }
        let mut history = self.history(name, RUNS_SHOWN)?;
        if !history.runs.iter().any(|r| r.succeeded()) {
            // None of its last few entries is a success: its last success, if any, lies
            // further back.
            history = self.history(name, HISTORY_LENGTH as usize)?;
        }
        let running = if !question.rules.need_running() {
            None
        } else if let Matched::Lock { .. } = history.matched {
            Some(self.own_lock(name)?)
        } else {
            Some(self.running(name, budget)?)
        };
        let held = match &running {
            _ if !question.held_excuses => None,
            Some(found) if found.complete => found.items.iter().find(|l| l.name == name).cloned(),
            _ => self.held_lock(name)?.filter(HeldLock::is_running),
        };
        Ok(Checked {
            name: name.to_owned(),
            question: *question,
            now_unix_ms,
            history,
            running,
            held,
        })
    }

    /// The lock `name` as a listing of the one run holding it, if one does.
    fn own_lock(&self, name: &str) -> Result<Listing<HeldLock>> {
        let held = self.held_lock(name)?.filter(HeldLock::is_running);
        Ok(Listing {
            items: held.into_iter().collect(),
            complete: true,
            truncated: false,
            scanned: 1,
            keys: 1,
        })
    }
}
