//! A lease's life: acquire, extend, its fencing token and safe time, loss and its watch, release.

use jni::objects::{JClass, JObject, JString};
use jni::sys::{jboolean, jint, jlong, jlongArray};
use jni::JNIEnv;

use super::read_string;
use crate::border::{AcquireOutcome, Acquired, Ending, Released, Task, TickState, Warning};
use crate::guard::entry;
use crate::{handles, leases, lost};

use dibs_core::{unknown_tick, Acquire, Ended, LockParams, TaskResult, TickAcquire};

/// Validates the arguments, then `SET key value NX PX atMost` (with its fencing token, and durable
/// acquire's WAIT when it applies), and says how it went in `into` (a `dibs.Border.Acquired`):
/// won, taken, or unconfirmed (durable acquire won the lock, could not confirm it and gave it
/// back: an outcome, never an exception), the lease's id and fencing token when won, and the
/// acquire's warning. With keep-alive in the conn, the extender starts here. With a `tick` (null
/// for none), the lock of that tick of the job `lockName` (`dibs_core::LockParams::for_tick`,
/// whose atLeast is its atMost).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the JNI signature: env, class, then Java's 8 arguments
pub extern "system" fn Java_dibs_NativeLib_acquire<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    lock_name: JString<'l>,
    tick: JString<'l>,
    at_most: jlong,
    at_least: jlong,
    unit_ms: jlong,
    tell_job: jboolean,
    into: JObject<'l>,
) {
    entry(&mut env, |env| {
        let name = read_string(env, &lock_name, "lockName")?;
        let params = if tick.is_null() {
            LockParams::new(&name, at_most, at_least, unit_ms)?
        } else {
            LockParams::for_tick(&name, &read_string(env, &tick, "tick")?, at_most, unit_ms)?
        };
        let acquired = match handles::locker(handle)?.acquire(&params)? {
            Acquire::Won(lease) => won(lease),
            Acquire::Taken => not_won(AcquireOutcome::Taken, None),
            Acquire::Unconfirmed(why) => not_won(AcquireOutcome::Unconfirmed, Some(why)),
        };
        tell(env, &into, with_job(acquired, &params, tell_job))
    })
}

/// A won lease, put in the table for Java.
fn won(mut lease: dibs_core::Lease) -> Acquired {
    let warning = Warning(lease.take_warning());
    let fencing_token = lease.fence() as i64;
    Acquired {
        outcome: AcquireOutcome::Won,
        lease_id: leases::put(lease),
        fencing_token,
        warning,
        job: None,
    }
}

fn not_won(outcome: AcquireOutcome, warning: Option<String>) -> Acquired {
    Acquired {
        outcome,
        lease_id: 0,
        fencing_token: 0,
        warning: Warning(warning),
        job: None,
    }
}

/// The acquire's answer with its lock's job, where Java asked for it: the job the core computed
/// for the lock, so that Java never asks again.
fn with_job(acquired: Acquired, params: &LockParams, tell_job: jboolean) -> Acquired {
    Acquired {
        job: (tell_job != 0).then(|| params.job().to_owned()),
        ..acquired
    }
}

/// Tells Java what an acquire did. A won lease is in the table: if Java cannot be told (out of
/// memory), let go of it now.
fn tell(env: &mut JNIEnv, into: &JObject, acquired: Acquired) -> Result<(), crate::guard::Failure> {
    let lease_id = acquired.lease_id;
    acquired.write(env, into).inspect_err(|_| {
        if lease_id != 0 {
            let _ = leases::take(lease_id).map(|lease| lease.release_after(TaskResult::Failed));
        }
    })
}

/// The acquire of a tick of the job `job` that may not have run
/// (`dibs_core::Locker::acquire_unrun`): won only when its lock is free and the history proves
/// that it did not run; `catch_up`: the run is recorded as a catch-up's. Told in `into` as
/// [`Java_dibs_NativeLib_acquire`] tells it, with the history's answers as outcomes too: ran,
/// unknown (the warning says so) or beyond catch-up's reach. `due_ms`: when the tick was due,
/// Unix ms.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the JNI signature: env, class, then Java's 9 arguments
pub extern "system" fn Java_dibs_NativeLib_acquireUnrun<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    job: JString<'l>,
    tick: JString<'l>,
    at_most: jlong,
    unit_ms: jlong,
    due_ms: jlong,
    catch_up: jboolean,
    tell_job: jboolean,
    into: JObject<'l>,
) {
    entry(&mut env, |env| {
        let job = read_string(env, &job, "lockName")?;
        let params =
            LockParams::for_tick(&job, &read_string(env, &tick, "tick")?, at_most, unit_ms)?;
        let due = u64::try_from(due_ms).unwrap_or(0);
        let found = handles::locker(handle)?.acquire_unrun(&params, due, catch_up != 0);
        let acquired = match found? {
            TickAcquire::Won(lease) => won(lease),
            TickAcquire::Taken => not_won(AcquireOutcome::Taken, None),
            TickAcquire::Ran => not_won(AcquireOutcome::Ran, None),
            TickAcquire::Unknown => {
                not_won(AcquireOutcome::Unknown, Some(unknown_tick(params.name())))
            }
            TickAcquire::BeyondReach => not_won(AcquireOutcome::BeyondReach, None),
            TickAcquire::Unconfirmed(why) => not_won(AcquireOutcome::Unconfirmed, Some(why)),
        };
        tell(env, &into, with_job(acquired, &params, tell_job))
    })
}

/// Whether the tick of the job `job` due at `due_ms` (Unix ms) ran
/// (`dibs_core::Locker::tick_state`), as a `dibs.Border.TickState` code. Changes nothing.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_tickState<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    job: JString<'l>,
    tick: JString<'l>,
    due_ms: jlong,
) -> jint {
    entry(&mut env, |env| {
        let job = read_string(env, &job, "lockName")?;
        let params = LockParams::for_tick(&job, &read_string(env, &tick, "tick")?, 1, 1)?;
        let due = u64::try_from(due_ms).unwrap_or(0);
        let state = match handles::locker(handle)?.tick_state(&params, due)? {
            dibs_core::TickState::Missed => TickState::Missed,
            dibs_core::TickState::Ran => TickState::Ran,
            dibs_core::TickState::Unknown => TickState::Unknown,
            dibs_core::TickState::BeforeFirstRun => TickState::BeforeFirstRun,
            dibs_core::TickState::BeyondReach => TickState::BeyondReach,
        };
        Ok(state.code())
    })
}

/// Releases a lease and says how the call ended in `into` (a `dibs.Border.Released`). `task`: how
/// the task ended, a `dibs.Border.Task` code, for the run history.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_release<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    lease: jlong,
    task: jint,
    into: JObject<'l>,
) {
    entry(&mut env, |env| {
        let task = match Task::from_code(task) {
            Some(Task::Succeeded) => TaskResult::Succeeded,
            Some(Task::Failed) => TaskResult::Failed,
            Some(Task::Unknown) | None => TaskResult::Unknown,
        };
        let ending = leases::take(lease)?.release_after(task);
        Released {
            ending: match ending.ended {
                Ended::Released => Ending::Released,
                Ended::KeptForAtLeast => Ending::KeptForAtLeast,
                Ended::NoLongerOurs => Ending::NoLongerOurs,
                Ended::LostWhileRunning => Ending::LostWhileRunning,
                Ended::ReleaseFailed => Ending::ReleaseFailed,
                Ended::Unproven => Ending::Unproven,
                Ended::Forced | Ended::Running | Ended::Unended => {
                    unreachable!("a release never ends as {}", ending.ended)
                }
            },
            owned_to_the_end: ending.owned_to_the_end(),
            held_ms: i64::try_from(ending.elapsed.as_millis()).unwrap_or(i64::MAX),
            warning: Warning(ending.warning()),
        }
        .write(env, &into)
    })
}

/// If the lease's lock is still ours, sets its expiry to `atMost` from now and counts `atLeast`
/// from now; false when no longer ours. The lease stays held either way, for its release.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_extend<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    lease: jlong,
    at_most_ms: jlong,
    at_least_ms: jlong,
) -> jboolean {
    entry(&mut env, |_| {
        // Out of the table during the round trip, so that other calls never wait on it; Java
        // never extends and releases one lease at once.
        let mut held = leases::take(lease)?;
        let ours = held.extend(at_most_ms, at_least_ms);
        leases::put_back(lease, held);
        Ok(jboolean::from(ours?))
    })
}

/// The lease's fencing token (`dibs_core::Lease::fence`; no I/O).
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_fencingToken<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    lease: jlong,
) -> jlong {
    entry(&mut env, |_| Ok(leases::fence(lease)? as jlong))
}

/// Whether keep-alive found the lease's lock taken, or could not extend it in time.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_isLost<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    lease: jlong,
) -> jboolean {
    entry(&mut env, |_| Ok(jboolean::from(leases::is_lost(lease)?)))
}

/// Has the lease's id handed to [`Java_dibs_NativeLib_awaitLost`] when keep-alive finds its lock
/// lost (at once if it is lost already); false, and nothing ever handed, without keep-alive.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_watchLost<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    lease: jlong,
) -> jboolean {
    entry(&mut env, |_| Ok(jboolean::from(leases::watch_lost(lease)?)))
}

/// The watched leases found lost since the last call, waiting up to `timeoutMs` for one; an
/// empty array when none came. For Java's watcher thread alone: it blocks.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_awaitLost<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    timeout_ms: jlong,
) -> jlongArray {
    entry(&mut env, |env| {
        let ids = lost::take(std::time::Duration::from_millis(timeout_ms.max(0) as u64));
        let array = env.new_long_array(ids.len() as i32)?;
        env.set_long_array_region(&array, 0, &ids)?;
        Ok(array.into_raw())
    })
}

/// How many milliseconds longer the lease's holder may rely on its lock (see
/// `dibs_core::Lease::safe_for`).
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_safeForMs<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    lease: jlong,
) -> jlong {
    entry(&mut env, |_| {
        Ok(i64::try_from(leases::safe_for(lease)?.as_millis()).unwrap_or(i64::MAX))
    })
}

/// How many leases Java holds: acquired and not yet released.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_heldLeases<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jlong {
    entry(&mut env, |_| {
        Ok(i64::try_from(leases::count()).unwrap_or(i64::MAX))
    })
}
