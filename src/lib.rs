//! dibs: a distributed scheduler lock on Redis. When the same scheduled job runs on N instances
//! of a service, exactly one instance runs it per tick.
//!
//! ```no_run
//! use dibs::{ConnSpec, LockParams, Locker, Outcome};
//!
//! let locker = Locker::shared(ConnSpec::from_uri("redis://127.0.0.1:6379")?)?;
//! let params = LockParams::from_secs("nightly-report", 600, 30)?;
//! match locker.execute(&params, || 42)? {
//!     Outcome::Ran { value, .. } => println!("ran: {value}"),
//!     Outcome::Skipped => println!("another instance has it"),
//!     Outcome::Unconfirmed(why) => println!("won, not confirmed, given back: {why}"),
//! }
//! # Ok::<(), dibs::Error>(())
//! ```
//!
//! The JVM binding (`crates/dibs-jni`, behind the Java class `dibs.Dibs`) and the `dibs` command
//! line (`crates/dibs-cli`) are built on this crate's public API only.

mod check;
mod conn;
mod connspec;
mod ending;
mod error;
mod fleet;
mod history;
mod holder;
mod inflight;
mod job;
mod keepalive;
mod lock;
mod pool;
mod resp;
mod script;
mod shown;
mod sweeper;
mod tls;

pub use check::{
    evicted_note, expected_window, free_since, held_for, unseen_why, utc, window, Checked,
    Judgement, Question, Rules, Standing, Unknown, Unproven, Verdict, RUNS_SHOWN,
};
pub use connspec::{
    Address, ClientCert, ConnKey, ConnSpec, Durable, Pem, SpecValue, CONN_KEYS, CONN_MAP_KEYS,
    DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_HOST, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_KEY_PREFIX,
    DEFAULT_MAX_TOTAL, DEFAULT_PORT, DEFAULT_READ_TIMEOUT_MS, POOL_KEYS,
};
pub use ending::{Ended, Ending};
pub use error::{Error, Result};
pub use fleet::{
    validate_budget, validate_limit, ForcedRelease, History, Listing, Matched, MAX_LIMIT,
    MAX_SCAN_BUDGET, SCAN_BUDGET,
};
pub use history::{HeldLock, Job, Run, TaskResult, HISTORY_JOBS, HISTORY_LENGTH, HISTORY_TTL};
pub use holder::{Holder, LockState};
pub use job::{job_of, split_tick};
pub use lock::{
    unknown_tick, Acquire, Lease, LockParams, Locker, Outcome, TickAcquire, TickState, CLOCK_SKEW,
    MAX_CATCH_UP_AGE, MAX_NAME_BYTES, MAX_TICK_BYTES,
};
pub use shown::shown;
