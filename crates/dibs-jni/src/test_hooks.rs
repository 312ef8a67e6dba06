//! Entry points for `dibs.TestHooks`, a class of the Java test suite only. They panic on purpose,
//! through the same guard as the real entry points. Built only with `--features test-hooks`.

use jni::objects::{JClass, JString};
use jni::sys::{jboolean, jlong};
use jni::JNIEnv;

use super::guard::entry;
use super::handles;
use dibs_core::LockParams;

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

/// Takes the lock, then panics while holding its lease: the lease's drop must release it, and
/// Java must see a DibsException.
#[no_mangle]
pub extern "system" fn Java_dibs_TestHooks_panicHoldingALease<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    lock_name: JString<'l>,
) -> jboolean {
    entry(&mut env, |env| {
        let name: String = env.get_string(&lock_name)?.into();
        let params = LockParams::from_secs(&name, 60, 0)?;
        let _lease = handles::locker(handle)?.acquire(&params)?;
        panic!("test hook: panic holding the lease of lock '{name}'")
    })
}
