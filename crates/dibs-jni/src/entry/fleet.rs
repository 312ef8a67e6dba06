//! Looking at the locks and jobs of a conn, and an operator's forced release: inspect, history,
//! jobs, locks, heldLock, forceRelease, the job of a lock name, and whether the conn records runs.
//! What they return is declared in `crate::border`.

use jni::objects::{JClass, JString};
use jni::sys::{jboolean, jint, jlong, jobject, jstring};
use jni::JNIEnv;

use super::read_string;
use crate::border::{ForcedRelease, Held, History, Inspected, Listing, Recorded, Run, Task};
use crate::guard::entry;
use crate::handles;
use std::time::Duration;

use dibs_core::{Matched, TaskResult};

/// Who holds the lock `lockName`, as a `dibs.Border.Inspected`; never changes the lock.
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
        Ok(Inspected {
            held: state.is_some(),
            remaining_ms: or_none(state.as_ref().and_then(|s| s.remaining_ms)),
            host: holder.map(|h| h.host.clone()),
            pid: or_none(holder.map(|h| u64::from(h.pid))),
            acquired_at_ms: or_none(holder.map(|h| h.acquired_at_unix_ms)),
        }
        .new_java(env)?
        .into_raw())
    })
}

/// A number the border carries as a Java long, -1 for none.
pub(super) fn or_none(value: Option<u64>) -> i64 {
    value.map_or(-1, |v| i64::try_from(v).unwrap_or(i64::MAX))
}

pub(super) fn millis(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The last `limit` recorded runs of the job or lock `name`, newest first, as a
/// `dibs.Border.History`.
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
        let history =
            handles::locker(handle)?.history(&name, dibs_core::validate_limit(limit.into())?)?;
        Ok(history_of(name, history).new_java(env)?.into_raw())
    })
}

/// A history as a `dibs.Border.History`; `name` is what was asked.
pub(super) fn history_of(name: String, history: dibs_core::History) -> History {
    History {
        job: match history.matched {
            Matched::Job => Some(name),
            Matched::Lock { job } => Some(job),
            Matched::Nothing => None,
        },
        complete_since_ms: millis(history.complete_since_unix_ms),
        evicted_at_ms: or_none(history.evicted_at_unix_ms),
        job_evicted_at_ms: or_none(history.job_evicted_at_unix_ms),
        runs: history.runs.into_iter().map(run_of).collect(),
    }
}

/// A run as a `dibs.Border.Run`.
pub(super) fn run_of(run: dibs_core::Run) -> Run {
    Run {
        recorded_at_ms: millis(run.recorded_at_unix_ms),
        lock_name: run.name,
        host: run.host,
        pid: i64::from(run.pid),
        instance_id: run.instance,
        started_at_ms: millis(run.started_at_unix_ms),
        duration_ms: millis(run.duration_ms),
        fencing_token: millis(run.fence),
        ended: run.ended.as_str().to_owned(),
        // Not told: a forced release, or an outcome nobody said.
        task: match run.task {
            Some(TaskResult::Succeeded) => Task::Succeeded,
            Some(TaskResult::Failed) => Task::Failed,
            Some(TaskResult::Unknown) | None => Task::Unknown,
        },
        forced_by: run.forced_by,
        at_least_ms: millis(run.at_least_ms),
        catch_up: run.catch_up,
    }
}

/// A scan's budget as Java gives it: -1 for the core's default; another negative one is refused.
pub(super) fn budget(ms: jlong) -> Result<Duration, dibs_core::Error> {
    Ok(super::duration(ms, "budget")?.unwrap_or(dibs_core::SCAN_BUDGET))
}

/// Checks a scan's budget, without I/O (`dibs_core::validate_budget`).
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_validateBudget<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    budget_ms: jlong,
) {
    entry(&mut env, |_| {
        Ok(dibs_core::validate_budget(budget(budget_ms)?)?)
    })
}

/// A listing as a `dibs.Border.Listing`, of locks or of jobs.
fn listing<T>(head: &dibs_core::Listing<T>, locks: Vec<Held>, jobs: Vec<Recorded>) -> Listing {
    Listing {
        complete: head.complete,
        truncated: head.truncated,
        scanned: millis(head.scanned),
        keys: millis(head.keys),
        locks,
        jobs,
    }
}

/// The jobs with a recorded run, the most recent first, found within `budgetMs`.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_jobs<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    limit: jint,
    budget_ms: jlong,
) -> jobject {
    entry(&mut env, |env| {
        let budget = budget(budget_ms)?;
        let mut found =
            handles::locker(handle)?.jobs(dibs_core::validate_limit(limit.into())?, budget)?;
        let jobs = std::mem::take(&mut found.items)
            .into_iter()
            .map(|j| Recorded {
                job: j.name,
                last_recorded_ms: millis(j.last_recorded_unix_ms),
            })
            .collect();
        Ok(listing(&found, Vec::new(), jobs).new_java(env)?.into_raw())
    })
}

/// The held locks matching `pattern`, found within `budgetMs`.
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
        let budget = budget(budget_ms)?;
        let found = handles::locker(handle)?.locks(
            &pattern,
            dibs_core::validate_limit(limit.into())?,
            budget,
        )?;
        Ok(held_listing(found).new_java(env)?.into_raw())
    })
}

/// The locks of the job `job` that a run holds now (`dibs_core::Locker::running`), found within
/// `budgetMs`.
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
        let budget = budget(budget_ms)?;
        let found = handles::locker(handle)?.running(&job, budget)?;
        Ok(held_listing(found).new_java(env)?.into_raw())
    })
}

/// The lock `lockName` with its holder's token, as a `dibs.Border.Held`; null when free.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_heldLock<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    lock_name: JString<'l>,
) -> jobject {
    entry(&mut env, |env| {
        let name = read_string(env, &lock_name, "lockName")?;
        Ok(match handles::locker(handle)?.held_lock(&name)? {
            Some(lock) => held(lock).new_java(env)?.into_raw(),
            None => std::ptr::null_mut(),
        })
    })
}

pub(super) fn held_listing(mut found: dibs_core::Listing<dibs_core::HeldLock>) -> Listing {
    let locks = std::mem::take(&mut found.items)
        .into_iter()
        .map(held)
        .collect();
    listing(&found, locks, Vec::new())
}

pub(super) fn held(lock: dibs_core::HeldLock) -> Held {
    let running = lock.is_running();
    let holder = lock.state.holder;
    Held {
        name: lock.name,
        host: holder.as_ref().map(|h| h.host.clone()),
        pid: or_none(holder.as_ref().map(|h| u64::from(h.pid))),
        acquired_at_ms: or_none(holder.as_ref().map(|h| h.acquired_at_unix_ms)),
        remaining_ms: or_none(lock.state.remaining_ms),
        token: lock.token,
        running,
    }
}

/// An operator's forced release of `lockName` if it holds `token`, as a
/// `dibs.Border.ForcedRelease` code (see `dibs_core::Locker::force_release`).
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
                dibs_core::ForcedRelease::Released => ForcedRelease::Released,
                dibs_core::ForcedRelease::Free => ForcedRelease::Free,
                dibs_core::ForcedRelease::OtherHolder => ForcedRelease::OtherHolder,
            }
            .code(),
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
