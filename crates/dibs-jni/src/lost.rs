//! Leases whose lock keep-alive found lost, for Java's watcher thread: keep-alive's thread
//! pushes the id (pure Rust, no JVM), and the watcher takes them in a blocking native call on a
//! thread of its own, then tells the lease's owner in plain Java.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

static LOST: Mutex<Vec<i64>> = Mutex::new(Vec::new());
static ARRIVED: Condvar = Condvar::new();

/// The lease `id`'s lock was found lost.
pub(super) fn push(id: i64) {
    LOST.lock().unwrap_or_else(|p| p.into_inner()).push(id);
    ARRIVED.notify_all();
}

/// The ids lost since the last call, waiting up to `timeout` for one; empty if none came.
pub(super) fn take(timeout: Duration) -> Vec<i64> {
    let deadline = Instant::now() + timeout;
    let mut lost = LOST.lock().unwrap_or_else(|p| p.into_inner());
    while lost.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        lost = ARRIVED
            .wait_timeout(lost, left)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
    std::mem::take(&mut *lost)
}
