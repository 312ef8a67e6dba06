//! A lock held: from a won acquire to its release, which says how the call ended and records
//! the run in its job's history.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::RedisResult;

use crate::conn::Conn;
use crate::connspec::Address;
use crate::ending::{self, Ended, Ending};
use crate::error::Result;
use crate::history::{self, TaskResult};
use crate::keepalive::KeepAlive;
use crate::pool::Pool;
use crate::script;

use super::params::LockParams;
use super::Locker;

/// The margin [`Lease::safe_for`] keeps for clocks running at different rates: 1% of `atMost`
/// plus 2 ms, as Redlock's drift factor.
pub fn drift(at_most: Duration) -> Duration {
    at_most / 100 + Duration::from_millis(2)
}

/// A lock we hold, from a won [`Locker::acquire`] until [`Lease::release`]. With keep-alive, a
/// helper thread extends it meanwhile. A lease dropped without a release (a panic between the
/// two) is released by its `Drop`, so that no lock stays held with nothing running.
#[must_use = "a lease must be released"]
pub struct Lease {
    pub(super) pool: Arc<Pool>,
    pub(super) name: String,
    pub(super) key: String,
    pub(super) value: String,
    pub(super) acquired: Instant,
    /// When the `SET` (or the last `extend`) that set the expiry to `atMost` was sent: the lock
    /// is ours at most `atMost` from then, whatever the reply's delay.
    pub(super) set_at: Instant,
    pub(super) at_most_ms: u64,
    pub(super) at_least_ms: u64,
    pub(super) keep_alive: Option<KeepAlive>,
    /// What the acquire found worth a warning (a keep-alive schedule that cannot hold, a server
    /// that refused durable acquire's `WAIT`).
    pub(super) warning: Option<String>,
    /// The fencing token the acquire minted (`script::ACQUIRE`).
    pub(super) fence: u64,
    /// Taken with [`LockParams::for_tick`].
    pub(super) tick: bool,
    /// A tick's lock whose task failed is deleted at release, not kept as its done-mark (the
    /// spec's `retry-failed-ticks`).
    pub(super) retry_failed_tick: bool,
    /// Where the release records the run; `None` with the history off.
    pub(super) record: Option<Record>,
    /// The id of a tick's run's start's entry (`script::TICK_ACQUIRE`), which the release
    /// deletes with the ending's written.
    pub(super) started: Option<String>,
    /// A run of a tick after its time ([`Locker::acquire_unrun`]): recorded as a catch-up.
    pub(super) catch_up: bool,
    pub(super) released: bool,
}

/// What a lease's release needs to record its run (see `history`).
pub(super) struct Record {
    pub(super) stream: String,
    pub(super) place: Arc<HistoryPlace>,
}

/// Where a locker's leases record their runs: what they share.
pub(crate) struct HistoryPlace {
    /// The spec's key prefix, for what is said of its history.
    prefix: String,
    pub(crate) index: String,
    pub(crate) evicted: String,
    pub(crate) instance: Option<String>,
    /// On a Cluster a job's stream is in another slot than its locks: the entry follows the
    /// release's reply, as a command of its own (`script::RECORD`).
    pub(crate) apart: bool,
    /// Set once the server refused the history's writes (said once).
    pub(crate) refused: AtomicBool,
    /// Set once a run of this locker's dropped another job's history (said once).
    pub(crate) evicting: AtomicBool,
}

/// What writing a run's entry did.
#[derive(Debug)]
pub(crate) enum Written {
    Recorded,
    /// Recorded, and making the job's new stream dropped another job's history (the index of
    /// jobs was full).
    Evicted,
    Refused,
    /// Not written: the history's node did not answer (down, frozen, cut off).
    Failed(crate::error::Error),
}

impl HistoryPlace {
    pub(crate) fn new(spec: &crate::ConnSpec) -> HistoryPlace {
        HistoryPlace {
            prefix: spec.key_prefix().to_owned(),
            index: history::index_key(spec.key_prefix()),
            evicted: history::evicted_key(spec.key_prefix()),
            instance: spec.instance_id().map(str::to_owned),
            apart: matches!(spec.address(), Address::Cluster { .. }),
            refused: AtomicBool::new(false),
            evicting: AtomicBool::new(false),
        }
    }

    /// Writes a run's whole entry apart from its release (see `script::RECORD`).
    /// `started`: the id of the run's start's entry, deleted with it.
    pub(crate) fn write(
        &self,
        pool: &Pool,
        name: &str,
        stream: &str,
        entry: &str,
        started: Option<&str>,
    ) -> Written {
        let keys = [stream, self.index.as_str(), self.evicted.as_str()];
        let write = |conn: &mut Conn, retry: bool| -> RedisResult<i64> {
            script::RECORD.run_with(conn, &keys, entry.len() + 80, |cmd| {
                cmd.arg(entry)
                    .arg(history::HISTORY_LENGTH)
                    .arg(history::HISTORY_TTL.as_millis() as u64)
                    .arg(u8::from(retry))
                    .arg(started.unwrap_or_default());
            })
        };
        match pool.run(
            &format_args!("recording the run of lock '{name}'"),
            |conn| write(conn, false),
            |conn| write(conn, true),
        ) {
            Ok(1) => Written::Recorded,
            Ok(3) => Written::Evicted,
            Ok(_) => Written::Refused,
            Err(e) => Written::Failed(e),
        }
    }

    /// The warning that recording a run dropped another job's history, the first time only:
    /// where more jobs record than the history keeps, some lose their proof (`dibs check` then
    /// says unknown, naming the eviction).
    pub(crate) fn eviction(&self, name: &str) -> Option<String> {
        (!self.evicting.swap(true, Ordering::Relaxed)).then(|| {
            let prefix = &self.prefix;
            format!(
                "recording the run of lock '{name}' dropped another job's runs from the \
                 history: more than {} jobs record under the key prefix '{prefix}'. Jobs of one \
                 run go first, then the least recently run; a job whose runs were dropped \
                 cannot be proven to have run (`dibs check` says unknown, and names it). Names \
                 made per order or tenant should be one job's ticks (`executeOnce(job, tick, \
                 ...)`), or use a key prefix of their own. (Said once.)",
                history::HISTORY_JOBS
            )
        })
    }

    /// The warning that the server refused the history, the first time only.
    pub(crate) fn refusal(&self, name: &str) -> Option<String> {
        (!self.refused.swap(true, Ordering::Relaxed)).then(|| {
            format!(
                "the run of lock '{name}' could not be recorded in its job's history, or only \
                 in part: the server refused it (an ACL without +@stream, or without +zadd, \
                 +zcard, +zrange, +zrem, +zremrangebyrank, +zscore and +xlen for the index of \
                 jobs; or a server without streams); the locks work as before. Grant those \
                 (and +xrevrange and +scan to read it), or set 'history' to false. (Said once.)"
            )
        })
    }
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the value: it holds the token.
        f.debug_struct("Lease")
            .field("key", &self.key)
            .field("at_most_ms", &self.at_most_ms)
            .field("at_least_ms", &self.at_least_ms)
            .field("keep_alive", &self.keep_alive.is_some())
            .finish_non_exhaustive()
    }
}

impl Lease {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The value stored under the key: `token;host;pid;acquired-at-unix-ms`.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The fencing token of this acquisition: greater than that of every earlier holder of the
    /// lock (see `script::ACQUIRE` for when that holds), for the guarded resource to check, e.g.
    /// `UPDATE ... SET fence = ? WHERE fence < ?`. 0 when the server's ACL refuses `TIME`.
    pub fn fence(&self) -> u64 {
        self.fence
    }

    /// With keep-alive: whether the lock was found taken, or could not be extended in time, while
    /// held. Always false without keep-alive (the release tells).
    pub fn is_lost(&self) -> bool {
        self.keep_alive.as_ref().is_some_and(KeepAlive::is_lost)
    }

    /// With keep-alive: has `tell` called once, on keep-alive's thread, when the lock is found
    /// taken or cannot be extended before it lapses (at once if that happened already), unless
    /// the lease is released first. Without keep-alive, never: nothing watches the lock.
    /// Returns whether anything watches the lock (keep-alive); `tell` is dropped if not.
    pub fn when_lost(&self, tell: impl FnOnce() + Send + 'static) -> bool {
        match &self.keep_alive {
            Some(keep_alive) => {
                keep_alive.when_lost(Box::new(tell));
                true
            }
            None => false,
        }
    }

    /// How much longer the holder may rely on the lock, from now: `atMost` from when the last
    /// command that set its expiry was sent (the acquire's `SET`, an `extend`, or keep-alive's
    /// last extension that succeeded), less a margin for the clocks of this host and Redis running
    /// at different rates ([`drift`]). Zero once that has passed, and once keep-alive found the
    /// lock lost.
    pub fn safe_for(&self) -> Duration {
        if self.is_lost() {
            return Duration::ZERO;
        }
        let last_set = self
            .keep_alive
            .as_ref()
            .and_then(KeepAlive::last_extended)
            .map_or(self.set_at, |extended| extended.max(self.set_at));
        let at_most = Duration::from_millis(self.at_most_ms);
        (last_set + at_most.saturating_sub(drift(at_most)))
            .saturating_duration_since(Instant::now())
    }

    /// Adds `warning` to the acquire's, said with it.
    pub(super) fn add_warning(&mut self, warning: String) {
        self.warning = Some(match self.warning.take() {
            Some(first) => format!("{first}; {warning}"),
            None => warning,
        });
    }

    /// The acquire's warning, once: keep-alive's schedule cannot hold for this `atMost` and
    /// these timeouts. Said for the first lease of each `atMost` of a locker.
    pub fn take_warning(&mut self) -> Option<String> {
        self.warning.take()
    }

    /// If the lock is still ours, sets its expiry to `at_most_ms` from now and counts
    /// `at_least_ms` from now too (as a fresh acquisition would); `Ok(false)`: no longer ours.
    /// The durations follow [`LockParams::from_millis`]'s rules, checked before any I/O. For
    /// callers that extend by hand (ShedLock's `extend`); keep-alive does its own.
    pub fn extend(&mut self, at_most_ms: i64, at_least_ms: i64) -> Result<bool> {
        let params = LockParams::from_millis(&self.name, at_most_ms, at_least_ms)?;
        let (at_most_ms, at_least_ms) = (params.at_most_ms, params.at_least_ms);
        let sent = Instant::now();
        let script =
            |conn: &mut Conn| script::EXTEND.run::<i64>(conn, &self.key, &self.value, at_most_ms);
        let name = &self.name;
        let ours = self
            .pool
            .run(&format_args!("extending lock '{name}'"), script, script)?
            == 1;
        if ours {
            self.acquired = Instant::now();
            self.set_at = sent;
            self.at_most_ms = at_most_ms;
            self.at_least_ms = at_least_ms;
        }
        Ok(ours)
    }

    /// Stops keep-alive (without waiting for an extension in flight), then runs the release
    /// script: if the key still holds our value, keep it for the rest of `atLeast` with the token
    /// spent, else `DEL` it; if not ours, touch nothing. The
    /// ending says which, and whether keep-alive saw the lock taken meanwhile. The history
    /// records the task as succeeded: see [`Lease::release_after`].
    pub fn release(self) -> Ending {
        self.release_after(TaskResult::Succeeded)
    }

    /// [`Lease::release`], recording in the history how the task ended.
    pub fn release_after(mut self, task: TaskResult) -> Ending {
        self.release_once(task)
    }

    fn release_once(&mut self, task: TaskResult) -> Ending {
        self.released = true;
        let lost = self.keep_alive.take().is_some_and(KeepAlive::stop);
        let elapsed = self.acquired.elapsed();
        let remaining_ms = if self.retry_failed_tick && task == TaskResult::Failed {
            0 // the tick is not done: another instance's later fire of it may run it
        } else {
            self.at_least_ms.saturating_sub(elapsed.as_millis() as u64)
        };
        let (key, value) = (&self.key, &self.value);
        let record = self.record.as_ref();
        let run = record.map(|record| self.run(record, task, elapsed));
        let inline = record.filter(|r| !r.place.apart);
        let script = |conn: &mut Conn, retry: bool| -> RedisResult<i64> {
            let (Some(record), Some(run)) = (inline, &run) else {
                return script::RELEASE.run_with(conn, &[key], value.len() + 24, |cmd| {
                    cmd.arg(value)
                        .arg(remaining_ms)
                        .arg(u8::from(retry))
                        .arg(u8::from(lost));
                });
            };
            let place = &record.place;
            let keys = [
                key.as_str(),
                record.stream.as_str(),
                place.index.as_str(),
                place.evicted.as_str(),
            ];
            script::RELEASE.run_with(conn, &keys, value.len() + run.len() + 48, |cmd| {
                cmd.arg(value)
                    .arg(remaining_ms)
                    .arg(u8::from(retry))
                    .arg(u8::from(lost))
                    .arg(history::HISTORY_LENGTH)
                    .arg(history::HISTORY_TTL.as_millis() as u64)
                    .arg(run)
                    .arg(self.started.as_deref().unwrap_or_default());
            })
        };
        // The retry follows a first try whose reply was lost: what it cannot prove is 3.
        let name = &self.name;
        let found = self.pool.run(
            &format_args!("releasing lock '{name}'"),
            |conn| script(conn, false),
            |conn| script(conn, true),
        );
        let mut history_refused = matches!(found, Ok(code) if code & 16 != 0);
        let mut evicted = matches!(found, Ok(code) if code & 32 != 0);
        let ended = match found.as_ref().map(|code| code & 15) {
            _ if lost => Ended::LostWhileRunning,
            Ok(1) => Ended::KeptForAtLeast,
            Ok(2) => Ended::Released,
            Ok(3) => Ended::Unproven,
            Ok(_) => Ended::NoLongerOurs,
            Err(_) => Ended::ReleaseFailed,
        };
        let kept_ms = (ended == Ended::KeptForAtLeast).then_some(remaining_ms);
        let failure = found.err();
        let mut unrecorded = None;
        if let (Some(record), Some(run), Some(ended)) = (
            record.filter(|r| r.place.apart),
            &run,
            Some(ended).filter(|e| e.recorded()),
        ) {
            let entry = [ended.as_str(), ";", run].concat();
            let started = self.started.as_deref();
            let written = record
                .place
                .write(&self.pool, name, &record.stream, &entry, started);
            history_refused = matches!(written, Written::Refused);
            evicted = matches!(written, Written::Evicted);
            if let Written::Failed(e) = written {
                unrecorded = Some(format!(
                    "the run of lock '{name}' was not recorded in its job's history: {e}; \
                     `dibs history` and `dibs check` will not see it"
                ));
            }
        }
        let advice = if ended == Ended::Released && !self.tick {
            ending::per_tick_advice(&self.name, self.at_least_ms, elapsed)
        } else {
            None
        };
        let refusal = record
            .filter(|_| history_refused)
            .and_then(|r| r.place.refusal(name));
        let eviction = record
            .filter(|_| evicted)
            .and_then(|r| r.place.eviction(name));
        let advice = [advice, refusal, eviction, unrecorded]
            .into_iter()
            .flatten()
            .reduce(|a, b| format!("{a}; {b}"));
        Ending {
            name: std::mem::take(&mut self.name),
            ended,
            kept_ms,
            failure,
            elapsed,
            at_most: Duration::from_millis(self.at_most_ms),
            advice,
        }
    }

    /// The run's record without its ending (`history::record`).
    fn run(&self, record: &Record, task: TaskResult, elapsed: Duration) -> String {
        let instance = record.place.instance.as_deref().unwrap_or_default();
        history::record(
            &history::task_field(task, self.catch_up),
            elapsed.as_millis() as u64,
            self.at_least_ms,
            self.fence,
            &super::tick_start::record_tail(&self.value, instance, &self.name),
        )
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if !self.released {
            // Dropped unreleased: its task panicked (or its caller lost it).
            let _ = self.release_once(TaskResult::Failed);
        }
    }
}

impl Locker {
    /// Where a lease of `job` records its run: nowhere with the history off.
    pub(super) fn record(&self, job: &str) -> Option<Record> {
        let place = self.history.as_ref()?;
        Some(Record {
            stream: history::stream_key(self.spec.key_prefix(), job),
            place: place.clone(),
        })
    }

    /// Whether this locker's releases record their runs: the spec's `history`.
    pub fn keeps_history(&self) -> bool {
        self.history.is_some()
    }
}
