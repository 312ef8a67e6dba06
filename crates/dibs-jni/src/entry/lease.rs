//! A lease's life: acquire, extend, its fencing token and safe time, loss and its watch, release.

use jni::objects::{JClass, JLongArray, JString};
use jni::sys::{jboolean, jint, jlong, jlongArray, jstring};
use jni::JNIEnv;

use super::read_string;
use crate::guard::entry;
use crate::{handles, leases, lost};

use dibs_core::{unknown_tick, Error, LockParams, TaskResult, TickAcquire, TickState};

/// Validates the arguments, then `SET key value NX PX atMost` (with its fencing token, and durable
/// acquire's WAIT when it applies), and says how it went as the release does: `facts` gets the
/// lease's id (0 when another holder has the lock, or when durable acquire could not confirm the
/// lock and gave it back), whether it was unconfirmed (1 or 0) and the fencing token; the return
/// value is the acquire's warning for the log (unconfirmed, or a keep-alive schedule that cannot
/// hold), or null. With keep-alive in the conn, the extender starts here. With a `tick` (null
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
    facts: JLongArray<'l>,
) -> jstring {
    entry(&mut env, |env| {
        let name = read_string(env, &lock_name, "lockName")?;
        let params = if tick.is_null() {
            LockParams::new(&name, at_most, at_least, unit_ms)?
        } else {
            LockParams::for_tick(&name, &read_string(env, &tick, "tick")?, at_most, unit_ms)?
        };
        let (acquired, warning) = match handles::locker(handle)?.acquire(&params) {
            Ok(Some(lease)) => won(lease),
            Ok(None) => ([0; 4], None),
            // Given back already: a call that did not run, told as one (never an exception).
            Err(Error::Unconfirmed(message)) => ([0, 1, 0, 0], Some(message)),
            Err(e) => return Err(e.into()),
        };
        tell(env, &facts, &acquired[..3], warning)
    })
}

/// A won lease, put in the table: its facts (id, not unconfirmed, fencing token, won) and its
/// warning.
fn won(mut lease: dibs_core::Lease) -> ([i64; 4], Option<String>) {
    let warning = lease.take_warning();
    let fence = lease.fence() as i64;
    ([leases::put(lease), 0, fence, 0], warning)
}

/// Tells Java an acquire's `facts` and returns its warning. The lease is in the table: if Java
/// cannot be told (out of memory), let go of it now.
fn tell(
    env: &mut JNIEnv,
    into: &JLongArray,
    facts: &[i64],
    warning: Option<String>,
) -> Result<jstring, crate::guard::Failure> {
    if let Err(e) = env.set_long_array_region(into, 0, facts) {
        if facts[0] != 0 {
            let _ = leases::take(facts[0]).map(|lease| lease.release_after(TaskResult::Failed));
        }
        return Err(e.into());
    }
    Ok(crate::guard::warning_string(env, warning)?)
}

/// The acquire of a tick of the job `job` that may not have run
/// (`dibs_core::Locker::acquire_unrun`): won only when its lock is free and the history proves
/// that it did not run; `catch_up`: the run is recorded as a catch-up's. `facts` as
/// [`Java_dibs_NativeLib_acquire`]'s, then the tick's state: 0 won or taken, 1 ran (by the
/// history), 2 unknown (the history cannot prove it; the warning says so), 4 beyond catch-up's
/// reach (not tried). `due_ms`: when the
/// tick was due, Unix ms.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the JNI signature: env, class, then Java's 7 arguments
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
    facts: JLongArray<'l>,
) -> jstring {
    entry(&mut env, |env| {
        let job = read_string(env, &job, "lockName")?;
        let params =
            LockParams::for_tick(&job, &read_string(env, &tick, "tick")?, at_most, unit_ms)?;
        let due = u64::try_from(due_ms).unwrap_or(0);
        let found = handles::locker(handle)?.acquire_unrun(&params, due, catch_up != 0);
        let (acquired, warning) = match found {
            Ok(TickAcquire::Won(lease)) => won(lease),
            Ok(TickAcquire::Taken) => ([0; 4], None),
            Ok(TickAcquire::Ran) => ([0, 0, 0, 1], None),
            Ok(TickAcquire::Unknown) => ([0, 0, 0, 2], Some(unknown_tick(params.name()))),
            Ok(TickAcquire::BeyondReach) => ([0, 0, 0, 4], None),
            Err(Error::Unconfirmed(message)) => ([0, 1, 0, 0], Some(message)),
            Err(e) => return Err(e.into()),
        };
        tell(env, &facts, &acquired, warning)
    })
}

/// Whether the tick of the job `job` due at `due_ms` (Unix ms) ran
/// (`dibs_core::Locker::tick_state`): 0 missed, 1 ran, 2 unknown, 3 before the job's first
/// recorded run (a new job), 4 beyond catch-up's reach (due more than 30 days ago, not looked
/// at). Changes nothing.
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
        Ok(match handles::locker(handle)?.tick_state(&params, due)? {
            TickState::Missed => 0,
            TickState::Ran => 1,
            TickState::Unknown => 2,
            TickState::BeforeFirstRun => 3,
            TickState::BeyondReach => 4,
        })
    })
}

/// Releases a lease and says how the call ended: `facts` gets the ending's code and the
/// milliseconds held; the return value is the ending's warning, or null when all went well.
/// `task`: how the task ended, for the run history: 0 succeeded, 1 failed (it threw), 2 unknown
/// (the caller did not say).
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_release<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    lease: jlong,
    task: jint,
    facts: JLongArray<'l>,
) -> jstring {
    entry(&mut env, |env| {
        let lease = leases::take(lease)?;
        let ending = lease.release_after(match task {
            0 => TaskResult::Succeeded,
            1 => TaskResult::Failed,
            _ => TaskResult::Unknown,
        });
        let held_ms = i64::try_from(ending.elapsed.as_millis()).unwrap_or(i64::MAX);
        env.set_long_array_region(&facts, 0, &[i64::from(ending.code()), held_ms])?;
        Ok(crate::guard::warning_string(env, ending.warning())?)
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
