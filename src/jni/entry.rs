//! The `native` methods of `dibs.NativeLib`.

use jni::objects::{JClass, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jlong, JNI_FALSE, JNI_TRUE};
use jni::JNIEnv;

use super::guard::{entry, Failure};
use super::invocation::{Invocation, ReleaseStatus};
use super::{handles, tokens};
use crate::{ConnSpec, Error, LockParams, Outcome, Release};

#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_connectUri<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    uri: JString<'l>,
) -> jlong {
    entry(&mut env, |env| {
        let uri = read_string(env, &uri, "conn")?;
        handles::handle_for(ConnSpec::from_uri(&uri)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_connectMap<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    tokens: JObjectArray<'l>,
) -> jlong {
    entry(&mut env, |env| {
        let len = env.get_array_length(&tokens)?;
        let mut strings = Vec::with_capacity(len as usize);
        for i in 0..len {
            // A frame per element: reading a string makes local references of its own, and a
            // long map would otherwise overrun the 32 that JNI guarantees.
            let text = env.with_local_frame(4, |env| -> Result<String, Failure> {
                let element = JString::from(env.get_object_array_element(&tokens, i)?);
                read_string(env, &element, "conn")
            })?;
            strings.push(text);
        }
        let entries = tokens::decode(&strings)?;
        handles::handle_for(ConnSpec::from_map(&entries)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_execute<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    lock_name: JString<'l>,
    at_most: jlong,
    at_least: jlong,
    unit_ms: jlong,
    invocation: JObject<'l>,
) -> jboolean {
    entry(&mut env, |env| {
        let name = read_string(env, &lock_name, "lockName")?;
        let params = LockParams::new(&name, at_most, at_least, unit_ms)?;
        let locker = handles::locker(handle)?;
        let invocation = Invocation::new(env, &invocation)?;
        let (ran, elapsed, release) = match locker.execute(&params, || invocation.run(env))? {
            Outcome::Skipped => return Ok(JNI_FALSE),
            Outcome::Ran {
                value,
                elapsed,
                release,
            } => (value, elapsed, release),
        };
        // The release ran; if the up-call left an exception pending, let it surface now.
        ran?;
        let elapsed_ms = i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX);
        match release {
            Ok(Release::Kept { .. } | Release::Deleted) => {
                invocation.released(env, ReleaseStatus::Released, elapsed_ms, None)?
            }
            Ok(Release::NotOwned) => {
                invocation.released(env, ReleaseStatus::NotOwned, elapsed_ms, None)?
            }
            Err(e) => {
                invocation.released(env, ReleaseStatus::Failed, elapsed_ms, Some(e.message()))?
            }
        }
        Ok(JNI_TRUE)
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
    Ok(env.get_string(s)?.into())
}
