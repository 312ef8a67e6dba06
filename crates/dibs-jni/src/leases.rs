//! Leases held by Java: the `long` a won `acquire` returns names one here until its `release`.
//! Ids are never reused, so a lease cannot be released twice, and a stale or forged id is an
//! error, never someone else's lock.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

use dibs_core::Lease;

use super::guard::Failure;

static LEASES: Mutex<Option<HashMap<i64, Lease>>> = Mutex::new(None);
static NEXT_ID: AtomicI64 = AtomicI64::new(1);

/// Keeps `lease` until [`take`]; returns its id (> 0).
pub(super) fn put(lease: Lease) -> i64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    put_back(id, lease);
    id
}

/// The lease `id`, which is then no longer held here.
pub(super) fn take(id: i64) -> Result<Lease, Failure> {
    LEASES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_mut()
        .and_then(|leases| leases.remove(&id))
        .ok_or_else(|| {
            Failure::State(format!(
                "lease {id} was already released, or never acquired"
            ))
        })
}

/// Returns a lease that [`take`] lent out, under its id.
pub(super) fn put_back(id: i64, lease: Lease) {
    LEASES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(id, lease);
}

/// How many leases are held here.
pub(super) fn count() -> usize {
    LEASES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map_or(0, HashMap::len)
}

/// Whether keep-alive found the lease's lock lost (no I/O).
pub(super) fn is_lost(id: i64) -> Result<bool, Failure> {
    with(id, |lease| lease.is_lost())
}

/// Has the lease `id` pushed to [`super::lost`] when keep-alive finds its lock lost (no I/O);
/// false when the lease has no keep-alive, so that nothing will be pushed.
pub(super) fn watch_lost(id: i64) -> Result<bool, Failure> {
    with(id, |lease| lease.when_lost(move || super::lost::push(id)))
}

/// How much longer the lease `id`'s holder may rely on its lock (no I/O).
pub(super) fn safe_for(id: i64) -> Result<std::time::Duration, Failure> {
    with(id, |lease| lease.safe_for())
}

/// The lease's fencing token (no I/O).
pub(super) fn fence(id: i64) -> Result<u64, Failure> {
    with(id, |lease| lease.fence())
}

/// Runs `f` on the lease `id`, left in the table.
fn with<T>(id: i64, f: impl FnOnce(&mut Lease) -> T) -> Result<T, Failure> {
    LEASES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_mut()
        .and_then(|leases| leases.get_mut(&id))
        .map(f)
        .ok_or_else(|| {
            Failure::State(format!(
                "lease {id} was already released, or never acquired"
            ))
        })
}
