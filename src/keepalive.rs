//! Keep-alive: while a lease is held, a helper thread sets the lock's expiry back to `atMost`
//! every `atMost / 3`, with a token-checked script, so a task may outlive `atMost` and still
//! hold the lock. If the process dies, the extensions stop and the lock expires within `atMost`.
//!
//! The thread is started by the acquire and stopped by the release, and only talks to Redis
//! (never to the JVM). Dropping the channel's sender wakes it at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

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
    /// Starts extending `key` (holding `value`) to `at_most_ms` every third of it. `None` when
    /// no thread can be had (a limit, no memory): the task still runs and is released after,
    /// as without keep-alive, since failing here would leave the lock held and nothing run.
    pub(crate) fn start(
        pool: Arc<Pool>,
        name: String,
        key: String,
        value: String,
        at_most_ms: u64,
    ) -> Option<KeepAlive> {
        let interval = Duration::from_millis((at_most_ms / 3).max(1));
        let lost = Arc::new(AtomicBool::new(false));
        let lost_seen = lost.clone();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = thread::Builder::new()
            .name("dibs-keep-alive".into())
            .spawn(move || loop {
                match stopped.recv_timeout(interval) {
                    Err(RecvTimeoutError::Timeout) => {
                        match extend(&pool, &name, &key, &value, at_most_ms) {
                            Ok(true) => {}
                            Ok(false) => {
                                // Someone else's now: stop extending it.
                                lost_seen.store(true, Ordering::Release);
                                return;
                            }
                            // Redis unreachable for now: try again next interval; if it stays
                            // away, the lock expires by itself and the release reports it.
                            Err(_) => {}
                        }
                    }
                    _ => return,
                }
            })
            .ok()?;
        Some(KeepAlive {
            stop: Some(stop),
            thread: Some(thread),
            lost,
        })
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
