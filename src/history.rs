//! The run history: who ran each job, when, and how it ended, fleet-wide, in Redis.
//!
//! Each release records its run as one entry of its job's stream, inside the release script
//! itself (`script::RELEASE`): no extra round trip, and the entry cannot disagree with what the
//! release did. On a Redis Cluster the stream lives in another slot than the lock, so the record
//! follows the release's reply as a second command (`script::RECORD`). Memory is bounded three
//! times over:
//! - names made per tick (`report-2026-12-01`) roll up under their job ([`crate::job_of`]), so
//!   a job has one stream, however many ticks it runs; each stream keeps about
//!   [`HISTORY_LENGTH`] entries (`XADD MAXLEN ~`);
//! - every stream expires [`HISTORY_TTL`] after its last entry;
//! - at most about [`HISTORY_JOBS`] jobs keep a stream: the new stream of a job beyond them
//!   drops the stream of a job that has run once (a lock per order or tenant), the least
//!   recently recorded first, and only when no such job is left the stream of the job recorded
//!   least recently: so a flood of one-off names cannot erase the proof of a job that recurs (a
//!   job of ticks counts as recurring from its first run). Each eviction leaves a mark (for
//!   [`HISTORY_TTL`]), with the job's name, so that a reader never takes a dropped history for a
//!   job that never ran, and says whose it was; the run whose record dropped a recurring job's
//!   history warns. Only the creation of a stream pays for this: the index of jobs is touched
//!   then alone.
//!
//! The keys, under the spec's key prefix and a unit separator (U+001F), with the hash tag
//! `{history}` so that a Cluster keeps them in one slot together: `{history}:JOB` a job's stream,
//! `{history}` the index of jobs (a sorted set: job, last known record in Unix ms),
//! `{history}` U+001F `once` those of them admitted with one run (the same scores; a job found
//! with more runs when an eviction looks at it leaves it), `{history}` U+001F `evicted` the last
//! eviction's mark (its Unix ms), and `{history}` U+001F `evicted-jobs` the jobs evicted. Neither lock names nor key
//! prefixes may hold a control character, so no lock key can ever be a history key.
//!
//! An entry is one field, `run`: `ended;task;ms;least;fence;start;pid;host;instance;by;name`
//! (`least` is the run's atLeast, in ms), the name last since it alone may hold a `;`. The
//! `task` of a catch-up's run ends in `+catch-up` (`ok+catch-up`).
//!
//! A tick's run has an entry from its start, `started;unknown;0;least;fence;start;...;name`,
//! written with its acquire (`script::TICK_ACQUIRE`) and deleted when its ending's entry is
//! written: an entry of a start alone is a run that runs now ([`Ended::Running`], while its
//! holder's lock is there), or one whose end was never recorded ([`Ended::Unended`]: its
//! holder died, or its release failed).

use std::time::Duration;

pub use crate::ending::Ended;

/// Entries kept per job, about (`XADD MAXLEN ~` trims whole nodes of the stream, so a few more
/// may stay).
pub const HISTORY_LENGTH: u32 = crate::script::history_length!();

/// How long a job's history outlives its last entry: longer than a monthly job's period, so that
/// `dibs check report --within 32d` still finds last month's run.
pub const HISTORY_TTL: Duration = Duration::from_secs(40 * 24 * 3600);

/// The jobs that keep a history, about, under one key prefix (the release script's `CAP`).
pub const HISTORY_JOBS: usize = crate::script::history_jobs!();

/// Where a job's stream key starts, after the key prefix.
const STREAM: &str = "\u{1f}{history}:";

/// The stream of a job's runs.
pub(crate) fn stream_key(prefix: &str, job: &str) -> String {
    [prefix, STREAM, job].concat()
}

/// The index of the jobs that keep a stream under `prefix`.
pub(crate) fn index_key(prefix: &str) -> String {
    [prefix, "\u{1f}{history}"].concat()
}

/// The mark of the last eviction of a job's stream under `prefix`.
pub(crate) fn evicted_key(prefix: &str) -> String {
    [prefix, "\u{1f}{history}\u{1f}evicted"].concat()
}

/// The jobs whose streams were dropped to stay within [`HISTORY_JOBS`] under `prefix`: a sorted
/// set, each job scored with when (Unix ms), the last [`HISTORY_JOBS`] kept. The history's Lua
/// derives it from [`evicted_key`] alike.
pub(crate) fn evicted_jobs_key(prefix: &str) -> String {
    [prefix, "\u{1f}{history}\u{1f}evicted-jobs"].concat()
}

/// The `SCAN` glob of every job's stream under `prefix`.
pub(crate) fn stream_glob(prefix: &str) -> String {
    let mut glob = escape_glob(prefix);
    glob.push_str(STREAM);
    glob.push('*');
    glob
}

/// `text` as a Redis glob that matches only itself.
pub(crate) fn escape_glob(text: &str) -> String {
    let mut glob = String::with_capacity(text.len() + 4);
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            glob.push('\\');
        }
        glob.push(c);
    }
    glob
}

/// The job of a stream's key under `prefix`.
pub(crate) fn job_of_key<'k>(prefix: &str, key: &'k str) -> Option<&'k str> {
    key.strip_prefix(prefix)?.strip_prefix(STREAM)
}

/// Who ran a run, as its record ends: `;start;pid;host;instance;;name` (see the module docs),
/// the part after the fencing token.
pub(crate) fn record_tail(
    start: &str,
    pid: &str,
    host: &str,
    instance: &str,
    name: &str,
) -> String {
    format!(";{start};{pid};{host};{instance};;{name}")
}

/// A run's record after its ending, as the release script stores it (see the module docs).
pub(crate) fn record(task: &str, ms: u64, least: u64, fence: u64, tail: &str) -> String {
    format!("{task};{ms};{least};{fence}{tail}")
}

/// A run's start's entry before its fencing token (which the acquire's script mints), after the
/// word `started`: its task unknown, no duration yet.
pub(crate) fn started_head(least: u64, catch_up: bool) -> String {
    format!("{};0;{least};", task_field(TaskResult::Unknown, catch_up))
}

/// The record's `task` field: how the task ended, and `+catch-up` for a run of a tick that
/// catch-up found missed. A reader that knows no `+` reads it as no task result, not a wrong one.
pub(crate) fn task_field(task: TaskResult, catch_up: bool) -> String {
    if catch_up {
        [task.as_str(), CATCH_UP_MARK].concat()
    } else {
        task.as_str().to_owned()
    }
}

/// What the `task` field of a catch-up's run ends in.
const CATCH_UP_MARK: &str = "+catch-up";

/// Who forced a release, as a record field: no `;` in it.
/// The longest label of [`is_label`]: an instance id, who forced a release.
pub(crate) const MAX_LABEL_BYTES: usize = 128;

/// Whether `text` may name who did something in a run's record (an instance id, who forced a
/// release): 1 to `max` bytes, without `;` (which would split the record into other fields) or
/// control characters, so that a record always reads back as written.
pub(crate) fn is_label(text: &str, max: usize) -> bool {
    !text.is_empty() && text.len() <= max && !text.chars().any(|c| c.is_control() || c == ';')
}

/// Whether a key under `prefix` is one of the history's, not a lock.
pub(crate) fn is_history_key(prefix: &str, key: &str) -> bool {
    key.strip_prefix(prefix)
        .is_some_and(|rest| rest.starts_with('\u{1f}'))
}

/// How the task of a recorded run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskResult {
    Succeeded,
    /// It threw, panicked, or (for `dibs run`) exited non-zero.
    Failed,
    /// dibs did not see how it ended: a lock released by a caller that did not say (ShedLock's
    /// bare `LockProvider`, `DibsLease.release()`), or a run whose end was never recorded.
    Unknown,
}

impl TaskResult {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TaskResult::Succeeded => "ok",
            TaskResult::Failed => "failed",
            TaskResult::Unknown => "unknown",
        }
    }
}

/// One recorded run of a job (or an operator's forced release of its lock).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// When the release recorded it, by the server's clock (the stream entry's id).
    pub recorded_at_unix_ms: u64,
    /// The lock's whole name (`report-2026-12-01`).
    pub name: String,
    pub host: String,
    pub pid: u32,
    /// The `instance-id` of the spec that ran it, if it had one.
    pub instance: Option<String>,
    /// When the lock was acquired, by the holder's clock.
    pub started_at_unix_ms: u64,
    /// From acquisition to release; 0 for a forced release.
    pub duration_ms: u64,
    /// The run's atLeast: its lock stayed taken at least that long from acquisition, so the
    /// next run of the same name could not start before; 0 for a forced release.
    pub at_least_ms: u64,
    /// The fencing token; 0 for a forced release.
    pub fence: u64,
    pub ended: Ended,
    /// `None` for a forced release, whose task is not known.
    pub task: Option<TaskResult>,
    /// Who forced the release (`user@host`), for a forced one.
    pub forced_by: Option<String>,
    /// A run of a tick that catch-up found missed ([`crate::Locker::acquire_unrun`]).
    pub catch_up: bool,
}

impl Run {
    /// Whether this run counts as the job having run: its task ran to success (a forced
    /// release is no run).
    pub fn succeeded(&self) -> bool {
        self.task == Some(TaskResult::Succeeded)
    }

    /// Whether this run may have succeeded without the history saying so: its task's ending
    /// unseen by dibs, or its end never recorded. A run that runs now is not one: it has not
    /// succeeded yet.
    pub fn outcome_unknown(&self) -> bool {
        self.task == Some(TaskResult::Unknown) && self.ended != Ended::Running
    }

    /// Reads one stream entry (`XREVRANGE`'s id and fields); `None` when it is not dibs's.
    pub(crate) fn parse(id: &str, fields: &[String]) -> Option<Run> {
        let recorded_at_unix_ms = id.split('-').next()?.parse().ok()?;
        let [field, run] = fields else {
            return None;
        };
        if field != "run" {
            return None;
        }
        let mut f = run.splitn(11, ';');
        let mut next = || f.next();
        let ended = Ended::parse(next()?)?;
        let task_field = next()?;
        let catch_up = task_field.ends_with(CATCH_UP_MARK);
        let task = match task_field.strip_suffix(CATCH_UP_MARK).unwrap_or(task_field) {
            "ok" => Some(TaskResult::Succeeded),
            "failed" => Some(TaskResult::Failed),
            "unknown" => Some(TaskResult::Unknown),
            _ => None,
        };
        let number = |v: &str| v.parse::<u64>().unwrap_or(0);
        let duration_ms = number(next()?);
        let at_least_ms = number(next()?);
        let fence = number(next()?);
        let started_at_unix_ms = number(next()?);
        let pid = next()?.parse().unwrap_or(0);
        let host = next()?.to_owned();
        let some = |v: &str| (!v.is_empty()).then(|| v.to_owned());
        let instance = some(next()?);
        let forced_by = some(next()?);
        let name = next()?.to_owned();
        Some(Run {
            recorded_at_unix_ms,
            name,
            host,
            pid,
            instance,
            started_at_unix_ms,
            duration_ms,
            at_least_ms,
            fence,
            ended,
            task,
            forced_by,
            catch_up,
        })
    }
}

/// A job the index knows, and when its last run was recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub name: String,
    pub last_recorded_unix_ms: u64,
}

/// A lock held now, as [`crate::Locker::locks`] found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldLock {
    pub name: String,
    pub state: crate::LockState,
    /// The token in the lock's value (shown only when asked for: it is what a forced release
    /// takes). `None` when the value is not dibs's.
    pub token: Option<String>,
}

impl HeldLock {
    /// Whether a run holds it now: a value dibs wrote, with a fresh token (a lock kept after its
    /// release, or a tick's done-mark, has a spent one: see `holder::is_spent`).
    pub fn is_running(&self) -> bool {
        self.token
            .as_deref()
            .is_some_and(|token| !crate::holder::is_spent(token))
    }

    /// A held lock as its value and PTTL say: any value, of any bytes, is one; a value dibs did
    /// not write has no holder and no token.
    pub(crate) fn read(name: &str, value: &[u8], pttl: i64) -> HeldLock {
        let (holder, token) = match crate::Holder::parse_with_token(value) {
            Some((holder, token)) => (Some(holder), Some(token.to_owned())),
            None => (None, None),
        };
        HeldLock {
            name: name.to_owned(),
            token,
            state: crate::LockState {
                remaining_ms: u64::try_from(pttl).ok(),
                holder,
            },
        }
    }
}

/// The entries of an `XREVRANGE` reply, `(id, [field, value, ...])`, whatever their bytes: a
/// stream under the prefix that dibs did not write (or one of another encoding) reads as text,
/// its invalid bytes replaced, and then as no run ([`Run::parse`] skips it).
pub(crate) fn entries(reply: &redis::Value) -> Vec<(String, Vec<String>)> {
    use redis::Value;
    fn text(v: &Value) -> Option<String> {
        match v {
            Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Value::SimpleString(s) => Some(s.clone()),
            Value::VerbatimString { text, .. } => Some(text.clone()),
            Value::Int(i) => Some(i.to_string()),
            _ => None,
        }
    }
    let Value::Array(items) = reply else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let Value::Array(pair) = item else {
                return None;
            };
            let id = text(pair.first()?)?;
            let fields = match pair.get(1)? {
                Value::Array(fields) => fields.iter().filter_map(text).collect(),
                Value::Map(pairs) => pairs
                    .iter()
                    .flat_map(|(k, v)| [text(k), text(v)])
                    .flatten()
                    .collect(),
                _ => return None,
            };
            Some((id, fields))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_keys_are_never_lock_keys() {
        let key = stream_key("dibs:", "report");
        assert!(is_history_key("dibs:", &key));
        assert!(!is_history_key("dibs:", "dibs:history:report"));
        assert!(!is_history_key("app:", &key));
        assert_eq!(job_of_key("dibs:", &key), Some("report"));
        assert_eq!(stream_glob("a*b:"), "a\\*b:\u{1f}{history}:*");
        for other in [index_key("dibs:"), evicted_key("dibs:")] {
            assert!(is_history_key("dibs:", &other));
            assert_eq!(job_of_key("dibs:", &other), None);
        }
    }

    #[test]
    fn entries_parse_back() {
        let tail = record_tail("1000", "42", "h1", "i-1", "report;2026-12-01");
        let run = format!("kept;{}", record("failed", 7, 5000, 99, &tail));
        let fields = vec!["run".to_owned(), run];
        let run = Run::parse("1764547200123-0", &fields).expect("parses");
        assert_eq!(run.recorded_at_unix_ms, 1_764_547_200_123);
        assert_eq!(run.ended, Ended::KeptForAtLeast);
        assert_eq!(run.task, Some(TaskResult::Failed));
        assert_eq!((run.pid, run.fence, run.duration_ms), (42, 99, 7));
        assert_eq!(run.at_least_ms, 5000);
        assert_eq!(run.instance.as_deref(), Some("i-1"));
        assert_eq!(run.name, "report;2026-12-01", "a name may hold a ';'");
        assert_eq!(run.forced_by, None);
        assert!(!run.succeeded());
        assert!(!run.outcome_unknown());
        assert_eq!(Run::parse("1-0", &["x".to_owned(), "y".to_owned()]), None);
    }

    #[test]
    fn a_start_reads_as_unended_with_its_task_unknown() {
        let tail = record_tail("1000", "42", "h1", "", "report@2026-12-01");
        // As `script::tick`'s `started` writes it: the head, the token, the tail.
        let run = format!("started;{}77{tail}", started_head(5000, true));
        let run = Run::parse("5-0", &["run".to_owned(), run]).expect("parses");
        assert_eq!(run.ended, Ended::Unended);
        assert_eq!(run.task, Some(TaskResult::Unknown));
        assert!(run.catch_up);
        assert_eq!((run.fence, run.duration_ms, run.at_least_ms), (77, 0, 5000));
        assert_eq!(run.name, "report@2026-12-01");
        assert!(run.outcome_unknown() && !run.succeeded());
    }
}
