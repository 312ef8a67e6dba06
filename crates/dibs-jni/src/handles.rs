//! Handles: the `long` values Java holds for a locker. A handle is an index into an append-only
//! table, so a stale or forged value yields an error, never a dangling pointer.
//!
//! Shared handles (`dibs.Dibs`) name the process-wide locker of a spec and live forever. Owned
//! handles (`dibs.DibsClient`) have a pool of their own, dropped on close; a call still running
//! keeps its `Arc` until it ends.

use std::ops::Deref;
use std::sync::{Arc, RwLock};

use dibs_core::{ConnSpec, Locker};

use super::guard::Failure;

enum Entry {
    Shared(&'static Locker),
    Owned(Arc<Locker>),
    Closed,
}

static TABLE: RwLock<Vec<Entry>> = RwLock::new(Vec::new());

/// A locker borrowed from the table for one call.
pub(super) enum LockerRef {
    Shared(&'static Locker),
    Owned(Arc<Locker>),
}

impl Deref for LockerRef {
    type Target = Locker;

    fn deref(&self) -> &Locker {
        match self {
            LockerRef::Shared(l) => l,
            LockerRef::Owned(l) => l,
        }
    }
}

/// The handle of the shared locker for `spec` (equal specs get the same handle).
pub(super) fn shared(spec: ConnSpec) -> Result<i64, Failure> {
    let locker = Locker::shared(spec)?;
    let mut table = TABLE.write().unwrap_or_else(|p| p.into_inner());
    let found = table
        .iter()
        .position(|e| matches!(e, Entry::Shared(l) if std::ptr::eq(*l, locker)));
    Ok(match found {
        Some(i) => i as i64 + 1,
        None => push(&mut table, Entry::Shared(locker)),
    })
}

/// A handle to a new locker with its own pool.
pub(super) fn open(spec: ConnSpec) -> Result<i64, Failure> {
    let locker = Arc::new(Locker::new(spec)?);
    Ok(push(
        &mut TABLE.write().unwrap_or_else(|p| p.into_inner()),
        Entry::Owned(locker),
    ))
}

/// Drops an owned handle's locker. Closing twice is harmless.
pub(super) fn close(handle: i64) -> Result<(), Failure> {
    let mut table = TABLE.write().unwrap_or_else(|p| p.into_inner());
    match index(handle).and_then(|i| table.get_mut(i)) {
        Some(entry @ (Entry::Owned(_) | Entry::Closed)) => {
            *entry = Entry::Closed;
            Ok(())
        }
        _ => Err(Failure::Internal(format!(
            "handle {handle} cannot be closed"
        ))),
    }
}

pub(super) fn locker(handle: i64) -> Result<LockerRef, Failure> {
    let table = TABLE.read().unwrap_or_else(|p| p.into_inner());
    match index(handle).and_then(|i| table.get(i)) {
        Some(Entry::Shared(l)) => Ok(LockerRef::Shared(l)),
        Some(Entry::Owned(l)) => Ok(LockerRef::Owned(l.clone())),
        // A DibsClient closed by another thread while this call was on its way in.
        Some(Entry::Closed) => Err(Failure::State("this DibsClient is closed".to_owned())),
        None => Err(Failure::Internal(format!(
            "unknown connection handle {handle}"
        ))),
    }
}

fn push(table: &mut Vec<Entry>, entry: Entry) -> i64 {
    table.push(entry);
    table.len() as i64
}

fn index(handle: i64) -> Option<usize> {
    usize::try_from(handle - 1).ok()
}
