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
//!
//! The rooms: [`params`] (the one validation of a request), [`acquire`] (the acquire's round
//! trip and durable acquire), [`catch_up`] (whether a tick ran, and the acquire of a missed one),
//! [`lease`] (a lock held, its release and what it records); the fleet
//! operations on the history and the held locks are `crate::fleet`'s.

mod acquire;
mod catch_up;
mod late;
mod lease;
mod params;
mod tick_start;

pub use catch_up::{unknown_tick, TickAcquire, TickState, CLOCK_SKEW, MAX_CATCH_UP_AGE};
pub(crate) use lease::HistoryPlace;
pub use lease::Lease;
pub(crate) use params::validate_name;
pub use params::{LockParams, MAX_NAME_BYTES, MAX_TICK_BYTES};

use std::collections::{HashMap, HashSet};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::Duration;

use redis::RedisResult;

use crate::conn::Conn;
use crate::connspec::{Address, ConnSpec, Durable, ServerSpec};
use crate::ending::Ending;
use crate::error::Result;
use crate::history::HeldLock;
use crate::holder::{self, LockState};
use crate::pool::Pool;

/// What an acquire found.
#[derive(Debug)]
#[must_use]
#[allow(clippy::large_enum_variant)] // moved once, at once; a box would allocate on the hot path
pub enum Acquire {
    /// This call holds the lock.
    Won(Lease),
    /// Another holder has the lock.
    Taken,
    /// The lock was won but not confirmed in time (the replicas durable acquire asks for did not
    /// acknowledge it, or its reply came after half of atMost): it was given back, and the task
    /// must not run. Why, for a person.
    Unconfirmed(String),
}

impl Acquire {
    /// The lease, if won.
    pub fn won(self) -> Option<Lease> {
        match self {
            Acquire::Won(lease) => Some(lease),
            Acquire::Taken | Acquire::Unconfirmed(_) => None,
        }
    }
}

/// How a locked call ended.
#[derive(Debug)]
pub enum Outcome<T> {
    /// Another holder had the lock; the task did not run.
    Skipped,
    /// The lock was won but not confirmed, and given back (see [`Acquire::Unconfirmed`]); the
    /// task did not run.
    Unconfirmed(String),
    /// The task ran. A release failure sits in the ending, beside the task's value, never in
    /// its place.
    Ran { value: T, ending: Ending },
}

/// Locks on one Redis server, over a pool of connections. Thread-safe.
pub struct Locker {
    /// Shared with the leases, whose keep-alive and release outlive the borrow of the locker,
    /// and (for shared lockers) with every other shared locker of the same server.
    pub(crate) pool: Arc<Pool>,
    /// The whole spec: the pool is made for its server part; the key prefix and keep-alive are
    /// this locker's own.
    pub(crate) spec: ConnSpec,
    /// The `atMost` values already warned about (keep-alive's schedule); touched only when a
    /// warning is due.
    pub(crate) warned: Mutex<HashSet<u64>>,
    /// Where the leases record their runs; `None` with the history off.
    pub(crate) history: Option<Arc<HistoryPlace>>,
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
            history: spec.history().then(|| Arc::new(HistoryPlace::new(&spec))),
            spec,
            warned: Mutex::default(),
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
        let lease = match self.acquire(params)? {
            Acquire::Won(lease) => lease,
            Acquire::Taken => return Ok(Outcome::Skipped),
            Acquire::Unconfirmed(why) => return Ok(Outcome::Unconfirmed(why)),
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
        // The value as bytes, and never more than a value of dibs's: anyone may have written
        // anything under the prefix, 300 MB included.
        let end = holder::MAX_VALUE_BYTES as isize;
        let read = |conn: &mut Conn| -> RedisResult<(Vec<u8>, i64)> {
            redis::pipe()
                .getrange(&key, 0, end)
                .pttl(&key)
                .query(conn)
                .or_else(|e| {
                    // A pipeline folds its replies' errors into one without a code; the same
                    // failure on a lone GETRANGE (NOAUTH, NOPERM, ...) comes back typed. Not
                    // after a timeout or a broken socket: that would only wait a second time.
                    if e.is_timeout() || e.is_io_error() {
                        return Err(e);
                    }
                    let _: Vec<u8> = redis::cmd("GETRANGE")
                        .arg(&key)
                        .arg(0)
                        .arg(end)
                        .query(conn)?;
                    Err(e)
                })
        };
        let (value, pttl) = self
            .pool
            .run(&format_args!("inspecting lock '{name}'"), read, read)?;
        Ok(holder::bounded(value, pttl).map(|value| HeldLock::read(name, &value, pttl)))
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
}
