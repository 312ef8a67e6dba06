//! The `native` methods of `dibs.NativeLib`, by purpose: `conn` (connecting and closing),
//! `lease` (a lease from acquire to release) and `fleet` (the locks and jobs of a conn); the
//! reading of Java strings and the string tables they share are here.

use jni::objects::{JObject, JString};
use jni::sys::jobject;
use jni::JNIEnv;

use super::guard::Failure;

use dibs_core::Error;

mod conn;
mod fleet;
mod lease;

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
