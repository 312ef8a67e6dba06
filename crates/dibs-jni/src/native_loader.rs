//! The `native` method of `dibs.loader.NativeLoader`: the version check that keeps a stale library
//! (an old `libdibs` on `java.library.path`) from running under newer Java classes.

use jni::objects::JClass;
use jni::sys::jstring;
use jni::JNIEnv;

use super::guard::entry;

/// This library's version, from Cargo.toml; the jar compares it with its own.
#[no_mangle]
pub extern "system" fn Java_dibs_loader_NativeLoader_version<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    entry(&mut env, |env| {
        Ok(env.new_string(env!("CARGO_PKG_VERSION"))?.into_raw())
    })
}
