//! The lock model. [`Locker::acquire`] and [`Lease::release`] are its two primitives, and
//! [`Locker::execute`] the whole lifecycle on them: validate, acquire, run, release. The JVM uses
//! the two primitives with its task in plain Java between them; the CLI uses `execute`.
//!
//! - Acquire: one `SET key value NX PX atMost`. The value holds a random UUID v4 made per call.
//! - Release: one token-checked Lua script (EVALSHA, falling back to EVAL on NOSCRIPT). If the
//!   key still holds our value: keep it for `atLeast - elapsed` ms when that is positive (with
//!   the token spent, see `script::RELEASE`), else `DEL` it. If the key is gone or someone
//!   else's, nothing is touched.
//! - Timing: `elapsed` is measured with a monotonic clock from the moment the `SET` reply was
//!   received, in whole milliseconds rounded down. Both choices err towards holding the lock a
//!   little longer than `atLeast`, never shorter.

use std::collections::{HashMap, HashSet};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use redis::{ErrorKind, RedisResult, ServerErrorKind};

use crate::conn::Conn;
use crate::connspec::{Address, ConnSpec, Durable, ServerSpec};
use crate::ending::{self, Ended, Ending};
use crate::error::{first_line, Error, Result};
use crate::history::{self, HeldLock, Job, Run, TaskResult};
use crate::holder::{self, Holder, LockState};
use crate::keepalive::{KeepAlive, Schedule};
use crate::pool::Pool;
use crate::script;
use crate::sweeper;

/// The margin [`Lease::safe_for`] keeps for clocks running at different rates: 1% of `atMost`
/// plus 2 ms, as Redlock's drift factor.
pub fn drift(at_most: Duration) -> Duration {
    at_most / 100 + Duration::from_millis(2)
}

/// What a retried release reports for "no key": not a code of the release script.
const UNPROVEN: i64 = -1;

/// The longest lock name, in UTF-8 bytes.
pub const MAX_NAME_BYTES: usize = 512;

/// The longest tick of [`LockParams::for_tick`], in UTF-8 bytes.
pub const MAX_TICK_BYTES: usize = 128;

/// Redis refuses an expiry whose absolute time overflows its 64-bit millisecond clock; this
/// bound (about 146 million years) keeps well inside it.
const MAX_TTL_MS: u64 = (i64::MAX / 2) as u64;

/// A validated lock request. Building one is the only validation of lock arguments, and it
/// happens before any network I/O.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockParams {
    name: String,
    /// The job is `name[..job_end]`: the job a tick's caller named, or [`crate::job_of`] the
    /// name (both a prefix of the name).
    job_end: usize,
    at_most_ms: u64,
    at_least_ms: u64,
    /// Made by [`LockParams::for_tick`]: the name says its tick, and atLeast is atMost.
    tick: bool,
}

impl LockParams {
    /// `at_most` and `at_least` count units of `unit_ms` milliseconds (1000 for seconds).
    ///
    /// A name is 1 to [`MAX_NAME_BYTES`] bytes of UTF-8 with no control characters: spaces and
    /// non-ASCII letters are fine, newlines and NUL are not (they break logs and tooling).
    pub fn new(name: &str, at_most: i64, at_least: i64, unit_ms: i64) -> Result<LockParams> {
        validate_name(name)?;
        let unit = if unit_ms == 1000 { "s" } else { "ms" };
        let to_ms = |arg: &'static str, v: i64| -> Result<u64> {
            let ms = v.checked_mul(unit_ms).ok_or_else(|| {
                Error::invalid(
                    arg,
                    format!("{arg} = {v} {unit} overflows 64-bit milliseconds"),
                )
            })?;
            Ok(ms.max(0) as u64)
        };
        if at_most <= 0 {
            return Err(Error::invalid(
                "atMost",
                format!("atMost must be positive, got {at_most} {unit}"),
            ));
        }
        if at_least < 0 {
            return Err(Error::invalid(
                "atLeast",
                format!("atLeast must not be negative, got {at_least} {unit}"),
            ));
        }
        let at_most_ms = to_ms("atMost", at_most)?;
        let at_least_ms = to_ms("atLeast", at_least)?;
        if at_most_ms > MAX_TTL_MS {
            return Err(Error::invalid(
                "atMost",
                format!("atMost = {at_most} {unit} is beyond what Redis can expire (at most {MAX_TTL_MS} ms)"),
            ));
        }
        if at_least_ms > at_most_ms {
            return Err(Error::invalid(
                "atLeast",
                format!(
                    "atLeast ({at_least} {unit}) must not exceed atMost ({at_most} {unit}): \
                     the lock would have to outlive its own expiry"
                ),
            ));
        }
        Ok(LockParams {
            name: name.to_owned(),
            job_end: crate::job_of(name).len(),
            at_most_ms,
            at_least_ms,
            tick: false,
        })
    }

    /// The lock of one tick of the job `name`, run at most once by all instances: the lock's
    /// name is `<name>@<tick>` (the tick says which one: a fire time, a date), and the lock is
    /// kept for all of `atMost` from its acquisition, released or not, as the tick's "done"
    /// marker. An instance whose scheduler fires the same tick up to `atMost` later then skips
    /// it, whatever the task's length. The run is recorded under job `name`. A tick is 1 to
    /// [`MAX_TICK_BYTES`] bytes, with no control characters and no `@` (so that no two names
    /// and ticks make the same key); `name` must not itself end in a tick (see
    /// [`crate::job_of`]), so that the job of its runs is the name its listeners hear.
    pub fn for_tick(name: &str, tick: &str, at_most: i64, unit_ms: i64) -> Result<LockParams> {
        validate_name(name)?;
        if let Some((job, its_tick)) = crate::split_tick(name) {
            return Err(Error::invalid(
                "lockName",
                format!(
                    "lockName '{name}' ends in a tick ('{its_tick}'): give the job's name alone, \
                     and its tick as the tick (lockName '{job}')"
                ),
            ));
        }
        if tick.is_empty() || tick.len() > MAX_TICK_BYTES {
            return Err(Error::invalid(
                "tick",
                format!(
                    "tick must be 1 to {MAX_TICK_BYTES} bytes of UTF-8, got {}",
                    tick.len()
                ),
            ));
        }
        if let Some((at, c)) = tick
            .char_indices()
            .find(|(_, c)| c.is_control() || *c == '@')
        {
            return Err(Error::invalid(
                "tick",
                format!(
                    "tick must not contain '@' or control characters; found U+{:04X} at byte {at}",
                    c as u32
                ),
            ));
        }
        let mut params = LockParams::new(&format!("{name}@{tick}"), at_most, at_most, unit_ms)?;
        params.tick = true;
        params.job_end = name.len();
        Ok(params)
    }

    pub fn from_secs(name: &str, at_most: i64, at_least: i64) -> Result<LockParams> {
        LockParams::new(name, at_most, at_least, 1000)
    }

    pub fn from_millis(name: &str, at_most: i64, at_least: i64) -> Result<LockParams> {
        LockParams::new(name, at_most, at_least, 1)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The job the run is recorded under (see [`crate::job_of`]).
    pub fn job(&self) -> &str {
        &self.name[..self.job_end]
    }

    pub fn at_most(&self) -> Duration {
        Duration::from_millis(self.at_most_ms)
    }

    pub fn at_least(&self) -> Duration {
        Duration::from_millis(self.at_least_ms)
    }
}

fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::invalid("lockName", "lockName must not be empty"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::invalid(
            "lockName",
            format!(
                "lockName is {} bytes of UTF-8; the maximum is {MAX_NAME_BYTES}",
                name.len()
            ),
        ));
    }
    if let Some((at, c)) = name.char_indices().find(|(_, c)| c.is_control()) {
        return Err(Error::invalid(
            "lockName",
            format!(
                "lockName must not contain control characters; found U+{:04X} at byte {at}",
                c as u32
            ),
        ));
    }
    Ok(())
}

/// A lock we hold, from a won [`Locker::acquire`] until [`Lease::release`]. With keep-alive, a
/// helper thread extends it meanwhile. A lease dropped without a release (a panic between the
/// two) is released by its `Drop`, so that no lock stays held with nothing running.
#[must_use = "a lease must be released"]
pub struct Lease {
    pool: Arc<Pool>,
    name: String,
    key: String,
    value: String,
    acquired: Instant,
    /// When the `SET` (or the last `extend`) that set the expiry to `atMost` was sent: the lock
    /// is ours at most `atMost` from then, whatever the reply's delay.
    set_at: Instant,
    at_most_ms: u64,
    at_least_ms: u64,
    keep_alive: Option<KeepAlive>,
    /// What the acquire found worth a warning (a keep-alive schedule that cannot hold, a server
    /// that refused durable acquire's `WAIT`).
    warning: Option<String>,
    /// The fencing token the acquire minted (`script::ACQUIRE`).
    fence: u64,
    /// Taken with [`LockParams::for_tick`].
    tick: bool,
    /// Where the release records the run; `None` with the history off.
    record: Option<Record>,
    released: bool,
}

/// What a lease's release needs to record its run (see `history`).
struct Record {
    stream: String,
    instance: Option<String>,
    /// The locker's, shared by its leases: set once the server refused the history's writes.
    refused: Arc<std::sync::atomic::AtomicBool>,
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

    /// The acquire's warning, once: keep-alive's schedule cannot hold for this `atMost` and
    /// these timeouts. Said for the first lease of each `atMost` of a locker.
    pub fn take_warning(&mut self) -> Option<String> {
        self.warning.take()
    }

    /// Whether [`take_warning`](Lease::take_warning) has one to give.
    pub fn has_warning(&self) -> bool {
        self.warning.is_some()
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
        let remaining_ms = self.at_least_ms.saturating_sub(elapsed.as_millis() as u64);
        let (key, value, fence) = (&self.key, &self.value, self.fence);
        let record = self.record.as_ref();
        let script = |conn: &mut Conn, retry: bool| -> RedisResult<i64> {
            let Some(record) = record else {
                return script::RELEASE.run::<i64>(conn, key, value, remaining_ms);
            };
            let keys = [key.as_str(), record.stream.as_str()];
            // `host;pid;start` from the value: `token;host;pid;acquired-at-unix-ms`.
            let mut holder = value.splitn(4, ';').skip(1);
            let (host, pid, start) = (
                holder.next().unwrap_or_default(),
                holder.next().unwrap_or_default(),
                holder.next().unwrap_or_default(),
            );
            let run = history::record(
                task.as_str(),
                elapsed.as_millis() as u64,
                self.at_least_ms,
                fence,
                start,
                pid,
                host,
                record.instance.as_deref().unwrap_or_default(),
                &self.name,
            );
            script::RELEASE.run_with(conn, &keys, value.len() + run.len() + 48, |cmd| {
                cmd.arg(value)
                    .arg(remaining_ms)
                    .arg(u8::from(retry))
                    .arg(u8::from(lost))
                    .arg(history::HISTORY_LENGTH)
                    .arg(history::HISTORY_TTL.as_millis() as u64)
                    .arg(&run);
            })
        };
        // The retry follows a first try whose reply was lost. A spent value (1) can only be that
        // try's work; no key (3) may be too, or the lock may have lapsed before it: unproven,
        // unless the first try's record proves it (see `script::RELEASE`).
        let script_again = |conn: &mut Conn| {
            script(conn, true).map(|code| if code & 15 == 3 { UNPROVEN } else { code })
        };
        let name = &self.name;
        let found = self.pool.run(
            &format_args!("releasing lock '{name}'"),
            |conn| script(conn, false),
            script_again,
        );
        let history_refused = matches!(found, Ok(code) if code >= 16);
        let ended = match found.map(|code| if code >= 16 { code - 16 } else { code }) {
            _ if lost => Ended::LostWhileRunning,
            Ok(1) => Ended::KeptForAtLeast { remaining_ms },
            Ok(2) => Ended::Released,
            Ok(UNPROVEN) => Ended::Unproven,
            Ok(_) => Ended::NoLongerOurs,
            Err(e) => Ended::ReleaseFailed(e),
        };
        let advice = if ended == Ended::Released && !self.tick {
            ending::per_tick_advice(&self.name, self.at_least_ms, elapsed)
        } else {
            None
        };
        let advice = match (history_refused, record) {
            (true, Some(record))
                if !record
                    .refused
                    .swap(true, std::sync::atomic::Ordering::Relaxed) =>
            {
                let refusal = format!(
                    "the run of lock '{name}' could not be recorded in its job's history: the \
                     server refused XADD (an ACL without +@stream, or a server without streams); \
                     the locks work as before. Grant +xadd and +pexpire (and +xrevrange and +scan \
                     to read it), or set 'history' to false. (Said once.)"
                );
                Some(advice.map_or(refusal.clone(), |a| format!("{a}; {refusal}")))
            }
            _ => advice,
        };
        Ending {
            name: std::mem::take(&mut self.name),
            ended,
            elapsed,
            at_most: Duration::from_millis(self.at_most_ms),
            advice,
        }
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

/// What the acquire's round trip found: the fencing token when the lock was won, and durable
/// acquire's acknowledgement (replicas, or an error reply when the server refused the command).
struct Trip {
    fence: Option<u64>,
    acked: Option<RedisResult<Acked>>,
}

/// What `WAIT` (replicas) or `WAITAOF` (the master's own fsync, and replicas) acknowledged.
#[derive(Clone, Copy, Debug)]
struct Acked {
    local: i64,
    replicas: i64,
}

/// What durable acquire asks of one call.
#[derive(Clone, Copy, Debug)]
struct Wait {
    replicas: u32,
    /// `WAITAOF 1 replicas`, not `WAIT replicas`.
    aof: bool,
    /// Asked for by the spec (a refusal fails the call), not the default (a refusal is warned
    /// about once, then the server is used without).
    explicit: bool,
    /// Half the read timeout: the reply comes back within it, well inside the read timeout.
    budget_ms: u64,
}

impl Wait {
    fn command(&self) -> &'static str {
        if self.aof {
            "WAITAOF"
        } else {
            "WAIT"
        }
    }

    fn confirmed(&self, acked: Acked) -> bool {
        acked.replicas >= i64::from(self.replicas) && (!self.aof || acked.local >= 1)
    }

    fn unconfirmed(&self, name: &str, acked: Acked, endpoint: &str) -> String {
        let (wanted, budget) = (self.replicas, self.budget_ms);
        let local = if self.aof && acked.local < 1 {
            ", and the master's own AOF fsync did not happen"
        } else {
            ""
        };
        format!(
            "lock '{name}' on {endpoint} was won but not confirmed: {} of {wanted} replicas \
             acknowledged it within {budget} ms{local}, so a failover could lose it; it was given \
             back and the task did not run (durable acquire; a replica lagging or cut off)",
            acked.replicas
        )
    }

    fn refused(&self, name: &str, refused: &redis::RedisError, endpoint: &str) -> String {
        format!(
            "lock '{name}' was given back: {endpoint} refused {} ({}), which the conn's \
             'durable' setting asks for; set 'durable' to \"auto\" or \"off\" for a server without it",
            self.command(),
            first_line(refused)
        )
    }

    fn refused_by_default(&self, refused: &redis::RedisError, endpoint: &str) -> String {
        format!(
            "{endpoint} refused {} ({}): durable acquire is off for it, so a failover may lose \
             a lock just taken; set 'durable' to \"off\" to say so and silence this",
            self.command(),
            first_line(refused)
        )
    }
}

/// The acquire's round trip: [`script::ACQUIRE`], then `WAIT`/`WAITAOF` when `wait` says so,
/// pipelined; EVAL again on NOSCRIPT. `retry`: a key already holding `value` is won too.
///
/// With a `WAIT`, the script goes as EVAL (its whole text) until the pool knows the server has
/// it: after a NOSCRIPT the pipeline's `WAIT` has already waited, and with a lagging replica
/// that is the whole budget, spent for nothing (a new master after a failover has no scripts).
fn trip(
    conn: &mut Conn,
    key: &str,
    value: &str,
    at_most_ms: u64,
    retry: bool,
    wait: Option<Wait>,
    pool: &Pool,
) -> RedisResult<Trip> {
    let script = |cached: bool| {
        let mut cmd = script::ACQUIRE.call(cached, key, value.len() + 24);
        cmd.arg(value).arg(at_most_ms).arg(u8::from(retry));
        cmd
    };
    let Some(wait) = wait else {
        let cmd = script(true);
        let fence: Option<u64> = match cmd.query(conn) {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                script(false).query(conn)?
            }
            other => other?,
        };
        pool.set_scripts_cached(true);
        return Ok(Trip { fence, acked: None });
    };
    let first = if pool.scripts_cached() {
        &[true, false][..]
    } else {
        &[false][..]
    };
    for &cached in first {
        let mut pipe = redis::pipe();
        pipe.add_command(script(cached));
        let ack = pipe.cmd(wait.command());
        if wait.aof {
            ack.arg(1);
        }
        ack.arg(wait.replicas).arg(wait.budget_ms);
        let mut replies: Vec<RedisResult<redis::Value>> = match pipe.ignore_errors().query(conn) {
            Err(e) if cached && e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                continue
            }
            // A cluster connection folds one reply's error into the whole pipeline's: a refused
            // WAIT (an unknown command, an ACL's NOPERM) hides whether the script won, and
            // would fail the call with the lock held. Give it back (token-checked), and ask
            // once more without the WAIT: the script's own answer tells the two apart.
            Err(e) if !conn.keeps_each_reply() && refusal(&e) => {
                let _ = script::RELEASE.run::<i64>(conn, key, value, 0);
                let fence = trip(conn, key, value, at_most_ms, retry, None, pool)?.fence;
                return Ok(Trip {
                    fence,
                    acked: Some(Err(e)),
                });
            }
            replies => replies?,
        };
        let acked = replies.pop().unwrap_or(Ok(redis::Value::Nil));
        let fence = match replies.pop().unwrap_or(Ok(redis::Value::Nil)) {
            Err(e) if cached && e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                continue
            }
            fence => redis::from_redis_value::<Option<u64>>(fence?)?,
        };
        pool.set_scripts_cached(true);
        let acked = acked.and_then(|v| {
            if wait.aof {
                let (local, replicas): (i64, i64) = redis::from_redis_value(v)?;
                Ok(Acked { local, replicas })
            } else {
                Ok(Acked {
                    local: 0,
                    replicas: redis::from_redis_value(v)?,
                })
            }
        });
        return Ok(Trip {
            fence,
            acked: Some(acked),
        });
    }
    unreachable!("EVAL never answers NOSCRIPT")
}

/// Whether a server's error reply refuses a command outright (unknown, renamed away, or denied
/// by the ACL), rather than redirects it or asks for a retry.
fn refusal(e: &redis::RedisError) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Server(ServerErrorKind::ResponseError | ServerErrorKind::NoPerm)
    )
}

/// `SCAN` over `glob`, [`SCAN_BATCH`] keys a call, handing each batch to `batch` until the
/// keyspace is done, [`SCAN_BUDGET`] keys were looked at, or `batch` says stop (false).
fn scan(
    conn: &mut Conn,
    glob: &str,
    mut batch: impl FnMut(&mut Conn, Vec<String>) -> RedisResult<bool>,
) -> RedisResult<()> {
    let (mut cursor, mut seen) = (0u64, 0usize);
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(glob)
            .arg("COUNT")
            .arg(SCAN_BATCH)
            .query(conn)?;
        seen += SCAN_BATCH;
        cursor = next;
        if !batch(conn, keys)? || cursor == 0 || seen >= SCAN_BUDGET {
            return Ok(());
        }
    }
}

/// A held lock as its value and PTTL say.
fn held(name: &str, value: &str, pttl: i64) -> HeldLock {
    let holder = Holder::parse(value);
    HeldLock {
        name: name.to_owned(),
        token: holder.as_ref().map(|_| value[..36].to_owned()),
        state: LockState {
            remaining_ms: u64::try_from(pttl).ok(),
            holder,
        },
    }
}

/// What [`Locker::force_release`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForcedRelease {
    /// The lock held that token, and was deleted.
    Released,
    /// No lock of that name was held.
    Free,
    /// The lock holds another token now (released and taken again since): left alone.
    OtherHolder,
}

/// Keys asked of each `SCAN` of [`Locker::locks`].
const SCAN_BATCH: usize = 1000;

/// Keys [`Locker::locks`] looks at, at most: 100 `SCAN`s.
pub const SCAN_BUDGET: usize = 100 * SCAN_BATCH;

/// How a locked call ended.
#[derive(Debug)]
pub enum Outcome<T> {
    /// Another holder had the lock; the task did not run.
    Skipped,
    /// The task ran. A release failure sits in the ending, beside the task's value, never in
    /// its place.
    Ran { value: T, ending: Ending },
}

/// Locks on one Redis server, over a pool of connections. Thread-safe.
pub struct Locker {
    /// Shared with the leases, whose keep-alive and release outlive the borrow of the locker,
    /// and (for shared lockers) with every other shared locker of the same server.
    pool: Arc<Pool>,
    /// The whole spec: the pool is made for its server part; the key prefix and keep-alive are
    /// this locker's own.
    spec: ConnSpec,
    /// The `atMost` values already warned about (keep-alive's schedule); touched only when a
    /// warning is due.
    warned: Mutex<HashSet<u64>>,
    /// Set once the server refused the history's writes (said once, see `Lease::release`).
    history_refused: Arc<std::sync::atomic::AtomicBool>,
}

/// The process-wide lockers, one per spec, and their pools, one per server.
#[derive(Default)]
struct Registry {
    lockers: HashMap<ConnSpec, &'static Locker>,
    pools: HashMap<ServerSpec, Arc<Pool>>,
    /// Whether the reaper thread runs.
    reaping: bool,
}

impl Registry {
    fn get() -> std::sync::MutexGuard<'static, Registry> {
        static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
        REGISTRY
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The reaper: closes the shared pools' connections that sat idle past their idle timeout,
    /// every shortest idle timeout (100 ms to 30 s).
    fn reap() {
        loop {
            let pools: Vec<Arc<Pool>> = Registry::get().pools.values().cloned().collect();
            let every = pools
                .iter()
                .map(|p| p.idle_timeout())
                .min()
                .unwrap_or(Duration::MAX)
                .clamp(Duration::from_millis(100), Duration::from_secs(30));
            for pool in pools {
                pool.close_stale();
            }
            thread::sleep(every);
        }
    }
}

impl Locker {
    /// A locker with its own pool. Nothing connects until the first call.
    pub fn new(spec: ConnSpec) -> Result<Locker> {
        Ok(Locker::on(
            Arc::new(Pool::new(spec.server().clone())?),
            spec,
        ))
    }

    fn on(pool: Arc<Pool>, spec: ConnSpec) -> Locker {
        if spec.durable() == Durable::Auto && !matches!(spec.address(), Address::Sentinel { .. }) {
            // The default waits for a replica only where the server has one.
            pool.count_replicas();
        }
        Locker {
            pool,
            spec,
            warned: Mutex::default(),
            history_refused: Arc::default(),
        }
    }

    /// The process-wide locker for `spec`: made on first use, then shared by every caller
    /// that passes an equal spec. It lives as long as the process (a few hundred bytes per spec
    /// ever used). Lockers whose specs differ only in the key prefix or keep-alive are distinct,
    /// but share one pool: one server, one pool. A shared pool's connections are closed once
    /// idle past its idle timeout, by a reaper thread, so a spec no longer used (a rotated
    /// password) holds no socket.
    pub fn shared(spec: ConnSpec) -> Result<&'static Locker> {
        let mut registry = Registry::get();
        if let Some(locker) = registry.lockers.get(&spec) {
            return Ok(locker);
        }
        let pool = match registry.pools.get(spec.server()) {
            Some(pool) => pool.clone(),
            None => {
                let pool = Arc::new(Pool::new(spec.server().clone())?);
                registry.pools.insert(spec.server().clone(), pool.clone());
                if !registry.reaping {
                    // Without a thread, stale connections are still dropped at their next use.
                    registry.reaping = thread::Builder::new()
                        .name("dibs-idle-reaper".into())
                        .spawn(Registry::reap)
                        .is_ok();
                }
                pool
            }
        };
        let locker: &'static Locker = Box::leak(Box::new(Locker::on(pool, spec.clone())));
        registry.lockers.insert(spec, locker);
        Ok(locker)
    }

    pub fn spec(&self) -> &ConnSpec {
        &self.spec
    }

    /// The Redis key of a lock: the spec's prefix, then the name.
    pub fn key(&self, name: &str) -> String {
        // One exact allocation; format! would start empty and grow.
        [self.spec.key_prefix(), name].concat()
    }

    /// The lifecycle: acquire, run `task`, release. Release runs however the task ends; a panic
    /// resumes after it. Errors before the task runs are returned and the task is not run.
    pub fn execute<T>(&self, params: &LockParams, task: impl FnOnce() -> T) -> Result<Outcome<T>> {
        let Some(lease) = self.acquire(params)? else {
            return Ok(Outcome::Skipped);
        };
        let result = panic::catch_unwind(AssertUnwindSafe(task));
        let ending = lease.release();
        match result {
            Ok(value) => Ok(Outcome::Ran { value, ending }),
            Err(payload) => panic::resume_unwind(payload),
        }
    }

    /// Who holds the lock `name`, and for how much longer; `None` when nobody does. One round
    /// trip (GET and PTTL, pipelined); it never changes the lock.
    pub fn inspect(&self, name: &str) -> Result<Option<LockState>> {
        Ok(self.held_lock(name)?.map(|held| held.state))
    }

    /// [`Locker::inspect`], with the holder's token: what [`Locker::force_release`] takes.
    pub fn held_lock(&self, name: &str) -> Result<Option<HeldLock>> {
        validate_name(name)?;
        let key = self.key(name);
        let read = |conn: &mut Conn| -> RedisResult<(Option<String>, i64)> {
            redis::pipe().get(&key).pttl(&key).query(conn).or_else(|e| {
                // A pipeline folds its replies' errors into one without a code; the same
                // failure on a lone GET (NOAUTH, NOPERM, ...) comes back typed. Not after a
                // timeout or a broken socket: that would only wait a second time.
                if e.is_timeout() || e.is_io_error() {
                    return Err(e);
                }
                let _: Option<String> = redis::cmd("GET").arg(&key).query(conn)?;
                Err(e)
            })
        };
        let (value, pttl) = self
            .pool
            .run(&format_args!("inspecting lock '{name}'"), read, read)?;
        Ok(value.map(|value| held(name, &value, pttl)))
    }

    /// `SET key value NX PX atMost` with its fencing token (`script::ACQUIRE`), and with durable
    /// acquire, `WAIT` (or `WAITAOF`) in the same round trip. `None` when someone else holds the
    /// lock. [`Error::Unconfirmed`] when the lock was won but the replicas did not acknowledge
    /// it in time: it was given back, and the task must not run. With keep-alive in the spec,
    /// the lease's extender starts here.
    pub fn acquire(&self, params: &LockParams) -> Result<Option<Lease>> {
        let key = self.key(&params.name);
        let first_value = holder::new_value();
        // Decided on the connection the acquire uses: a new one has just counted the replicas.
        let wait = std::cell::Cell::new(None);
        // Set when a SET timed out and a delete of its value was queued behind it.
        let doomed = std::cell::Cell::new(false);
        let set = |conn: &mut Conn, value: &str, retry: bool| -> RedisResult<Trip> {
            wait.set(self.wait(conn));
            let reply = trip(
                conn,
                &key,
                value,
                params.at_most_ms,
                retry,
                wait.get(),
                &self.pool,
            );
            if reply.as_ref().is_err_and(|e| e.is_timeout()) {
                // No answer in time: the SET may still run when a frozen server thaws, and hold
                // the lock with nothing running. Queue a token-checked delete behind it on the
                // same socket: Redis runs the two in order, so no lock of ours outlives this.
                // Not behind a WAIT: the server blocks the connection there, finds it closed
                // meanwhile and drops what follows. Nor on a cluster connection, which has no
                // such socket. The sweeper deletes it then.
                let queued = wait.get().is_none() && script::RELEASE.queue(conn, &key, value, 0);
                if !queued {
                    sweeper::sweep(self.pool.clone(), key.clone(), value.to_owned());
                }
                doomed.set(true);
            }
            reply
        };
        let retry_value = std::cell::RefCell::new(None);
        let set_again = |conn: &mut Conn| -> RedisResult<Trip> {
            if doomed.get() {
                // The first value will be deleted if it ever lands: try with a new one.
                let value = holder::new_value();
                let found = set(conn, &value, false)?;
                *retry_value.borrow_mut() = Some(value);
                return Ok(found);
            }
            // After a dropped connection the first SET may have landed with its reply lost:
            // then the key holds our own value, and the lock is ours.
            set(conn, &first_value, true)
        };
        let name = &params.name;
        let sent = Instant::now();
        let found = self.pool.run(
            &format_args!("acquiring lock '{name}'"),
            |conn| set(conn, &first_value, false),
            set_again,
        )?;
        let value = retry_value.into_inner().unwrap_or(first_value);
        let Some(fence) = found.fence else {
            return Ok(None);
        };
        let durability_warning = match (wait.get(), found.acked) {
            (Some(wait), Some(Ok(acked))) if !wait.confirmed(acked) => {
                self.give_back(name, &key, &value);
                if !wait.explicit {
                    // The replica may have left for good: the next call counts again.
                    self.pool.forget_replicas();
                }
                if matches!(self.spec.address(), Address::Sentinel { .. }) {
                    // The server may be a stale master (paused, failed over, thawed, not yet
                    // demoted): the next call asks the Sentinels afresh.
                    self.pool.drop_idle();
                }
                return Err(Error::Unconfirmed(wait.unconfirmed(
                    name,
                    acked,
                    &self.spec.endpoint(),
                )));
            }
            (Some(wait), Some(Err(refused))) if wait.explicit => {
                self.give_back(name, &key, &value);
                return Err(Error::Server(wait.refused(
                    name,
                    &refused,
                    &self.spec.endpoint(),
                )));
            }
            (Some(wait), Some(Err(refused))) => self
                .pool
                .refuse_wait()
                .then(|| wait.refused_by_default(&refused, &self.spec.endpoint())),
            (None, _) if self.spec.durable() == Durable::Auto
                && self.pool.replicas_unknown()
                && self.pool.refuse_wait() =>
            {
                Some(format!(
                    "{} refused INFO, so dibs cannot see whether the master has replicas: \
                     durable acquire is off for it, and a failover may lose a lock just taken; \
                     grant +info (and +wait), or set 'durable' to \"off\" to say so and silence this",
                    self.spec.endpoint()
                ))
            }
            _ => None,
        };
        let acquired = Instant::now();
        let schedule_warning = if self.spec.keep_alive() {
            self.schedule_warning(name, params.at_most_ms)
        } else {
            None
        };
        let warning = match (durability_warning, schedule_warning) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        };
        let keep_alive = if self.spec.keep_alive() {
            KeepAlive::start(
                self.pool.clone(),
                name.clone(),
                key.clone(),
                value.clone(),
                params.at_most_ms,
                acquired,
            )
        } else {
            None
        };
        Ok(Some(Lease {
            pool: self.pool.clone(),
            name: name.clone(),
            key,
            value,
            acquired,
            set_at: sent,
            at_most_ms: params.at_most_ms,
            at_least_ms: params.at_least_ms,
            keep_alive,
            warning,
            fence,
            tick: params.tick,
            record: self.record(params.job()),
            released: false,
        }))
    }

    /// What durable acquire waits for on this call, if anything (see [`Durable`]).
    fn wait(&self, conn: &mut Conn) -> Option<Wait> {
        let budget_ms = (self.spec.read_timeout().as_millis() as u64 / 2).max(1);
        let wait = |replicas, aof, explicit| {
            Some(Wait {
                replicas,
                aof,
                explicit,
                budget_ms,
            })
        };
        match self.spec.durable() {
            Durable::Off => None,
            Durable::Replicas(n) => wait(n, false, true),
            Durable::Aof(n) => wait(n, true, true),
            Durable::Auto if self.pool.wait_refused() => None,
            // Behind Sentinel a master that reports no replica may be a stale one: paused, failed
            // over and thawed, it takes locks that its demotion wipes (the chaos run saw a tick
            // run twice so). So the default always waits there; a master truly left alone makes
            // its calls unconfirmed until a replica is back.
            Durable::Auto if matches!(self.spec.address(), Address::Sentinel { .. }) => {
                wait(1, false, false)
            }
            // A lone server, or a cluster with a shard without a replica, has no replica that a
            // failover could promote in its place with the lock missing.
            Durable::Auto if self.pool.replicas(conn) > 0 => wait(1, false, false),
            Durable::Auto => None,
        }
    }

    /// Deletes a lock just won that durable acquire could not confirm (token-checked). Should
    /// that fail, the lock expires within atMost; the call reports it unconfirmed either way.
    fn give_back(&self, name: &str, key: &str, value: &str) {
        let release = |conn: &mut Conn| script::RELEASE.run::<i64>(conn, key, value, 0);
        let _ = self.pool.run(
            &format_args!("giving back unconfirmed lock '{name}'"),
            release,
            release,
        );
    }

    /// Keep-alive's warning for `atMost`, the first time it is due in this locker.
    /// Nothing is formatted or locked unless the schedule is tight.
    fn schedule_warning(&self, name: &str, at_most_ms: u64) -> Option<String> {
        let attempt = self.pool.attempt_time();
        if !Schedule::is_tight(at_most_ms, attempt) {
            return None;
        }
        let first = (self.warned.lock().unwrap_or_else(|p| p.into_inner())).insert(at_most_ms);
        first.then(|| Schedule::warning(name, at_most_ms, attempt))
    }

    /// Where a lease of `job` records its run: nowhere with the history off, or on a Cluster
    /// (see `history`).
    fn record(&self, job: &str) -> Option<Record> {
        if !self.keeps_history() {
            return None;
        }
        Some(Record {
            stream: history::history_key(self.spec.key_prefix(), job),
            instance: self.spec.instance_id().map(str::to_owned),
            refused: self.history_refused.clone(),
        })
    }

    /// Whether this locker's releases record their runs: the spec's `history`, and not on a
    /// Cluster.
    pub fn keeps_history(&self) -> bool {
        self.spec.history() && !matches!(self.spec.address(), Address::Cluster { .. })
    }

    /// The last `limit` recorded runs of `job` (see [`crate::job_of`]), the newest first. One
    /// round trip; empty when none is recorded.
    pub fn history(&self, job: &str, limit: usize) -> Result<Vec<Run>> {
        validate_name(job)?;
        self.history_on()?;
        let key = history::history_key(self.spec.key_prefix(), job);
        let read = |conn: &mut Conn| -> RedisResult<Vec<(String, Vec<String>)>> {
            redis::cmd("XREVRANGE")
                .arg(&key)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(limit.max(1))
                .query(conn)
        };
        let entries = self.pool.run(
            &format_args!("reading the history of job '{job}'"),
            read,
            read,
        )?;
        Ok(entries
            .iter()
            .filter_map(|(id, fields)| Run::parse(id, fields))
            .collect())
    }

    /// The jobs with a recorded run, the most recently recorded first, at most `limit` of them:
    /// found by `SCAN` over the history's streams (at most [`SCAN_BUDGET`] keys looked at), and
    /// the last entry of each, pipelined.
    pub fn jobs(&self, limit: usize) -> Result<Vec<Job>> {
        self.history_on()?;
        let prefix = self.spec.key_prefix();
        let glob = history::history_glob(prefix);
        let read = |conn: &mut Conn| -> RedisResult<Vec<Job>> {
            let mut jobs = Vec::new();
            scan(conn, &glob, |conn, keys| {
                if !keys.is_empty() {
                    let mut pipe = redis::pipe();
                    for key in &keys {
                        pipe.cmd("XREVRANGE")
                            .arg(key)
                            .arg("+")
                            .arg("-")
                            .arg("COUNT")
                            .arg(1);
                    }
                    let lasts: Vec<Vec<(String, Vec<String>)>> = pipe.query(conn)?;
                    for (key, last) in keys.iter().zip(lasts) {
                        let (Some(job), Some((id, _))) =
                            (history::job_of_key(prefix, key), last.first())
                        else {
                            continue; // expired meanwhile
                        };
                        jobs.push(Job {
                            name: job.to_owned(),
                            last_recorded_unix_ms: id
                                .split('-')
                                .next()
                                .and_then(|ms| ms.parse().ok())
                                .unwrap_or(0),
                        });
                    }
                }
                Ok(true)
            })?;
            jobs.sort_by(|a, b| {
                (b.last_recorded_unix_ms, &a.name).cmp(&(a.last_recorded_unix_ms, &b.name))
            });
            jobs.dedup_by(|a, b| a.name == b.name);
            jobs.truncate(limit.max(1));
            Ok(jobs)
        };
        self.pool
            .run(&format_args!("listing the jobs with a history"), read, read)
    }

    fn history_on(&self) -> Result<()> {
        self.not_on_cluster("a Redis Cluster keeps no run history (a script touches one slot only)")
    }

    fn not_on_cluster(&self, why: &'static str) -> Result<()> {
        if matches!(self.spec.address(), Address::Cluster { .. }) {
            return Err(Error::invalid("conn", why));
        }
        Ok(())
    }

    /// The locks held now whose names match the glob `pattern` (`*` for all), by `SCAN` over the
    /// key prefix: at most `limit` of them, and at most [`SCAN_BUDGET`] keys looked at, so that
    /// a big keyspace costs a bounded time. Sorted by name. Not on a Cluster.
    pub fn locks(&self, pattern: &str, limit: usize) -> Result<Vec<HeldLock>> {
        self.not_on_cluster("listing the locks of a Redis Cluster is not supported yet (SCAN is per node); inspect a lock by its name")?;
        let prefix = self.spec.key_prefix();
        let mut glob = history::escape_glob(prefix);
        glob.push_str(pattern);
        let list = |conn: &mut Conn| -> RedisResult<Vec<HeldLock>> {
            let mut found = Vec::new();
            scan(conn, &glob, |conn, keys| {
                let keys: Vec<String> = keys
                    .into_iter()
                    .filter(|k| !history::is_history_key(prefix, k))
                    .collect();
                if !keys.is_empty() {
                    let mut pipe = redis::pipe();
                    for key in &keys {
                        pipe.get(key).pttl(key);
                    }
                    let replies: Vec<RedisResult<redis::Value>> =
                        pipe.ignore_errors().query(conn)?;
                    for (key, pair) in keys.iter().zip(replies.chunks_exact(2)) {
                        // A key of another type (WRONGTYPE) is not a lock.
                        let value = pair[0].as_ref().ok().and_then(|v| {
                            redis::from_redis_value::<Option<String>>(v.clone()).ok()
                        });
                        let Some(Some(value)) = value else {
                            continue;
                        };
                        let pttl = pair[1]
                            .as_ref()
                            .ok()
                            .and_then(|v| redis::from_redis_value::<i64>(v.clone()).ok())
                            .unwrap_or(-1);
                        found.push(held(&key[prefix.len()..], &value, pttl));
                    }
                }
                Ok(found.len() < limit)
            })?;
            found.sort_by(|a, b| a.name.cmp(&b.name));
            found.truncate(limit);
            Ok(found)
        };
        self.pool
            .run(&format_args!("listing the held locks"), list, list)
    }

    /// An operator's forced release of lock `name`: deletes it if it holds `token` (as
    /// [`Locker::locks`] shows it), and records that in the job's history, with `by` (who
    /// forced it). Only that holder's lock is deleted: one taken since by another stays.
    pub fn force_release(&self, name: &str, token: &str, by: &str) -> Result<ForcedRelease> {
        validate_name(name)?;
        if token.len() != 36 || uuid::Uuid::parse_str(token).is_err() {
            return Err(Error::invalid(
                "token",
                "the token must be the 36 characters that 'dibs locks --show-tokens' shows",
            ));
        }
        let key = self.key(name);
        let stream = history::history_key(self.spec.key_prefix(), crate::job_of(name));
        let keys = [key.as_str(), stream.as_str()];
        // The record's fields around the holder's start, pid and host (`history::record`).
        let (before, after) = ("forced;;0;0;0;", format!(";{};{name}", history::field(by)));
        let force = |conn: &mut Conn| -> RedisResult<i64> {
            script::FORCE_RELEASE.run_with(conn, &keys, after.len() + 96, |cmd| {
                cmd.arg(token)
                    .arg(history::HISTORY_LENGTH)
                    .arg(history::HISTORY_TTL.as_millis() as u64)
                    .arg(before)
                    .arg(&after);
            })
        };
        let found = self
            .pool
            .run(&format_args!("force-releasing lock '{name}'"), force, force)?;
        Ok(match found {
            1 => ForcedRelease::Released,
            0 => ForcedRelease::Free,
            _ => ForcedRelease::OtherHolder,
        })
    }

    /// [`Lease::release`], for callers that hold the locker anyway.
    pub fn release(&self, lease: Lease) -> Ending {
        lease.release()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connspec::SpecValue;

    fn spec(prefix: &str, keep_alive: bool, db: i128) -> ConnSpec {
        // A port nobody listens on: making lockers does no network I/O.
        ConnSpec::from_map(&[
            ("uri".into(), SpecValue::Str("redis://127.0.0.1:1".into())),
            ("key-prefix".into(), SpecValue::Str(prefix.into())),
            ("keep-alive".into(), SpecValue::Bool(keep_alive)),
            ("db".into(), SpecValue::Int(db)),
        ])
        .unwrap()
    }

    #[test]
    fn shared_lockers_of_one_server_share_one_pool() {
        let a = Locker::shared(spec("unit-a:", false, 5)).unwrap();
        let b = Locker::shared(spec("unit-b:", true, 5)).unwrap();
        let c = Locker::shared(spec("unit-a:", false, 6)).unwrap();
        assert!(!std::ptr::eq(a, b));
        assert!(std::ptr::eq(
            a,
            Locker::shared(spec("unit-a:", false, 5)).unwrap()
        ));
        assert!(Arc::ptr_eq(&a.pool, &b.pool));
        assert!(!Arc::ptr_eq(&a.pool, &c.pool));
        assert_eq!(
            (a.key("n"), b.key("n")),
            ("unit-a:n".into(), "unit-b:n".into())
        );
        assert!(!a.spec().keep_alive() && b.spec().keep_alive());
        // Lockers of their own never share.
        let own = Locker::new(spec("unit-a:", false, 5)).unwrap();
        assert!(!Arc::ptr_eq(&a.pool, &own.pool));
    }

    fn invalid(result: Result<LockParams>) -> (&'static str, String) {
        match result {
            Err(Error::InvalidArgument { arg, message }) => (arg, message),
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    #[test]
    fn valid_params() {
        let p = LockParams::from_secs("nightly report 2026-11-30 — ü", 600, 30).unwrap();
        assert_eq!(p.at_most(), Duration::from_secs(600));
        assert_eq!(p.at_least(), Duration::from_secs(30));
        let p = LockParams::from_millis("x", 1, 1).unwrap();
        assert_eq!(p.at_least(), Duration::from_millis(1));
        assert!(LockParams::from_secs(&"n".repeat(MAX_NAME_BYTES), 1, 0).is_ok());
    }

    #[test]
    fn invalid_params_name_the_argument_and_value() {
        let cases = [
            (
                LockParams::from_secs("", 10, 0),
                "lockName",
                "must not be empty",
            ),
            (
                LockParams::from_secs(&"n".repeat(MAX_NAME_BYTES + 1), 10, 0),
                "lockName",
                "513 bytes",
            ),
            (
                LockParams::from_secs("a\nb", 10, 0),
                "lockName",
                "U+000A at byte 1",
            ),
            (LockParams::from_secs("a\0", 10, 0), "lockName", "U+0000"),
            (
                LockParams::from_secs("x", 0, 0),
                "atMost",
                "positive, got 0 s",
            ),
            (LockParams::from_secs("x", -5, 0), "atMost", "got -5 s"),
            (
                LockParams::from_millis("x", 10, -1),
                "atLeast",
                "negative, got -1 ms",
            ),
            (
                LockParams::from_secs("x", 5, 10),
                "atLeast",
                "atLeast (10 s) must not exceed atMost (5 s)",
            ),
            (
                LockParams::from_secs("x", i64::MAX, 0),
                "atMost",
                "overflows",
            ),
            (
                LockParams::from_secs("x", 10, i64::MAX),
                "atLeast",
                "overflows",
            ),
            (
                LockParams::from_millis("x", i64::MAX, 0),
                "atMost",
                "beyond what Redis can expire",
            ),
        ];
        for (result, arg, fragment) in cases {
            let (got_arg, message) = invalid(result);
            assert_eq!(got_arg, arg, "{message}");
            assert!(message.contains(fragment), "{message}");
        }
    }
}
