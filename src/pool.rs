//! A small pool of synchronous connections per server: the connection part of a
//! [`ConnSpec`](crate::ConnSpec), without the key prefix and keep-alive, which are the locker's.
//!
//! Why synchronous connections and not one multiplexed connection: a lock cycle is two strictly
//! sequential round trips made from a caller's own thread, so a blocking socket per in-flight
//! call has no scheduling hop and no runtime to start inside the JVM. `benches/pool_vs_multiplexed/`
//! measures both; the README carries the figures.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use redis::{ErrorKind, RedisResult, ServerErrorKind, Value};

use crate::conn::{Conn, Opener};
use crate::connspec::{Address, ServerSpec};
use crate::error::{Error, Limit, Result};

pub(crate) struct Pool {
    spec: ServerSpec,
    opener: Opener,
    state: Mutex<State>,
    returned: Condvar,
    /// Durable acquire's view of the server (see `lock`): the replicas its last new connection
    /// found (`INFO replication`; -1 before anyone asked), whether anyone asks, and whether the
    /// server refused `WAIT`.
    replicas: AtomicI64,
    count_replicas: AtomicBool,
    wait_refused: AtomicBool,
    /// Whether a fencing token of 0 (the ACL refused `TIME`) was warned about.
    time_refused: AtomicBool,
    /// Whether the server is known to have the acquire's script cached (see `lock::trip`):
    /// false at first, and again once its connections were found dead (a restart, a failover).
    scripts_cached: AtomicBool,
}

struct State {
    /// Idle connections, with when each was returned; the newest last.
    idle: Vec<(Conn, Instant)>,
    /// Connections that exist: idle plus checked out.
    open: usize,
    /// Callers blocked in `checkout`; a return wakes one only when there is one (no futex
    /// call on the common path).
    waiting: usize,
}

impl Pool {
    /// Builds the client; no network I/O happens until the first call.
    pub(crate) fn new(spec: ServerSpec) -> Result<Pool> {
        Ok(Pool {
            opener: Opener::new(&spec)?,
            spec,
            state: Mutex::new(State {
                idle: Vec::new(),
                open: 0,
                waiting: 0,
            }),
            returned: Condvar::new(),
            replicas: AtomicI64::new(-1),
            count_replicas: AtomicBool::new(false),
            wait_refused: AtomicBool::new(false),
            time_refused: AtomicBool::new(false),
            scripts_cached: AtomicBool::new(false),
        })
    }

    /// Counts the server's replicas at every new connection from now on (one `INFO
    /// replication` each), for [`replicas`](Pool::replicas). No I/O.
    pub(crate) fn count_replicas(&self) {
        self.count_replicas.store(true, Ordering::Relaxed);
    }

    /// The replicas the server reported connected when this pool last opened a connection; if
    /// none was opened since [`count_replicas`](Pool::count_replicas), asks on `conn`;
    /// [`REPLICAS_UNKNOWN`] when the server refuses `INFO`.
    pub(crate) fn replicas(&self, conn: &mut Conn) -> i64 {
        let known = self.replicas.load(Ordering::Relaxed);
        if known != -1 {
            return known;
        }
        let n = count_replicas(conn).unwrap_or(0);
        self.replicas.store(n, Ordering::Relaxed);
        n
    }

    /// Whether the server is known to hold the acquire's script (it ran since the connections
    /// were last found dead).
    pub(crate) fn scripts_cached(&self) -> bool {
        self.scripts_cached.load(Ordering::Relaxed)
    }

    pub(crate) fn set_scripts_cached(&self, cached: bool) {
        self.scripts_cached.store(cached, Ordering::Relaxed);
    }

    /// Whether the last count of the replicas was refused (`INFO` not allowed).
    pub(crate) fn replicas_unknown(&self) -> bool {
        self.replicas.load(Ordering::Relaxed) == REPLICAS_UNKNOWN
    }

    /// Makes the next [`replicas`](Pool::replicas) count again.
    pub(crate) fn forget_replicas(&self) {
        self.replicas.store(-1, Ordering::Relaxed);
    }

    /// Whether the server refused `WAIT` (then durable acquire's default does without it).
    pub(crate) fn wait_refused(&self) -> bool {
        self.wait_refused.load(Ordering::Relaxed)
    }

    /// Records that the server refuses `WAIT`; true the first time, to warn once.
    pub(crate) fn refuse_wait(&self) -> bool {
        !self.wait_refused.swap(true, Ordering::Relaxed)
    }

    /// Records that the server refused `TIME` (every fencing token is then 0); true the first
    /// time, to warn once.
    pub(crate) fn refuse_time(&self) -> bool {
        !self.time_refused.swap(true, Ordering::Relaxed)
    }

    /// The most one [`run`](Pool::run) of a single command waits once it has a connection: a
    /// reused one that times out (read), then the retry on a fresh one (connect + read).
    pub(crate) fn attempt_time(&self) -> Duration {
        self.spec.connect_timeout() + self.spec.read_timeout() * 2
    }

    /// Runs `op` on a pooled connection. `what` names the operation in error messages; it is
    /// formatted only when an error needs it, so that a call that succeeds allocates no message.
    ///
    /// A connection that broke is dropped, never returned. If a *reused* connection turns out
    /// dead (the server restarted, or CLIENT KILL) or silent (a timeout: a NAT or load balancer
    /// dropped the idle flow), the idle ones are presumed dead too: they are dropped and `retry`
    /// runs once on a fresh connection, so the call after a restart or a silent drop succeeds.
    /// `retry` must cope with `op` having reached the server before the connection died.
    pub(crate) fn run<T>(
        &self,
        what: &dyn fmt::Display,
        op: impl FnOnce(&mut Conn) -> RedisResult<T>,
        retry: impl FnOnce(&mut Conn) -> RedisResult<T>,
    ) -> Result<T> {
        let (mut conn, reused) = self.checkout(what)?;
        match self.guarded(&mut conn, op) {
            Ok(v) => {
                self.checkin(conn, true);
                Ok(v)
            }
            // A dead pooled connection (restart, CLIENT KILL); READONLY: a Sentinel failover
            // demoted the server it reached; MOVED/ASK: a cluster's slots moved since its slot
            // map was read (the cluster client does not retry by itself, see `conn`). In each
            // case the command did not run, the idle connections are as stale, and a fresh one
            // will do.
            Err(e)
                if (reused
                    && (dropped(&e)
                        || e.is_timeout()
                        || e.kind() == ErrorKind::Server(ServerErrorKind::ReadOnly)))
                    || e.is_cluster_error()
                        && matches!(
                            e.kind(),
                            ErrorKind::Server(ServerErrorKind::Moved | ServerErrorKind::Ask)
                        ) =>
            {
                if let Some(node) = e
                    .redirect_node()
                    .filter(|_| e.kind() == ErrorKind::Server(ServerErrorKind::Ask))
                    .map(|(node, _)| node.to_owned())
                {
                    // ASK: the slot is migrating and the key is already on (or new to) the
                    // target. Ask the target once, after ASKING; the cluster connection and
                    // its slot map stay good for every other key.
                    self.checkin(conn, true);
                    return self.ask(&node, what, retry);
                }
                self.checkin(conn, false);
                self.drop_idle();
                let mut fresh = self.connect(what)?;
                let result = self.guarded(&mut fresh, retry);
                self.checkin(fresh, result.as_ref().map_or_else(reusable, |_| true));
                result.map_err(|e| self.error(&e, what, Limit::Read(self.spec.read_timeout())))
            }
            Err(e) => {
                self.checkin(conn, reusable(&e));
                Err(self.error(&e, what, Limit::Read(self.spec.read_timeout())))
            }
        }
    }

    /// Runs `op` on every master that holds keys, for what is per node (`SCAN`, `DBSIZE`): on a
    /// pooled connection to this server, or on a Cluster on a connection of its own to each
    /// master that its slot map names (`CLUSTER SLOTS`). Each master's result, in turn.
    pub(crate) fn each_master<T>(
        &self,
        what: &dyn fmt::Display,
        op: impl FnMut(&mut Conn) -> RedisResult<T>,
    ) -> Result<Vec<T>> {
        let op = std::cell::RefCell::new(op);
        let run = |conn: &mut Conn| (op.borrow_mut())(conn);
        if !matches!(self.spec.address(), Address::Cluster { .. }) {
            return Ok(vec![self.run(what, run, run)?]);
        }
        let masters = self.run(what, cluster_masters, cluster_masters)?;
        masters
            .iter()
            .map(|(host, port)| {
                let mut conn = self
                    .opener
                    .open_master(&self.spec, host, *port)
                    .map_err(|e| {
                        self.error(&e, what, Limit::Connect(self.spec.connect_timeout()))
                    })?;
                run(&mut conn)
                    .map_err(|e| self.error(&e, what, Limit::Read(self.spec.read_timeout())))
            })
            .collect()
    }

    /// Follows an `ASK` redirection: `retry` on a one-off connection to `node` that sends
    /// `ASKING` before each of its commands.
    fn ask<T>(
        &self,
        node: &str,
        what: &dyn fmt::Display,
        retry: impl FnOnce(&mut Conn) -> RedisResult<T>,
    ) -> Result<T> {
        let limit = Limit::Read(self.spec.read_timeout());
        let mut conn = self
            .opener
            .open_node(&self.spec, node)
            .map_err(|e| self.error(&e, what, Limit::Connect(self.spec.connect_timeout())))?;
        retry(&mut conn).map_err(|e| self.error(&e, what, limit))
    }

    /// Runs `f` on a checked-out connection. Should it panic, the connection is counted as
    /// gone before the panic goes on, so that the pool never believes it still open.
    fn guarded<T>(
        &self,
        conn: &mut Conn,
        f: impl FnOnce(&mut Conn) -> RedisResult<T>,
    ) -> RedisResult<T> {
        match panic::catch_unwind(AssertUnwindSafe(|| f(conn))) {
            Ok(result) => result,
            Err(payload) => {
                self.forget_one();
                panic::resume_unwind(payload)
            }
        }
    }

    fn checkout(&self, what: &dyn fmt::Display) -> Result<(Conn, bool)> {
        let deadline = Instant::now() + self.spec.connect_timeout();
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some((conn, since)) = state.idle.pop() {
                if since.elapsed() <= self.spec.idle_timeout() {
                    return Ok((conn, true));
                }
                // Idle too long: a NAT may have dropped it without a word. The rest are older.
                let stale = 1 + state.idle.len();
                state.idle.clear();
                state.open -= stale;
                drop(conn);
                continue;
            }
            if state.open < self.spec.max_total() {
                state.open += 1;
                drop(state);
                return self.open_counted(what).map(|conn| (conn, false));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Timeout(format!(
                    "{}: all {} pooled connections stayed busy for {} ms ({what})",
                    self.spec.endpoint(),
                    self.spec.max_total(),
                    self.spec.connect_timeout().as_millis()
                )));
            }
            state.waiting += 1;
            state = self
                .returned
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            state.waiting -= 1;
        }
    }

    /// A new connection, counted as checked out without waiting for a free slot: the retry path
    /// uses it in place of the connection it just dropped.
    fn connect(&self, what: &dyn fmt::Display) -> Result<Conn> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).open += 1;
        self.open_counted(what)
    }

    /// Connects, authenticates and selects the db, all within the connect timeout, for a slot
    /// already counted in `open`; gives the slot back if that fails.
    fn open_counted(&self, what: &dyn fmt::Display) -> Result<Conn> {
        let mut conn = self
            .opener
            .open(&self.spec)
            .map_err(|e| self.error(&e, what, Limit::Connect(self.spec.connect_timeout())))
            .inspect_err(|_| self.forget_one())?;
        if self.count_replicas.load(Ordering::Relaxed) {
            // Replicas attach and leave: each new connection looks again. A connection that
            // cannot answer this (a frozen server) would not answer the call either.
            match count_replicas(&mut conn) {
                Ok(n) => self.replicas.store(n, Ordering::Relaxed),
                Err(e) => {
                    self.forget_one();
                    return Err(self.error(&e, what, Limit::Read(self.spec.read_timeout())));
                }
            }
        }
        Ok(conn)
    }

    fn checkin(&self, conn: Conn, healthy: bool) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if healthy && state.idle.len() < self.spec.max_idle() {
            state.idle.push((conn, Instant::now()));
        } else {
            state.open -= 1;
        }
        self.wake_one(state);
    }

    fn forget_one(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.open -= 1;
        self.wake_one(state);
    }

    fn wake_one(&self, state: std::sync::MutexGuard<'_, State>) {
        let someone_waits = state.waiting > 0;
        drop(state);
        if someone_waits {
            self.returned.notify_one();
        }
    }

    /// Closes the idle connections that sat unused past the idle timeout: they would not be
    /// reused anyway, and a pool nobody calls any more (its password rotated, say) should not
    /// hold sockets open on the server for ever.
    pub(crate) fn close_stale(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let before = state.idle.len();
        let limit = self.spec.idle_timeout();
        state.idle.retain(|(_, since)| since.elapsed() <= limit);
        state.open -= before - state.idle.len();
    }

    pub(crate) fn idle_timeout(&self) -> Duration {
        self.spec.idle_timeout()
    }

    /// Closes the idle connections: the next call opens a fresh one (behind Sentinel, to the
    /// master the Sentinels name now).
    pub(crate) fn drop_idle(&self) {
        // The server may be another, or restarted: its script cache empty.
        self.set_scripts_cached(false);
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let dropped = std::mem::take(&mut state.idle);
        state.open -= dropped.len();
    }

    /// Classifies `err`, naming the server and the operation.
    fn error(&self, err: &redis::RedisError, what: &dyn fmt::Display, limit: Limit) -> Error {
        let context = format!("{} ({what})", self.spec.endpoint());
        Error::from_redis(err, &context, &self.spec.secrets(), limit)
    }
}

/// What [`Pool::replicas`] says when the server refuses `INFO` (an ACL without `+info`).
pub(crate) const REPLICAS_UNKNOWN: i64 = -2;

/// `connected_slaves` of `INFO replication`; [`REPLICAS_UNKNOWN`] when the server refuses `INFO`. Through a cluster
/// connection every master answers, and the fewest counts: a shard without a replica has none
/// that a failover could promote, so waiting there would only refuse its locks.
fn count_replicas(conn: &mut Conn) -> RedisResult<i64> {
    fn fewest(value: &Value) -> Option<i64> {
        match value {
            Value::Map(pairs) => pairs.iter().filter_map(|(_, v)| fewest(v)).min(),
            Value::Array(items) => items.iter().filter_map(fewest).min(),
            other => {
                let info: String = redis::from_redis_value(other.clone()).ok()?;
                info.lines()
                    .find_map(|line| line.strip_prefix("connected_slaves:"))
                    .and_then(|n| n.trim().parse().ok())
            }
        }
    }
    match redis::cmd("INFO").arg("replication").query::<Value>(conn) {
        Ok(info) => Ok(fewest(&info).unwrap_or(0)),
        Err(e) if e.code().is_some() => Ok(REPLICAS_UNKNOWN), // NOPERM, or INFO renamed away
        Err(e) => Err(e),
    }
}

/// The masters a cluster's slot map names (`CLUSTER SLOTS`: each range, its master first).
fn cluster_masters(conn: &mut Conn) -> RedisResult<Vec<(String, u16)>> {
    let ranges: Vec<Value> = redis::cmd("CLUSTER").arg("SLOTS").query(conn)?;
    let mut masters: Vec<(String, u16)> = Vec::new();
    for range in ranges {
        let Value::Array(parts) = range else { continue };
        let Some(Value::Array(master)) = parts.get(2) else {
            continue;
        };
        let (Some(host), Some(port)) = (master.first(), master.get(1)) else {
            continue;
        };
        let (Ok(host), Ok(port)) = (
            redis::from_redis_value::<String>(host.clone()),
            redis::from_redis_value::<u16>(port.clone()),
        ) else {
            continue;
        };
        if !masters.contains(&(host.clone(), port)) {
            masters.push((host, port));
        }
    }
    Ok(masters)
}

fn dropped(e: &redis::RedisError) -> bool {
    e.is_connection_dropped() && !e.is_timeout()
}

/// Whether a connection whose command failed with `e` may serve another. Never after a timeout:
/// the late reply would still be unread, and the next command would read it as its own.
fn reusable(e: &redis::RedisError) -> bool {
    !e.is_unrecoverable_error() && !e.is_timeout()
}
