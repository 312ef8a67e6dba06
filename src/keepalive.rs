//! Keep-alive: while a lease is held, a helper thread sets the lock's expiry back to `atMost` a
//! third of `atMost` after the last extension that succeeded, with a token-checked script, so a
//! task may outlive `atMost` and still hold the lock. If the process dies, the extensions stop
//! and the lock expires within `atMost`.
//!
//! The thread is started by the acquire and stopped by the release, and only talks to Redis
//! (never to the JVM). Dropping the channel's sender wakes it at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::conn::Conn;
use crate::error::Result;
use crate::pool::Pool;
use crate::script;

/// The extender of one lease.
pub(crate) struct KeepAlive {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
    lost: Arc<AtomicBool>,
}

impl KeepAlive {
    /// Starts extending `key` (holding `value`) back to `at_most_ms`, a third of it after the
    /// last extension that succeeded (the first counts from `acquired`). A failed one is retried
    /// soon (a tenth of the period, 50 ms to 1 s), until just before the lock would lapse; past
    /// that, the lock is taken as lost. Each attempt waits at most the read timeout (and once
    /// more on a fresh connection). `None` when no thread can be had (a
    /// limit, no memory): the task still runs and is released after, as without keep-alive,
    /// since failing here would leave the lock held and nothing run.
    pub(crate) fn start(
        pool: Arc<Pool>,
        name: String,
        key: String,
        value: String,
        at_most_ms: u64,
        acquired: Instant,
    ) -> Option<KeepAlive> {
        let at_most = Duration::from_millis(at_most_ms);
        let period = at_most / 3;
        let retry = (period / 10).clamp(Duration::from_millis(50), Duration::from_secs(1));
        // No attempt starts later than this before the lapse: one that late would likely land
        // after it.
        let margin = Duration::from_millis(50).min(period);
        let lost = Arc::new(AtomicBool::new(false));
        let lost_seen = lost.clone();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = thread::Builder::new()
            .name("dibs-keep-alive".into())
            .spawn(move || {
                let mut extended = acquired; // when the lock's TTL was last set to at_most
                let mut next = acquired + period;
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    match stopped.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return, // the lease is being released
                    }
                    let started = Instant::now();
                    if started + margin > extended + at_most {
                        // No attempt can end before the lapse: the lock may be gone.
                        lost_seen.store(true, Ordering::Release);
                        return;
                    }
                    match extend(&pool, &name, &key, &value, at_most_ms) {
                        Ok(true) => {
                            // The server set the TTL after we sent the script: count from then.
                            extended = started;
                            next = started + period;
                        }
                        Ok(false) => {
                            // Someone else's now: stop extending it.
                            lost_seen.store(true, Ordering::Release);
                            return;
                        }
                        // Redis unreachable for now: try again soon.
                        Err(_) => next = Instant::now() + retry,
                    }
                }
            })
            .ok()?;
        Some(KeepAlive {
            stop: Some(stop),
            thread: Some(thread),
            lost,
        })
    }

    /// Whether an extension found the lock taken, or none could be made in time.
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Stops extending, and waits for the extender to finish. Returns whether an extension found
    /// the lock taken.
    pub(crate) fn stop(mut self) -> bool {
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.lost.load(Ordering::Acquire)
    }
}

impl Drop for KeepAlive {
    fn drop(&mut self) {
        // Wakes the extender, which ends by itself; joining here could block a dropping thread.
        self.stop.take();
    }
}

/// Sets `key`'s expiry to `at_most_ms` again if it still holds `value`. `Ok(false)`: lost.
fn extend(pool: &Pool, name: &str, key: &str, value: &str, at_most_ms: u64) -> Result<bool> {
    let extend = |conn: &mut Conn| script::EXTEND.run::<i64>(conn, key, value, at_most_ms);
    Ok(pool.run(&format_args!("extending lock '{name}'"), extend, extend)? == 1)
}
