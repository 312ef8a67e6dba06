//! Keep-alive: while a lease is held, a helper thread sets the lock's expiry back to `atMost` a
//! third of `atMost` after the last extension that succeeded, with a token-checked script, so a
//! task may outlive `atMost` and still hold the lock. If the process dies, the extensions stop
//! and the lock expires within `atMost`.
//!
//! The thread is started by the acquire and stopped by the release, and only talks to Redis
//! (never to the JVM). Dropping the channel's sender wakes it at once.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::conn::Conn;
use crate::error::Result;
use crate::pool::Pool;
use crate::script;

/// What an extender tells its lease: whether the lock is lost, when it was last set to
/// `atMost`, and whom to tell of a loss.
struct Watch {
    lost: AtomicBool,
    /// When the last extension that succeeded was sent, in ns after `base`; 0 for none yet.
    extended_ns: AtomicU64,
    base: Instant,
    /// Called once, on the extender's thread, when the lock is found lost.
    on_lost: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl Watch {
    fn mark_lost(&self) {
        self.lost.store(true, Ordering::Release);
        let tell = self
            .on_lost
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(tell) = tell {
            tell();
        }
    }
}

/// The extender of one lease.
pub(crate) struct KeepAlive {
    /// Dropped with the `KeepAlive`, which wakes the extender at once; it then ends by itself.
    /// The thread is never joined (see `stop`).
    _stop: Sender<()>,
    watch: Arc<Watch>,
}

impl KeepAlive {
    /// Starts extending `key` (holding `value`) back to `at_most_ms`, a third of it after the
    /// last extension that succeeded (the first counts from `set_at`, the acquire's send). A failed one is retried
    /// soon (a tenth of the period, 50 ms to 1 s). No attempt starts later than one attempt's
    /// time (connect + 2 × read, at most the period) before the lock would lapse, so the last one
    /// ends before the lapse; when the next would start later, the lock is taken as lost then. `None` when no
    /// thread can be had (a limit, no memory): the task still runs and is released after, as
    /// without keep-alive, since failing here would leave the lock held and nothing run.
    pub(crate) fn start(
        pool: Arc<Pool>,
        name: String,
        key: String,
        value: String,
        at_most_ms: u64,
        set_at: Instant,
    ) -> Option<KeepAlive> {
        let schedule = Schedule::new(at_most_ms, pool.attempt_time());
        let (period, retry, margin) = (schedule.period, schedule.retry, schedule.margin);
        let at_most = Duration::from_millis(at_most_ms);
        let watch = Arc::new(Watch {
            lost: AtomicBool::new(false),
            extended_ns: AtomicU64::new(0),
            base: set_at,
            on_lost: Mutex::new(None),
        });
        let seen = watch.clone();
        let (stop, stopped) = mpsc::channel::<()>();
        thread::Builder::new()
            .name("dibs-keep-alive".into())
            .spawn(move || {
                let mut extended = set_at; // when the lock's TTL was last set to at_most
                let mut next = set_at + period;
                loop {
                    // The last attempt must start one attempt's time before the lapse; when the
                    // next one would start later, the lock will lapse: say so now, while the
                    // task can still stop before a rival starts.
                    if next + margin > extended + at_most {
                        seen.mark_lost();
                        return;
                    }
                    let wait = next.saturating_duration_since(Instant::now());
                    match stopped.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return, // the lease is being released
                    }
                    let started = Instant::now();
                    match extend(&pool, &name, &key, &value, at_most_ms) {
                        Ok(true) => {
                            // The server set the TTL after we sent the script: count from then.
                            extended = started;
                            next = started + period;
                            let ns = started.duration_since(seen.base).as_nanos();
                            seen.extended_ns.store(
                                u64::try_from(ns).unwrap_or(u64::MAX).max(1),
                                Ordering::Release,
                            );
                        }
                        Ok(false) => {
                            // Someone else's now: stop extending it.
                            seen.mark_lost();
                            return;
                        }
                        // Redis unreachable for now: try again soon.
                        Err(_) => next = Instant::now() + retry,
                    }
                }
            })
            .ok()?;
        Some(KeepAlive { _stop: stop, watch })
    }

    /// Whether an extension found the lock taken, or none could be made in time.
    pub(crate) fn is_lost(&self) -> bool {
        self.watch.lost.load(Ordering::Acquire)
    }

    /// When the last extension that succeeded was sent; `None` before the first.
    pub(crate) fn last_extended(&self) -> Option<Instant> {
        match self.watch.extended_ns.load(Ordering::Acquire) {
            0 => None,
            ns => Some(self.watch.base + Duration::from_nanos(ns)),
        }
    }

    /// Has `tell` called once, on the extender's thread, when the lock is found lost; at once
    /// (here) if it is lost already. Replaces an earlier `tell` not yet called.
    pub(crate) fn when_lost(&self, tell: Box<dyn FnOnce() + Send>) {
        let mut slot = self.watch.on_lost.lock().unwrap_or_else(|p| p.into_inner());
        if self.watch.lost.load(Ordering::Acquire) {
            drop(slot);
            tell();
            return;
        }
        *slot = Some(tell);
    }

    /// Stops extending, without waiting for an extension in flight: that one can only find the
    /// lock released (the release spends the token or deletes the key), and waiting for it could
    /// add connect + 2 x read timeout to the release. Returns whether an extension found the lock
    /// taken so far.
    pub(crate) fn stop(self) -> bool {
        // Released: a loss found from now on is no one's news.
        self.watch
            .on_lost
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        self.watch.lost.load(Ordering::Acquire)
    }
}

/// When keep-alive extends a lock whose expiry is `atMost`.
pub(crate) struct Schedule {
    /// From the last extension that succeeded to the next one: a third of `atMost`.
    pub(crate) period: Duration,
    /// From a failed extension to the next try.
    pub(crate) retry: Duration,
    /// No attempt starts later than this before the lapse: the most one attempt may wait (see
    /// `Pool::attempt_time`), but no more than a period, so that the regular extension and at
    /// least one retry fit in any `atMost`.
    pub(crate) margin: Duration,
}

impl Schedule {
    pub(crate) fn new(at_most_ms: u64, attempt: Duration) -> Schedule {
        let period = Duration::from_millis(at_most_ms) / 3;
        Schedule {
            period,
            retry: (period / 10).clamp(Duration::from_millis(50), Duration::from_secs(1)),
            margin: attempt.min(period),
        }
    }

    /// Whether an extension that waits out its timeouts can land after the lapse: `atMost` is
    /// shorter than 3 × the most one attempt waits, so the margin had to be cut to a period.
    pub(crate) fn is_tight(at_most_ms: u64, attempt: Duration) -> bool {
        u128::from(at_most_ms) < attempt.as_millis() * 3
    }

    /// The warning for lock `name` when [`is_tight`](Schedule::is_tight).
    pub(crate) fn warning(name: &str, at_most_ms: u64, attempt: Duration) -> String {
        let attempt_ms = attempt.as_millis();
        format!(
            "lock '{name}': with keep-alive, atMost {at_most_ms} ms is shorter than 3 x the \
             {attempt_ms} ms one extension may wait (connect + 2 x read timeout), so a slow \
             extension can land after the lock lapsed; make atMost at least {} ms, or the \
             timeouts shorter (said once per locker and atMost)",
            attempt_ms * 3
        )
    }
}

/// Sets `key`'s expiry to `at_most_ms` again if it still holds `value`. `Ok(false)`: lost.
fn extend(pool: &Pool, name: &str, key: &str, value: &str, at_most_ms: u64) -> Result<bool> {
    let extend = |conn: &mut Conn| script::EXTEND.run::<i64>(conn, key, value, at_most_ms);
    Ok(pool.run(&format_args!("extending lock '{name}'"), extend, extend)? == 1)
}
