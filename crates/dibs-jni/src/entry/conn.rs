//! Connecting: a handle for a URI or Map conn, where a conn leads, and closing an owned handle.

use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::{jboolean, jlong, jstring, JNI_TRUE};
use jni::JNIEnv;

use super::read_string;
use crate::guard::{entry, Failure};
use crate::{handles, tokens};

use dibs_core::ConnSpec;

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

/// The fingerprint of the JNI border this library was built with (`crate::border::FINGERPRINT`).
#[no_mangle]
pub extern "system" fn Java_dibs_NativeLib_fingerprint<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    entry(&mut env, |env| {
        Ok(env.new_string(crate::border::FINGERPRINT)?.into_raw())
    })
}
