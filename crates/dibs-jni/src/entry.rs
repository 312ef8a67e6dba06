//! The `native` methods of `dibs.NativeLib`.

use jni::objects::{JClass, JLongArray, JObject, JObjectArray, JString, JValue};
use jni::sys::{jboolean, jint, jlong, jlongArray, jobject, jstring, JNI_TRUE};
use jni::JNIEnv;

use super::guard::{entry, Failure};
use super::{handles, leases, lost, tokens};
use std::time::Duration;

use dibs_core::{ConnSpec, Error, ForcedRelease, Listing, LockParams, Matched, TaskResult};

/// A handle for a URI conn: the shared locker of its spec, or (`owned`) one with its own pool.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_connectUri<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    uri: JString<'l>,
    owned: jboolean,
) -> jlong {
    entry(&mut env, |env| {
        let uri = read_string(env, &uri, "conn")?;
        handle(ConnSpec::from_uri(&uri)?, owned)
    })
}

/// The same for a Map conn that `dibs.ConnCache` flattened into tokens.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_connectMap<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    tokens: JObjectArray<'l>,
    owned: jboolean,
) -> jlong {
    entry(&mut env, |env| handle(map_spec(env, &tokens)?, owned))
}

/// Parses a Map conn flattened into tokens, as `connectMap` does.
fn map_spec(env: &mut JNIEnv, tokens: &JObjectArray) -> Result<ConnSpec, Failure> {
    let len = env.get_array_length(tokens)?;
    let mut strings = Vec::with_capacity(len as usize);
    for i in 0..len {
        // A frame per element: reading a string makes local references of its own, and a
        // long map would otherwise overrun the 32 that JNI guarantees.
        let text = env.with_local_frame(4, |env| -> Result<String, Failure> {
            let element = JString::from(env.get_object_array_element(tokens, i)?);
            read_string(env, &element, "conn")
        })?;
        strings.push(text);
    }
    let entries = tokens::decode(&strings)?;
    Ok(ConnSpec::from_map(&entries)?)
}

/// Where a URI conn leads, as dibs's messages name it (`ConnSpec::endpoint`: never credentials),
/// parsed and checked exactly as `connectUri` would, the TLS files it names read and checked
/// too; makes no handle and does no network I/O.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_describeUri<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    uri: JString<'l>,
) -> jstring {
    entry(&mut env, |env| {
        let uri = read_string(env, &uri, "conn")?;
        let spec = ConnSpec::from_uri(&uri)?;
        spec.check_files()?;
        Ok(env.new_string(spec.endpoint())?.into_raw())
    })
}

/// The same for a Map conn flattened into tokens.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_describeMap<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    tokens: JObjectArray<'l>,
) -> jstring {
    entry(&mut env, |env| {
        let spec = map_spec(env, &tokens)?;
        spec.check_files()?;
        Ok(env.new_string(spec.endpoint())?.into_raw())
    })
}

fn handle(spec: ConnSpec, owned: jboolean) -> Result<jlong, Failure> {
    if owned == JNI_TRUE {
        handles::open(spec)
    } else {
        handles::shared(spec)
    }
}

/// Drops the pool of an owned handle.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_close<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    entry(&mut env, |_| handles::close(handle))
}

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

/// Validates the arguments, then `SET key value NX PX atMost` (with its fencing token, and durable
/// acquire's WAIT when it applies), and says how it went as the release does: `facts` gets the
/// lease's id (0 when another holder has the lock, or when durable acquire could not confirm the
/// lock and gave it back), whether it was unconfirmed (1 or 0) and the fencing token; the return
/// value is the acquire's warning for the log (unconfirmed, or a keep-alive schedule that cannot
/// hold), or null. With keep-alive in the conn, the extender starts here. With a `tick` (null
/// for none), the lock of that tick of the job `lockName` (`dibs_core::LockParams::for_tick`,
/// whose atLeast is its atMost).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the JNI signature: env, class, then Java's 7 arguments
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
        let (id, unconfirmed, fence, warning) = match handles::locker(handle)?.acquire(&params) {
            Ok(Some(mut lease)) => {
                let warning = lease.take_warning();
                let fence = lease.fence() as i64;
                (leases::put(lease), 0, fence, warning)
            }
            Ok(None) => (0, 0, 0, None),
            // Given back already: a call that did not run, told as one (never an exception).
            Err(Error::Unconfirmed(message)) => (0, 1, 0, Some(message)),
            Err(e) => return Err(e.into()),
        };
        // The lease is in the table: if Java cannot be told (out of memory), let go of it now.
        if let Err(e) = env.set_long_array_region(&facts, 0, &[id, unconfirmed, fence]) {
            if id != 0 {
                let _ = leases::take(id).map(|lease| lease.release_after(TaskResult::Failed));
            }
            return Err(e.into());
        }
        Ok(match warning {
            Some(text) => env.new_string(text)?.into_raw(),
            None => std::ptr::null_mut(),
        })
    })
}

/// Releases a lease and says how the call ended: `facts` gets the ending's code and the
/// milliseconds held; the return value is the ending's warning, or null when all went well.
/// `task_failed`: the task threw, for the run history.
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_release<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    lease: jlong,
    task_failed: jboolean,
    facts: JLongArray<'l>,
) -> jstring {
    entry(&mut env, |env| {
        let lease = leases::take(lease)?;
        let ending = lease.release_after(if task_failed == 0 {
            TaskResult::Succeeded
        } else {
            TaskResult::Failed
        });
        let held_ms = i64::try_from(ending.elapsed.as_millis()).unwrap_or(i64::MAX);
        env.set_long_array_region(&facts, 0, &[i64::from(ending.code()), held_ms])?;
        Ok(match ending.warning() {
            Some(text) => env.new_string(text)?.into_raw(),
            None => std::ptr::null_mut(),
        })
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

fn read_string(env: &mut JNIEnv, s: &JString, arg: &'static str) -> Result<String, Failure> {
    if s.is_null() {
        return Err(Error::InvalidArgument {
            arg,
            message: format!("{arg} must not be null"),
        }
        .into());
    }
    // SAFETY: every native method of dibs.NativeLib declares this parameter as a String, so the
    // JVM only ever passes a java.lang.String (or null, handled above). The checked get_string
    // would look up java/lang/String with FindClass on every call.
    let java = unsafe { env.get_string_unchecked(s) }?;
    match cesu8::from_java_cesu8(java.to_bytes()) {
        Ok(text) => Ok(text.into_owned()),
        Err(_) => Err(Error::InvalidArgument {
            arg,
            message: format!("{arg} must not contain unpaired UTF-16 surrogates"),
        }
        .into()),
    }
}

/// A `String[]` of `fields` per item, `null` where a field is absent: Java reads it back into
/// its types (`dibs.DibsRun`, `dibs.HeldLock`, ...).
fn string_table(env: &mut JNIEnv, cells: &[Option<String>]) -> Result<jobject, Failure> {
    let array = env.new_object_array(
        i32::try_from(cells.len()).unwrap_or(i32::MAX),
        "java/lang/String",
        JObject::null(),
    )?;
    for (i, cell) in cells.iter().enumerate() {
        if let Some(text) = cell {
            let text = env.new_string(text)?;
            env.set_object_array_element(&array, i as i32, &text)?;
            env.delete_local_ref(text)?;
        }
    }
    Ok(array.into_raw())
}

/// The last `limit` recorded runs of the job or lock `name`, newest first: a head of 3 cells
/// (the job whose history holds them, or null when nothing matched; since when the history holds
/// every run, in Unix ms; its last eviction, or null), then 12 fields a run (see `dibs.DibsRun`).
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
        let mut cells = Vec::with_capacity(3 + history.runs.len() * 12);
        cells.extend([
            match history.matched {
                Matched::Job => Some(name),
                Matched::Lock { job } => Some(job),
                Matched::Nothing => None,
            },
            Some(history.complete_since_unix_ms.to_string()),
            history.evicted_at_unix_ms.map(|ms| ms.to_string()),
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
                run.task.map(|t| (t == TaskResult::Succeeded).to_string()),
                run.forced_by,
                Some(run.at_least_ms.to_string()),
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

/// The held locks matching `pattern`, found within `budgetMs`: a listing's head, then 6 fields
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
        let mut cells: Vec<Option<String>> = listing_head(&locks).into();
        cells.extend(locks.items.into_iter().flat_map(held_lock_cells));
        string_table(env, &cells)
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

fn held_lock_cells(lock: dibs_core::HeldLock) -> [Option<String>; 6] {
    let holder = lock.state.holder;
    [
        Some(lock.name),
        holder.as_ref().map(|h| h.host.clone()),
        holder.as_ref().map(|h| h.pid.to_string()),
        holder.as_ref().map(|h| h.acquired_at_unix_ms.to_string()),
        lock.state.remaining_ms.map(|ms| ms.to_string()),
        lock.token,
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
