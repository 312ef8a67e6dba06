//! Handles: the `long` values Java holds for a connection spec. A handle is an index into an
//! append-only table, so a stale or forged value yields an error, never a dangling pointer.

use std::sync::RwLock;

use crate::{ConnSpec, Locker};

use super::guard::Failure;

static TABLE: RwLock<Vec<&'static Locker>> = RwLock::new(Vec::new());

/// The handle of the shared locker for `spec` (equal specs get the same handle).
pub(super) fn handle_for(spec: ConnSpec) -> Result<i64, Failure> {
    let locker = Locker::shared(spec)?;
    let mut table = TABLE.write().unwrap_or_else(|p| p.into_inner());
    let index = match table.iter().position(|l| std::ptr::eq(*l, locker)) {
        Some(i) => i,
        None => {
            table.push(locker);
            table.len() - 1
        }
    };
    Ok(index as i64 + 1)
}

pub(super) fn locker(handle: i64) -> Result<&'static Locker, Failure> {
    let table = TABLE.read().unwrap_or_else(|p| p.into_inner());
    usize::try_from(handle - 1)
        .ok()
        .and_then(|i| table.get(i).copied())
        .ok_or_else(|| Failure::Internal(format!("unknown connection handle {handle}")))
}
