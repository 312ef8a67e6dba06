//! Looking at the locks and jobs of a conn, and an operator's forced release: inspect, history,
//! jobs, locks, heldLock, forceRelease, the job of a lock name, and whether the conn records runs.

use jni::objects::{JClass, JObject, JString, JValue};
use jni::sys::{jboolean, jint, jlong, jobject, jstring};
use jni::JNIEnv;

use super::{read_string, string_table};
use crate::guard::entry;
use crate::handles;
use std::time::Duration;

use dibs_core::{ForcedRelease, Listing, Matched, TaskResult};

/// A `dibs.LockInfo` for the lock `lockName`; never changes the lock.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_inspect<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    lock_name: JString<'l>,
) -> jobject {
    entry(&mut env, |env| {
        let name = read_string(env, &lock_name, "lockName")?;
        let state = handles::locker(handle)?.inspect(&name)?;
        let holder = state.as_ref().and_then(|s| s.holder.as_ref());
        let host = match holder {
            Some(h) => JObject::from(env.new_string(&h.host)?),
            None => JObject::null(),
        };
        let to_long = |v: Option<u64>| v.map_or(-1, |v| i64::try_from(v).unwrap_or(i64::MAX));
        let args = [
            JValue::Bool(state.is_some().into()),
            JValue::Long(to_long(state.as_ref().and_then(|s| s.remaining_ms))),
            JValue::Object(&host),
            JValue::Long(to_long(holder.map(|h| u64::from(h.pid)))),
            JValue::Long(to_long(holder.map(|h| h.acquired_at_unix_ms))),
        ];
        let info = env.new_object("dibs/LockInfo", "(ZJLjava/lang/String;JJ)V", &args)?;
        Ok(info.into_raw())
    })
}

/// The last `limit` recorded runs of the job or lock `name`, newest first: a head of 3 cells
/// (the job whose history holds them, or null when nothing matched; since when the history holds
/// every run, in Unix ms; its last eviction, or null; the eviction of this job's own runs, or
/// null), then 13 fields a run (see `dibs.DibsRun`).
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_history<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    name: JString<'l>,
    limit: jint,
) -> jobject {
    entry(&mut env, |env| {
        let name = read_string(env, &name, "job")?;
        let history = handles::locker(handle)?.history(&name, limit.max(1) as usize)?;
        let mut cells = Vec::with_capacity(4 + history.runs.len() * 13);
        cells.extend([
            match history.matched {
                Matched::Job => Some(name),
                Matched::Lock { job } => Some(job),
                Matched::Nothing => None,
            },
            Some(history.complete_since_unix_ms.to_string()),
            history.evicted_at_unix_ms.map(|ms| ms.to_string()),
            history.job_evicted_at_unix_ms.map(|ms| ms.to_string()),
        ]);
        for run in history.runs {
            cells.extend([
                Some(run.recorded_at_unix_ms.to_string()),
                Some(run.name),
                Some(run.host),
                Some(run.pid.to_string()),
                run.instance,
                Some(run.started_at_unix_ms.to_string()),
                Some(run.duration_ms.to_string()),
                Some(run.fence.to_string()),
                Some(run.ended.as_str().to_owned()),
                // true, false, or none: not told (a forced release, an unknown outcome).
                match run.task {
                    Some(TaskResult::Succeeded) => Some("true".to_owned()),
                    Some(TaskResult::Failed) => Some("false".to_owned()),
                    Some(TaskResult::Unknown) | None => None,
                },
                run.forced_by,
                Some(run.at_least_ms.to_string()),
                Some(run.catch_up.to_string()),
            ]);
        }
        string_table(env, &cells)
    })
}

/// A listing's head, 4 cells before its items: complete, truncated, keys scanned, keys there are
/// (see `dibs.DibsListing`).
fn listing_head<T>(listing: &Listing<T>) -> [Option<String>; 4] {
    [
        Some(listing.complete.to_string()),
        Some(listing.truncated.to_string()),
        Some(listing.scanned.to_string()),
        Some(listing.keys.to_string()),
    ]
}

/// The jobs with a recorded run, the most recent first, found within `budgetMs`: a listing's
/// head, then their name and last record time.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_jobs<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    limit: jint,
    budget_ms: jlong,
) -> jobject {
    entry(&mut env, |env| {
        let budget = Duration::from_millis(budget_ms.max(0) as u64);
        let jobs = handles::locker(handle)?.jobs(limit.max(1) as usize, budget)?;
        let mut cells: Vec<Option<String>> = listing_head(&jobs).into();
        cells.extend(
            jobs.items
                .into_iter()
                .flat_map(|j| [Some(j.name), Some(j.last_recorded_unix_ms.to_string())]),
        );
        string_table(env, &cells)
    })
}

/// The held locks matching `pattern`, found within `budgetMs`: a listing's head, then 7 fields
/// each (see `dibs.HeldLock`).
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_locks<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    pattern: JString<'l>,
    limit: jint,
    budget_ms: jlong,
) -> jobject {
    entry(&mut env, |env| {
        let pattern = read_string(env, &pattern, "pattern")?;
        let budget = Duration::from_millis(budget_ms.max(0) as u64);
        let locks = handles::locker(handle)?.locks(&pattern, limit.max(1) as usize, budget)?;
        held_locks_table(env, locks)
    })
}

/// The locks of the job `job` that a run holds now (`dibs_core::Locker::running`), found within
/// `budgetMs`: as `locks`'s table.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_running<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    job: JString<'l>,
    budget_ms: jlong,
) -> jobject {
    entry(&mut env, |env| {
        let job = read_string(env, &job, "job")?;
        let budget = Duration::from_millis(budget_ms.max(0) as u64);
        let locks = handles::locker(handle)?.running(&job, budget)?;
        held_locks_table(env, locks)
    })
}

/// The lock `lockName` with its holder's token, as one row of `locks`'s table; empty when free.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_heldLock<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    lock_name: JString<'l>,
) -> jobject {
    entry(&mut env, |env| {
        let name = read_string(env, &lock_name, "lockName")?;
        let cells: Vec<Option<String>> = handles::locker(handle)?
            .held_lock(&name)?
            .into_iter()
            .flat_map(held_lock_cells)
            .collect();
        string_table(env, &cells)
    })
}

/// A listing of held locks as `locks`'s table: the listing's head, then 7 fields a lock.
fn held_locks_table(
    env: &mut JNIEnv,
    locks: Listing<dibs_core::HeldLock>,
) -> Result<jobject, crate::guard::Failure> {
    let mut cells: Vec<Option<String>> = listing_head(&locks).into();
    cells.extend(locks.items.into_iter().flat_map(held_lock_cells));
    string_table(env, &cells)
}

/// A held lock's cells; the last says whether a run holds it (`HeldLock::is_running`: a lock
/// kept for the rest of atLeast, or a tick's done-mark, is held by none).
fn held_lock_cells(lock: dibs_core::HeldLock) -> [Option<String>; 7] {
    let running = if lock.is_running() { "1" } else { "0" };
    let holder = lock.state.holder;
    [
        Some(lock.name),
        holder.as_ref().map(|h| h.host.clone()),
        holder.as_ref().map(|h| h.pid.to_string()),
        holder.as_ref().map(|h| h.acquired_at_unix_ms.to_string()),
        lock.state.remaining_ms.map(|ms| ms.to_string()),
        lock.token,
        Some(running.to_owned()),
    ]
}

/// An operator's forced release of `lockName` if it holds `token`: 1 released, 0 free, -1
/// another holder's now (see `dibs_core::Locker::force_release`).
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_forceRelease<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    lock_name: JString<'l>,
    token: JString<'l>,
    by: JString<'l>,
) -> jint {
    entry(&mut env, |env| {
        let name = read_string(env, &lock_name, "lockName")?;
        let token = read_string(env, &token, "token")?;
        let by = read_string(env, &by, "by")?;
        Ok(
            match handles::locker(handle)?.force_release(&name, &token, &by)? {
                ForcedRelease::Released => 1,
                ForcedRelease::Free => 0,
                ForcedRelease::OtherHolder => -1,
            },
        )
    })
}

/// Whether the conn's releases record their runs in the history (`dibs_core::Locker::keeps_history`).
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_keepsHistory<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jboolean {
    entry(&mut env, |_| {
        Ok(jboolean::from(handles::locker(handle)?.keeps_history()))
    })
}

/// The job of a lock name: the one rule of the history, the meters and the expectations
/// (`dibs_core::job_of`).
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_jobOf<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    lock_name: JString<'l>,
) -> jstring {
    entry(&mut env, |env| {
        let name = read_string(env, &lock_name, "lockName")?;
        Ok(env.new_string(dibs_core::job_of(&name))?.into_raw())
    })
}
