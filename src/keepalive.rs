//! Keep-alive: while a task runs, a helper thread sets the lock's expiry back to `atMost` every
//! `atMost / 3`, with a token-checked script, so a task may outlive `atMost` and still hold the
//! lock. If the process dies, the extensions stop and the lock expires within `atMost`.
//!
//! The thread is scoped to the call and only talks to Redis (never to the JVM). It stops the
//! moment the task ends: dropping the channel's sender wakes it at once.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use crate::lock::{Lease, Locker};

/// Runs `task` while extending `lease`. Returns the task's result and whether an extension found
/// the lock gone (after which extending stops: the lock is someone else's now).
pub(crate) fn run<T>(locker: &Locker, lease: &Lease, task: impl FnOnce() -> T) -> (T, bool) {
    let interval = Duration::from_millis((lease.at_most_ms() / 3).max(1));
    thread::scope(|scope| {
        let (stop, stopped) = mpsc::channel::<()>();
        let extender = thread::Builder::new()
            .name("dibs-keep-alive".into())
            .spawn_scoped(scope, move || loop {
                match stopped.recv_timeout(interval) {
                    Err(RecvTimeoutError::Timeout) => match locker.extend(lease) {
                        Ok(true) => {}
                        Ok(false) => return true,
                        // Redis unreachable for now: try again next interval; if it stays away,
                        // the lock expires by itself and the release reports it.
                        Err(_) => {}
                    },
                    _ => return false,
                }
            });
        // No thread to be had (a limit, no memory): the task still runs, and is released after,
        // as without keep-alive; failing here would leave the lock held and nothing run.
        let value = task();
        drop(stop);
        let lost = match extender {
            Ok(handle) => handle.join().unwrap_or(false),
            Err(_) => false,
        };
        (value, lost)
    })
}
