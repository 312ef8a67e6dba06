//! Entry points for `dibs.TestHooks`, a class of the Java test suite only. They panic on purpose,
//! through the same guard as the real entry points. Built only with `--features test-hooks`.

use jni::objects::{JClass, JObject, JString};
use jni::sys::{jboolean, jlong, JNI_TRUE};
use jni::JNIEnv;

use super::guard::entry;
use super::handles;
use super::invocation::Invocation;
use crate::LockParams;

/// Panics with `message`.
#[no_mangle]
pub extern "system" fn Java_dibs_TestHooks_panic<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    message: JString<'l>,
) {
    entry(&mut env, |env| -> Result<(), _> {
        let message: String = env.get_string(&message)?.into();
        panic!("{message}")
    })
}

/// Takes the lock, runs the task, then panics inside the locked section: the release must still
/// run, and Java must see a DibsException.
#[no_mangle]
pub extern "system" fn Java_dibs_TestHooks_panicAfterTask<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    lock_name: JString<'l>,
    invocation: JObject<'l>,
) -> jboolean {
    entry(&mut env, |env| {
        let name: String = env.get_string(&lock_name)?.into();
        let params = LockParams::from_secs(&name, 60, 0)?;
        let invocation = Invocation::new(env, &invocation)?;
        handles::locker(handle)?.execute(&params, || {
            let _ = invocation.run(env);
            panic!("test hook: panic after the task of lock '{name}'")
        })?;
        Ok(JNI_TRUE)
    })
}
