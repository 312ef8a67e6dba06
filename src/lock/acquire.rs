//! The acquire: `SET NX PX` with its fencing token in one script, and durable acquire's `WAIT`
//! in the same round trip.

use std::time::Instant;

use redis::{ErrorKind, RedisResult, ServerErrorKind};

use crate::conn::Conn;
use crate::connspec::{Address, Durable};
use crate::error::{first_line, Error, Result};
use crate::holder::{self};
use crate::keepalive::{KeepAlive, Schedule};
use crate::pool::Pool;
use crate::script;
use crate::sweeper;

use super::catch_up::{TickAcquire, TickCheck, CLOCK_AHEAD, RAN};
use super::lease::Lease;
use super::params::LockParams;
use super::tick_start::{Acquired, TickStart};
use super::{Acquire, Locker};

impl Locker {
    /// `SET key value NX PX atMost` with its fencing token (`script::ACQUIRE`), and with durable
    /// acquire, `WAIT` (or `WAITAOF`) in the same round trip. `None` when someone else holds the
    /// lock. [`Acquire::Unconfirmed`] when the lock was won but not confirmed in time: it was
    /// given back, and the task must not run. With keep-alive in the spec, the lease's extender
    /// starts here.
    pub fn acquire(&self, params: &LockParams) -> Result<Acquire> {
        Ok(match self.acquire_checked(params, None)? {
            TickAcquire::Won(lease) => Acquire::Won(lease),
            TickAcquire::Unconfirmed(why) => Acquire::Unconfirmed(why),
            _ => Acquire::Taken,
        })
    }

    /// [`Locker::acquire`], and with a `check`, the acquire of a tick catch-up found missed
    /// (`script::CATCH_UP_ACQUIRE`): the history's look and the `SET` in one script.
    pub(super) fn acquire_checked(
        &self,
        params: &LockParams,
        check: Option<&TickCheck>,
    ) -> Result<TickAcquire> {
        let key = self.key(&params.name);
        let record = self.record(params.job());
        let catch_up = check.is_some_and(|c| c.catch_up);
        // A tick's run is recorded from its start: in the acquire's own script, or on a Cluster,
        // whose history lives in another slot, by a claim on that slot once the lock is won.
        let start = TickStart::of(params, record.as_ref(), catch_up);
        let apart = self.history_apart();
        let in_script = start.as_ref().filter(|_| !apart).map(|s| (s, check));
        let first_value = holder::new_value();
        // Decided on the connection the acquire uses: a new one has just counted the replicas.
        let wait = std::cell::Cell::new(None);
        // Set when a SET timed out and a delete of its value was queued behind it.
        let doomed = std::cell::Cell::new(false);
        // When the SET of the value tried was first sent: the lease is measured from there (a
        // retry of the same value keeps the expiry the first one may have set).
        let sent = std::cell::Cell::new(Instant::now());
        let set = |conn: &mut Conn, value: &str, retry: bool| -> RedisResult<Trip> {
            wait.set(self.wait(conn));
            if !retry {
                sent.set(Instant::now());
            }
            let reply = trip(
                conn,
                &key,
                value,
                params.at_most_ms,
                retry,
                wait.get(),
                &self.pool,
                in_script,
            );
            if reply.as_ref().is_err_and(|e| e.is_timeout()) {
                // No answer in time: the SET may still run when a frozen server thaws, and hold
                // the lock with nothing running. Queue a token-checked delete behind it on the
                // same socket: Redis runs the two in order, so no lock of ours outlives this.
                // Not behind a WAIT: the server blocks the connection there, finds it closed
                // meanwhile and drops what follows. Nor on a cluster connection, which has no
                // such socket. The sweeper deletes it then.
                // A tick's start, written in the same script, goes with it (`script::UNSTART`).
                let start = in_script.map(|(start, _)| (start.stream.clone(), params.name.clone()));
                let queued = wait.get().is_none()
                    && match &start {
                        Some((stream, name)) => {
                            script::UNSTART.queue_with(conn, &[&key, stream], &[value, name])
                        }
                        None => script::RELEASE.queue(conn, &key, value, 0),
                    };
                if !queued {
                    sweeper::sweep(self.pool.clone(), key.clone(), value.to_owned(), start);
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
        let found = self.pool.run(
            &format_args!("acquiring lock '{name}'"),
            |conn| set(conn, &first_value, false),
            set_again,
        )?;
        let value = retry_value.into_inner().unwrap_or(first_value);
        let fence = match found.acquired.fence {
            Some(token) if token >= 0 => token as u64,
            Some(RAN) => return Ok(TickAcquire::Ran),
            Some(CLOCK_AHEAD) => {
                return match check {
                    Some(check) => Err(check.clock_ahead(&self.spec.endpoint())),
                    None => Ok(TickAcquire::Unknown), // only a catch-up's look answers so
                };
            }
            Some(_) if check.is_some() => return Ok(TickAcquire::Unknown),
            _ => return Ok(TickAcquire::Taken),
        };
        // The start's claim on a Cluster waits as the lock did, if the lock's wait was answered.
        let claim_wait = wait.get().filter(|_| matches!(found.acked, Some(Ok(_))));
        let durability_warning = match (wait.get(), found.acked) {
            (Some(wait), Some(Ok(acked))) if !wait.confirmed(acked) => {
                self.take_back(name, &key, &value, start.as_ref());
                if !wait.explicit {
                    // The replica may have left for good: the next call counts again.
                    self.pool.forget_replicas();
                }
                if matches!(self.spec.address(), Address::Sentinel { .. }) {
                    // The server may be a stale master (paused, failed over, thawed, not yet
                    // demoted): the next call asks the Sentinels afresh.
                    self.pool.drop_idle();
                }
                return Ok(TickAcquire::Unconfirmed(wait.unconfirmed(
                    name,
                    acked,
                    &self.spec.endpoint(),
                )));
            }
            (Some(wait), Some(Err(refused))) if wait.explicit => {
                self.take_back(name, &key, &value, start.as_ref());
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
        let mut started = found.acquired.started;
        if let Some(start) = start.as_ref().filter(|_| apart) {
            match self.claim(start, check, &key, &value, fence, claim_wait)? {
                Ok(id) => started = id,
                Err(verdict) => return Ok(verdict),
            }
        }
        // The script answers 0 only where `TIME` was refused: the lock is ours, but no guarded
        // write will accept its token, and the task cannot tell that from being a stale holder.
        let fence_warning = (fence == 0 && self.pool.refuse_time()).then(|| {
            format!(
                "{} refused TIME, so every fencing token is 0 and a write guarded by it is \
                 refused, and catch-up cannot check this instance's clock: grant +time",
                self.spec.endpoint()
            )
        });
        if let Some(why) = self.refuse_late(
            (name, &key, &value),
            start.as_ref(),
            sent.get(),
            params.at_most_ms,
        ) {
            return Ok(TickAcquire::Unconfirmed(why));
        }
        let acquired = Instant::now();
        let schedule_warning = if self.spec.keep_alive() {
            self.schedule_warning(name, params.at_most_ms)
        } else {
            None
        };
        let warning = [durability_warning, fence_warning, schedule_warning]
            .into_iter()
            .flatten()
            .reduce(|a, b| format!("{a}; {b}"));
        let keep_alive = if self.spec.keep_alive() {
            // From the SET's send: the server may have set the expiry then, not at the reply.
            KeepAlive::start(
                self.pool.clone(),
                name.clone(),
                key.clone(),
                value.clone(),
                params.at_most_ms,
                sent.get(),
            )
        } else {
            None
        };
        Ok(TickAcquire::Won(Lease {
            pool: self.pool.clone(),
            name: name.clone(),
            key,
            value,
            acquired,
            set_at: sent.get(),
            at_most_ms: params.at_most_ms,
            at_least_ms: params.at_least_ms,
            keep_alive,
            warning,
            fence,
            tick: params.tick,
            retry_failed_tick: params.tick && self.spec.retry_failed_ticks(),
            record,
            started,
            catch_up,
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
    pub(super) fn give_back(&self, name: &str, key: &str, value: &str) {
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
}

/// What the acquire's round trip found: the fencing token when the lock was won, and durable
/// acquire's acknowledgement (replicas, or an error reply when the server refused the command).
struct Trip {
    /// The script's answer: the fencing token when won, `None` when taken, and a catch-up's
    /// verdicts below zero (see `script::CATCH_UP_ACQUIRE`); the id of a tick's start's entry.
    acquired: Acquired,
    acked: Option<RedisResult<Acked>>,
}

/// What `WAIT` (replicas) or `WAITAOF` (the master's own fsync, and replicas) acknowledged.
#[derive(Clone, Copy, Debug)]
pub(super) struct Acked {
    local: i64,
    replicas: i64,
}

/// What durable acquire asks of one call.
#[derive(Clone, Copy, Debug)]
pub(super) struct Wait {
    replicas: u32,
    /// `WAITAOF 1 replicas`, not `WAIT replicas`.
    aof: bool,
    /// Asked for by the spec (a refusal fails the call), not the default (a refusal is warned
    /// about once, then the server is used without).
    pub(super) explicit: bool,
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

    /// `WAIT`/`WAITAOF`, to pipeline behind the writes it waits for (on a Cluster, sent alone,
    /// it would go to every master).
    pub(super) fn cmd(&self) -> redis::Cmd {
        let mut cmd = redis::cmd(self.command());
        if self.aof {
            cmd.arg(1);
        }
        cmd.arg(self.replicas).arg(self.budget_ms);
        cmd
    }

    /// What the `WAIT`/`WAITAOF` of [`Wait::cmd`] answered.
    pub(super) fn read(&self, reply: redis::Value) -> RedisResult<Acked> {
        if self.aof {
            let (local, replicas): (i64, i64) = redis::from_redis_value(reply)?;
            Ok(Acked { local, replicas })
        } else {
            Ok(Acked {
                local: 0,
                replicas: redis::from_redis_value(reply)?,
            })
        }
    }

    pub(super) fn confirmed(&self, acked: Acked) -> bool {
        acked.replicas >= i64::from(self.replicas) && (!self.aof || acked.local >= 1)
    }

    pub(super) fn unconfirmed(&self, name: &str, acked: Acked, endpoint: &str) -> String {
        format!(
            "lock '{name}' on {endpoint} was won but not confirmed: {}",
            self.lacking(acked)
        )
    }

    /// [`Wait::unconfirmed`] for a tick's start in its job's history, on a Cluster.
    pub(super) fn unconfirmed_start(&self, name: &str, acked: Acked, endpoint: &str) -> String {
        format!(
            "lock '{name}' on {endpoint} was won, but the start of its run in its job's history \
             was not confirmed: {}",
            self.lacking(acked)
        )
    }

    fn lacking(&self, acked: Acked) -> String {
        let (wanted, budget) = (self.replicas, self.budget_ms);
        let local = if self.aof && acked.local < 1 {
            ", and the master's own AOF fsync did not happen"
        } else {
            ""
        };
        format!(
            "{} of {wanted} replicas acknowledged it within {budget} ms{local}, so a failover \
             could lose it; it was given back and the task did not run (durable acquire; a \
             replica lagging or cut off)",
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

/// The acquire's round trip: [`script::ACQUIRE`] (for a `tick`'s lock [`script::TICK_ACQUIRE`],
/// with a check [`script::CATCH_UP_ACQUIRE`]), then `WAIT`/`WAITAOF` when `wait` says so,
/// pipelined; EVAL again on NOSCRIPT. `retry`: a key already holding `value` is won too.
///
/// With a `WAIT`, the script goes as EVAL (its whole text) until the pool knows the server has
/// it: after a NOSCRIPT the pipeline's `WAIT` has already waited, and with a lagging replica
/// that is the whole budget, spent for nothing (a new master after a failover has no scripts).
#[allow(clippy::too_many_arguments)]
fn trip(
    conn: &mut Conn,
    key: &str,
    value: &str,
    at_most_ms: u64,
    retry: bool,
    wait: Option<Wait>,
    pool: &Pool,
    tick: Option<(&TickStart, Option<&TickCheck>)>,
) -> RedisResult<Trip> {
    let script = |cached: bool| {
        let Some((start, check)) = tick else {
            let mut cmd = script::ACQUIRE.call(cached, &[key], value.len() + 24);
            cmd.arg(value).arg(at_most_ms).arg(u8::from(retry));
            return cmd;
        };
        let [stream, index, evicted] = start.keys();
        let keys = [key, stream, index, evicted];
        let script = match check {
            Some(_) => &script::CATCH_UP_ACQUIRE,
            None => &script::TICK_ACQUIRE,
        };
        let mut cmd = script.call(cached, &keys, value.len() + 256);
        cmd.arg(value).arg(at_most_ms).arg(u8::from(retry));
        if let Some(check) = check {
            check.args(&mut cmd, false);
        }
        start.args(&mut cmd, value);
        cmd
    };
    let Some(wait) = wait else {
        let cmd = script(true);
        let reply: redis::Value = match cmd.query(conn) {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                script(false).query(conn)?
            }
            other => other?,
        };
        pool.set_scripts_cached(true);
        return Ok(Trip {
            acquired: Acquired::read(reply)?,
            acked: None,
        });
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
                let acquired =
                    trip(conn, key, value, at_most_ms, retry, None, pool, tick)?.acquired;
                return Ok(Trip {
                    acquired,
                    acked: Some(Err(e)),
                });
            }
            replies => replies?,
        };
        let acked = replies.pop().unwrap_or(Ok(redis::Value::Nil));
        let acquired = match replies.pop().unwrap_or(Ok(redis::Value::Nil)) {
            Err(e) if cached && e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                continue
            }
            reply => Acquired::read(reply?)?,
        };
        pool.set_scripts_cached(true);
        let acked = acked.and_then(|v| wait.read(v));
        return Ok(Trip {
            acquired,
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
