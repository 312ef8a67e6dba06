//! Why a job's standing is unknown, said once for every reader: `dibs check` and the JVM's.

use super::Unproven;
use crate::fleet::History;
use crate::history::{Ended, Run};

/// Why the judge cannot tell how a job stands (see [`super::Judgement::unknown`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unknown<'h> {
    /// The asker's own runs are not recorded: what the history lacks proves nothing.
    Unrecorded,
    /// How this run ended was not seen (its end never recorded, or its task's outcome not told):
    /// it may have succeeded.
    Unseen(&'h Run),
    /// The history holds every run only since then: one of the window may be missing.
    Incomplete { complete_since_unix_ms: u64 },
    /// A rule the runs found holding their locks cannot settle, their scan cut short.
    Unproven(Unproven),
}

impl Unknown<'_> {
    /// The reason in a sentence, for a person; `history` says what was evicted from it.
    pub fn text(&self, history: &History) -> String {
        match self {
            Unknown::Unrecorded => "this instance records no runs (its conn's history is false), \
                so the history cannot prove what it lacks"
                .to_owned(),
            Unknown::Unseen(run) => format!(
                "how its run {} of {} UTC ended is not known ({})",
                run.name,
                utc(run.recorded_at_unix_ms),
                unseen_why(run)
            ),
            Unknown::Incomplete {
                complete_since_unix_ms,
            } => format!(
                "no success of it is recorded, but the history holds every run only since {} UTC{}",
                utc(*complete_since_unix_ms),
                evicted_note(history)
            ),
            Unknown::Unproven(Unproven::Starting) => {
                "it is late, but a run of it that started within its grace after start may be missing"
                    .to_owned()
            }
            Unknown::Unproven(Unproven::TooLong) => "no run of it found has held its lock longer \
                than its maximum duration, but one may be missing"
                .to_owned(),
        }
    }
}

/// Why a run's outcome was not seen.
pub fn unseen_why(run: &Run) -> &'static str {
    if run.ended == Ended::Unended {
        "its end was never recorded: its holder died, or its release failed"
    } else {
        "its task's outcome was not told to dibs"
    }
}

/// The history's last eviction, for a reader who may miss a job's runs because of it; loudest
/// where the runs dropped were this job's own. Empty when it evicted nothing.
pub fn evicted_note(history: &History) -> String {
    match (history.job_evicted_at_unix_ms, history.evicted_at_unix_ms) {
        (Some(at), _) => format!(
            " (its own runs were dropped from the history at {} UTC: more than about {} jobs record \
             in the history under this key prefix, and it was among the least recently run; a job \
             that locks a name per order or tenant can cause this)",
            utc(at),
            crate::HISTORY_JOBS
        ),
        (None, Some(at)) => format!(
            " (the history keeps about {} jobs, and dropped the least recently run one's runs at \
             {} UTC)",
            crate::HISTORY_JOBS,
            utc(at)
        ),
        (None, None) => String::new(),
    }
}

/// `2026-12-02 17:10:52`: a Unix time in ms, in UTC.
pub fn utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}
