//! The `native` methods of `dibs.NativeLib`, by purpose: `conn` (connecting and closing),
//! `lease` (a lease from acquire to release) and `fleet` (the locks and jobs of a conn); the
//! reading of Java strings they share is here.

use jni::objects::JString;
use jni::sys::jlong;
use jni::JNIEnv;

use super::guard::Failure;

use dibs_core::Error;

pub(crate) mod check;
pub(crate) mod conn;
pub(crate) mod fleet;
pub(crate) mod lease;

/// A duration Java gave in ms, -1 for none (Java's `DibsCheck.ms`): none, or one the core checks
/// further; another negative one is refused here, naming it.
fn duration(ms: jlong, arg: &'static str) -> Result<Option<std::time::Duration>, Error> {
    match u64::try_from(ms) {
        Ok(ms) => Ok(Some(std::time::Duration::from_millis(ms))),
        Err(_) if ms == -1 => Ok(None),
        Err(_) => Err(Error::InvalidArgument {
            arg,
            message: format!("{arg} must not be negative"),
        }),
    }
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
