//! A tick's run is recorded from its start (see `script::tick`): what the acquire's script needs
//! to write the start's entry, what its reply says, and on a Cluster, where the history lives in
//! another slot than the lock, the claim on the history's slot that follows the `SET`.

use redis::{RedisResult, Value};

use crate::conn::Conn;
use crate::error::Result;
use crate::history;
use crate::script;

use super::acquire::{Acked, Wait};
use super::catch_up::{TickAcquire, TickCheck, CLOCK_AHEAD, RAN};
use super::lease::Record;
use super::params::LockParams;
use super::Locker;

/// What the start's entry of a tick's run needs, beside the holder's value (`script::tick`'s
/// `started`).
pub(super) struct TickStart {
    pub(super) stream: String,
    pub(super) index: String,
    pub(super) evicted: String,
    /// The entry before its fencing token.
    head: String,
    instance: String,
    name: String,
}

impl TickStart {
    /// For a lock of a tick whose job keeps a history; `None` for any other lock.
    pub(super) fn of(
        params: &LockParams,
        record: Option<&Record>,
        catch_up: bool,
    ) -> Option<TickStart> {
        let record = record.filter(|_| params.tick)?;
        Some(TickStart {
            stream: record.stream.clone(),
            index: record.place.index.clone(),
            evicted: record.place.evicted.clone(),
            head: history::started_head(params.at_least_ms, catch_up),
            instance: record.place.instance.clone().unwrap_or_default(),
            name: params.name.clone(),
        })
    }

    /// The keys after the lock's: the job's stream, the index of jobs, the eviction's mark.
    pub(super) fn keys(&self) -> [&str; 3] {
        [&self.stream, &self.index, &self.evicted]
    }

    /// `started`'s four `ARGV`s, for the holder `value`.
    pub(super) fn args(&self, cmd: &mut redis::Cmd, value: &str) {
        cmd.arg(history::HISTORY_LENGTH)
            .arg(history::HISTORY_TTL.as_millis() as u64)
            .arg(&self.head)
            .arg(record_tail(value, &self.instance, &self.name));
    }
}

/// The record's part after the fencing token, from the holder's value
/// (`token;host;pid;acquired-at-unix-ms`, see `holder`).
pub(super) fn record_tail(value: &str, instance: &str, name: &str) -> String {
    let mut holder = value.splitn(4, ';').skip(1);
    let (host, pid, start) = (
        holder.next().unwrap_or_default(),
        holder.next().unwrap_or_default(),
        holder.next().unwrap_or_default(),
    );
    history::record_tail(start, pid, host, instance, name)
}

/// What an acquire's script answered: the fencing token when won (a catch-up's verdicts below
/// zero), and the id of the run's start's entry where it wrote one.
pub(super) struct Acquired {
    pub(super) fence: Option<i64>,
    pub(super) started: Option<String>,
}

impl Acquired {
    /// Reads `ACQUIRE`'s integer or nil, and `TICK_ACQUIRE`'s `{token, id}`.
    pub(super) fn read(reply: Value) -> RedisResult<Acquired> {
        let (fence, started) = match reply {
            Value::Array(pair) => {
                let (fence, id): (i64, String) = redis::from_redis_value(Value::Array(pair))?;
                (Some(fence), (!id.is_empty()).then_some(id))
            }
            other => (redis::from_redis_value(other)?, None),
        };
        Ok(Acquired { fence, started })
    }
}

impl Locker {
    /// Gives back a lock just won whose task must not run (durable acquire could not confirm
    /// it, a claim failed), token-checked; a tick's start's entry goes with it, so that catch-up
    /// never takes a task that did not run for one that did (`script::UNSTART`, or on a Cluster
    /// `script::FORGET_START` on the history's slot after the lock's `RELEASE`).
    pub(super) fn take_back(&self, name: &str, key: &str, value: &str, start: Option<&TickStart>) {
        let Some(start) = start else {
            return self.give_back(name, key, value);
        };
        let capacity = value.len() + name.len() + 8;
        let what = format_args!("giving back lock '{name}'");
        if self.history_apart() {
            self.give_back(name, key, value);
            let forget = |conn: &mut Conn| {
                script::FORGET_START.run_with::<i64>(conn, &[&start.stream], capacity, |cmd| {
                    cmd.arg(value).arg(name);
                })
            };
            let _ = self.pool.run(&what, forget, forget);
        } else {
            let unstart = |conn: &mut Conn| {
                script::UNSTART.run_with::<i64>(conn, &[key, &start.stream], capacity, |cmd| {
                    cmd.arg(value).arg(name);
                })
            };
            let _ = self.pool.run(&what, unstart, unstart);
        }
    }

    /// Whether a job's history lives in another slot than its locks (a Cluster).
    pub(super) fn history_apart(&self) -> bool {
        self.history.as_ref().is_some_and(|place| place.apart)
    }

    /// On a Cluster, once the tick's lock was won with `value`: the look of catch-up (with a
    /// `check`) and the start's entry, on the history's slot (`script::CLAIM`). The id of the
    /// start's entry, or what catch-up found instead: then the lock is given back and the task
    /// does not run. Without a check (a tick run without catch-up) the entry is the history's
    /// alone: a failure to write it is no reason not to run, and the id is `None`.
    ///
    /// With a check and durable acquire's `wait`, the start's entry is waited for as the lock
    /// was, on the connection that wrote it: a failover of the history's master must not lose
    /// the proof that the tick started, or catch-up runs it again. Unconfirmed, the lock and the
    /// start are taken back and the call fails as an unconfirmed lock does.
    pub(super) fn claim(
        &self,
        start: &TickStart,
        check: Option<&TickCheck>,
        key: &str,
        value: &str,
        fence: u64,
        wait: Option<Wait>,
    ) -> Result<std::result::Result<Option<String>, TickAcquire>> {
        let keys = start.keys();
        let wait = wait.filter(|_| check.is_some());
        let claim = |conn: &mut Conn, retry: bool| -> RedisResult<(Acquired, Option<Acked>)> {
            let args = |cmd: &mut redis::Cmd| {
                cmd.arg(fence).arg(0).arg(u8::from(retry));
                match check {
                    Some(check) => check.args(cmd, false),
                    None => {
                        cmd.arg("").arg(0).arg(0).arg(0).arg(0).arg(0);
                    }
                }
                start.args(cmd, value);
                cmd.arg(u8::from(check.is_none()));
            };
            let Some(wait) = wait else {
                return Ok((
                    Acquired::read(script::CLAIM.run_with(conn, &keys, 256, args)?)?,
                    None,
                ));
            };
            // The WAIT behind the CLAIM, in its pipeline: on the history's master, on the
            // connection that wrote the start.
            let (reply, acked) = script::CLAIM.run_then(conn, &keys, 256, args, &wait.cmd())?;
            let acquired = Acquired::read(reply)?;
            let acked = match acquired.fence {
                Some(token) if token >= 0 => Some(wait.read(acked?)?),
                _ => None,
            };
            Ok((acquired, acked))
        };
        let name = &start.name;
        let found = self.pool.run(
            &format_args!("recording the start of tick '{name}'"),
            |conn| claim(conn, false),
            |conn| claim(conn, true),
        );
        if let (Ok((_, Some(acked))), Some(wait)) = (&found, wait) {
            if !wait.confirmed(*acked) {
                self.take_back(name, key, value, Some(start));
                if !wait.explicit {
                    // The replica may have left for good: the next call counts again.
                    self.pool.forget_replicas();
                }
                return Ok(Err(TickAcquire::Unconfirmed(wait.unconfirmed_start(
                    name,
                    *acked,
                    &self.spec.endpoint(),
                ))));
            }
        }
        let verdict = match (found.map(|(acquired, _)| acquired), check) {
            (
                Ok(Acquired {
                    fence: Some(token),
                    started,
                }),
                _,
            ) if token >= 0 => return Ok(Ok(started)),
            // Without catch-up the entry is the history's alone.
            (_, None) => return Ok(Ok(None)),
            (
                Ok(Acquired {
                    fence: Some(RAN), ..
                }),
                Some(_),
            ) => TickAcquire::Ran,
            (
                Ok(Acquired {
                    fence: Some(CLOCK_AHEAD),
                    ..
                }),
                Some(check),
            ) => {
                self.give_back(name, key, value);
                return Err(check.clock_ahead(&self.spec.endpoint()));
            }
            (Ok(_), Some(_)) => TickAcquire::Unknown,
            (Err(e), Some(_)) => {
                // Its start may have been written, its reply lost.
                self.take_back(name, key, value, Some(start));
                return Err(e);
            }
        };
        self.give_back(name, key, value);
        Ok(Err(verdict))
    }
}
