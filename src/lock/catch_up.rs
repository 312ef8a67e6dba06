//! Catch-up of missed ticks: whether a tick of a job ran, as its lock (running, or its done-mark)
//! and its job's history prove, and the acquire of a tick that did not, with the look and the
//! `SET` in one script (`script::CATCH_UP_ACQUIRE`), so that no two instances run one tick.
//!
//! A tick ran when its lock is there or its job's history has a run of it, whatever the run's
//! ending. A tick due before the job's first recorded run (a new job's) is not a missed one. A
//! holder that died mid-run recorded nothing: once its lock expires, its tick counts as missed.
//! When the history cannot prove either way (trimmed past the tick, or dropped), the tick's
//! state is unknown, and it is not run. A tick due longer than [`MAX_CATCH_UP_AGE`] ago is
//! beyond catch-up's reach: not looked at, and not run, without an error, so that a window of
//! the longest length, whose oldest tick passes the limit while the ticks are looked at, never
//! keeps the ticks after it from running.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::history;
use crate::script;

use super::lease::Lease;
use super::params::LockParams;
use super::{Acquire, Locker};

/// `script::CATCH_UP_ACQUIRE`'s answer: the history has a run of the tick.
pub(super) const RAN: i64 = -2;
/// Its answer when looking only: the tick was missed.
const MISSED: i64 = -4;
/// Its answer when looking only: the job has no recorded run from before the tick was due.
const BEFORE_FIRST_RUN: i64 = -5;
/// The instance's clock runs more than [`CLOCK_SKEW`] ahead of the server's.
pub(super) const CLOCK_AHEAD: i64 = -6;

/// How far ahead of the server's clock an instance's may run, for the history's proof that it
/// reaches back to a tick: a run may start before its tick is due by the server's clock.
pub const CLOCK_SKEW: Duration = Duration::from_millis(script::clock_skew_ms!());

/// How far back catch-up looks: well inside the history's 40 days after its last entry.
pub const MAX_CATCH_UP_AGE: Duration = Duration::from_secs(30 * 24 * 3600);

/// Whether a tick ran, as its lock and its job's history prove.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickState {
    /// Its lock is there (running, or its done-mark), or the history has a run of it.
    Ran,
    /// No lock, and the history proves no run of it.
    Missed,
    /// The history cannot prove either: trimmed past the tick, or dropped.
    Unknown,
    /// The job has no recorded run from before the tick was due: a new job (no run at all in
    /// the history's 40 days), or a tick that predates its first run. Not a tick it missed: a new
    /// job's first deploy runs no backlog, even when its first run is recorded meanwhile.
    BeforeFirstRun,
    /// Due longer than [`MAX_CATCH_UP_AGE`] ago: catch-up looks back no further, and did not look.
    BeyondReach,
}

/// What the acquire of a tick found.
// A lease moves once, from the acquire to its caller, as `Option<Lease>` did: boxing it would
// cost every acquire an allocation.
#[allow(clippy::large_enum_variant)]
#[must_use = "a won lease must be released"]
pub enum TickAcquire {
    Won(Lease),
    /// Its lock is there: running, or its done-mark.
    Taken,
    /// The history has a run of it.
    Ran,
    /// The history cannot prove that it did not run: not tried.
    Unknown,
    /// Due longer than [`MAX_CATCH_UP_AGE`] ago: not looked at, not tried.
    BeyondReach,
    /// Won, not confirmed in time, and given back (see [`super::Acquire::Unconfirmed`]).
    Unconfirmed(String),
}

/// The warning for a tick whose state is unknown: it is not run, and an operator should know.
pub fn unknown_tick(name: &str) -> String {
    format!(
        "tick lock '{name}': whether it ran is unknown (its job's history was trimmed past it, or \
         dropped), so catch-up does not run it; `dibs history` shows what the history holds"
    )
}

/// What the script needs for the history's look (see `script::CATCH_UP_ACQUIRE`).
pub(super) struct TickCheck {
    pub(super) stream: String,
    pub(super) index: String,
    pub(super) evicted: String,
    name: String,
    due_unix_ms: u64,
    /// This instance's clock when the call began (Unix ms), for the script's check against the
    /// server's (`CLOCK_AHEAD`).
    now_unix_ms: u64,
    /// The run is a catch-up's: recorded as such.
    pub(super) catch_up: bool,
    /// A run whose task failed does not count as the tick's (`retry-failed-ticks`).
    retry_failed: bool,
    /// Nor does a start whose end was never recorded (`retry-unended-ticks`).
    retry_unended: bool,
}

impl TickCheck {
    /// The script's `ARGV[4..9]` (`CATCH_UP_ACQUIRE`'s, and `CLAIM`'s).
    pub(super) fn args(&self, cmd: &mut redis::Cmd, look_only: bool) {
        cmd.arg(&self.name)
            .arg(self.due_unix_ms)
            .arg(u8::from(look_only))
            .arg(u8::from(self.retry_failed))
            .arg(u8::from(self.retry_unended))
            .arg(self.now_unix_ms);
    }

    /// Why this call's tick cannot be judged: the instance's clock runs ahead of the server's.
    pub(super) fn clock_ahead(&self, endpoint: &str) -> Error {
        Error::ClockAhead(format!(
            "tick lock '{}': this instance's clock is more than {} s ahead of {endpoint}'s, so \
             catch-up cannot compare its due times with the history's entries, and runs no tick \
             it cannot prove missed; keep the clocks in step (NTP)",
            self.name,
            CLOCK_SKEW.as_secs()
        ))
    }
}

impl Locker {
    /// Whether the tick of `params` (made with [`LockParams::for_tick`]), due at `due_unix_ms`,
    /// ran. One round trip; it changes nothing.
    pub fn tick_state(&self, params: &LockParams, due_unix_ms: u64) -> Result<TickState> {
        let Some(check) = self.tick_check(params, due_unix_ms)? else {
            return Ok(TickState::BeyondReach);
        };
        let key = self.key(&params.name);
        let name = &params.name;
        let found = if self.history_apart() {
            // The lock's slot, then the history's (see `script::CLAIM`).
            let exists =
                |conn: &mut crate::conn::Conn| redis::cmd("EXISTS").arg(&key).query::<i64>(conn);
            let exists =
                self.pool
                    .run(&format_args!("looking up tick '{name}'"), exists, exists)?;
            if exists == 1 {
                return Ok(TickState::Ran);
            }
            let keys = [
                check.stream.as_str(),
                check.index.as_str(),
                check.evicted.as_str(),
            ];
            let look = |conn: &mut crate::conn::Conn| {
                script::CLAIM.run_with::<Option<i64>>(conn, &keys, 128, |cmd| {
                    cmd.arg(0).arg(0).arg(0);
                    check.args(cmd, true);
                })
            };
            self.pool
                .run(&format_args!("looking up tick '{name}'"), look, look)?
        } else {
            let keys = [
                key.as_str(),
                check.stream.as_str(),
                check.index.as_str(),
                check.evicted.as_str(),
            ];
            let look = |conn: &mut crate::conn::Conn| {
                script::CATCH_UP_ACQUIRE.run_with::<Option<i64>>(conn, &keys, 128, |cmd| {
                    cmd.arg("").arg(0).arg(0);
                    check.args(cmd, true);
                })
            };
            self.pool
                .run(&format_args!("looking up tick '{name}'"), look, look)?
        };
        Ok(match found {
            Some(CLOCK_AHEAD) => return Err(check.clock_ahead(&self.spec.endpoint())),
            Some(MISSED) => TickState::Missed,
            Some(BEFORE_FIRST_RUN) => TickState::BeforeFirstRun,
            Some(RAN) | None => TickState::Ran,
            Some(_) => TickState::Unknown,
        })
    }

    /// The acquire of a tick that may not have run: won only when its lock is free and the
    /// history proves that no run of it was recorded, in one script. Otherwise as
    /// [`Locker::acquire`], durable acquire included. With `catch_up`, the lease records its run
    /// as a catch-up's (a tick run after its time), and a tick whose state is unknown is not
    /// run. Without it (the tick due now), a state the history cannot prove falls back to the
    /// ordinary acquire: the tick due now is never refused for a busy job's short history, and
    /// has at least `executeOnce`'s guarantee (its done-mark).
    pub fn acquire_unrun(
        &self,
        params: &LockParams,
        due_unix_ms: u64,
        catch_up: bool,
    ) -> Result<TickAcquire> {
        let found = match self.tick_check(params, due_unix_ms)? {
            Some(check) => {
                let check = TickCheck { catch_up, ..check };
                match self.acquire_checked(params, Some(&check)) {
                    // The tick due now needs no proof from the history: its own lock (its
                    // done-mark) is enough. Said in the lease's warning.
                    Err(Error::ClockAhead(why)) if !catch_up => {
                        return Ok(match self.acquire(params)? {
                            Acquire::Won(mut lease) => {
                                lease.add_warning(why);
                                TickAcquire::Won(lease)
                            }
                            Acquire::Taken => TickAcquire::Taken,
                            Acquire::Unconfirmed(why) => TickAcquire::Unconfirmed(why),
                        });
                    }
                    found => found?,
                }
            }
            None => TickAcquire::BeyondReach,
        };
        match found {
            TickAcquire::Unknown | TickAcquire::BeyondReach if !catch_up => {
                Ok(match self.acquire(params)? {
                    Acquire::Won(lease) => TickAcquire::Won(lease),
                    Acquire::Taken => TickAcquire::Taken,
                    Acquire::Unconfirmed(why) => TickAcquire::Unconfirmed(why),
                })
            }
            found => Ok(found),
        }
    }

    /// Validates a catch-up's request, before any network I/O; `None` for a tick beyond
    /// catch-up's reach.
    fn tick_check(&self, params: &LockParams, due_unix_ms: u64) -> Result<Option<TickCheck>> {
        if !params.tick {
            return Err(Error::invalid(
                "tick",
                format!(
                    "catch-up is for the ticks of a job (executeOnce), not lock '{}'",
                    params.name
                ),
            ));
        }
        if !self.keeps_history() {
            return Err(Error::invalid(
                "catchUp",
                "catch-up needs the run history, which proves which ticks ran: \
                 the conn's 'history' is off",
            ));
        }
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let reach = MAX_CATCH_UP_AGE.as_millis() as u64;
        if due_unix_ms > now_ms + reach {
            return Err(Error::invalid(
                "due",
                format!(
                    "tick '{}' is due at Unix ms {due_unix_ms}, more than {} days from now",
                    params.name,
                    MAX_CATCH_UP_AGE.as_secs() / 86_400
                ),
            ));
        }
        if due_unix_ms < now_ms.saturating_sub(reach) {
            return Ok(None);
        }
        let prefix = self.spec.key_prefix();
        Ok(Some(TickCheck {
            stream: history::stream_key(prefix, params.job()),
            index: history::index_key(prefix),
            evicted: history::evicted_key(prefix),
            name: params.name.clone(),
            due_unix_ms,
            now_unix_ms: now_ms,
            catch_up: false,
            retry_failed: self.spec.retry_failed_ticks(),
            retry_unended: self.spec.retry_unended_ticks(),
        }))
    }
}
