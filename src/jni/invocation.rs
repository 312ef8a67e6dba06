//! Calls into `dibs.Invocation`, the Java object that runs the user's task and keeps its
//! outcome. Its method IDs are looked up once: they stay valid while the class is loaded, and
//! the global reference below keeps it loaded.

use std::sync::OnceLock;

use jni::objects::{GlobalRef, JMethodID, JObject, JValue};
use jni::signature::{Primitive, ReturnType};
use jni::JNIEnv;

use super::guard::Failure;

struct Methods {
    _class: GlobalRef,
    run: JMethodID,
    released: JMethodID,
}

static METHODS: OnceLock<Methods> = OnceLock::new();

fn methods(env: &mut JNIEnv, invocation: &JObject) -> Result<&'static Methods, Failure> {
    if let Some(m) = METHODS.get() {
        return Ok(m);
    }
    let class = env.get_object_class(invocation)?;
    let methods = Methods {
        run: env.get_method_id(&class, "run", "()V")?,
        released: env.get_method_id(&class, "released", "(IJLjava/lang/String;Z)V")?,
        _class: env.new_global_ref(&class)?,
    };
    env.delete_local_ref(class)?;
    Ok(METHODS.get_or_init(|| methods))
}

/// What `Invocation.released` is told about the release.
pub(super) enum ReleaseStatus {
    Released = 1,
    NotOwned = 2,
    Failed = 3,
}

/// The `dibs.Invocation` passed to one `execute` call.
pub(super) struct Invocation<'a, 'local> {
    object: &'a JObject<'local>,
    methods: &'static Methods,
}

impl<'a, 'local> Invocation<'a, 'local> {
    pub(super) fn new(
        env: &mut JNIEnv<'local>,
        object: &'a JObject<'local>,
    ) -> Result<Self, Failure> {
        if object.is_null() {
            return Err(Failure::Internal("null Invocation".into()));
        }
        Ok(Invocation {
            object,
            methods: methods(env, object)?,
        })
    }

    /// Runs the task. `Invocation.run()` catches what the task throws, so an `Err` here means
    /// the JVM itself failed (e.g. StackOverflowError in the trampoline): it stays pending.
    pub(super) fn run(&self, env: &mut JNIEnv<'local>) -> Result<(), Failure> {
        // SAFETY: the method ID was looked up on this object's class with signature ()V.
        unsafe {
            env.call_method_unchecked(
                self.object,
                self.methods.run,
                ReturnType::Primitive(Primitive::Void),
                &[],
            )
        }?;
        Ok(())
    }

    pub(super) fn released(
        &self,
        env: &mut JNIEnv<'local>,
        status: ReleaseStatus,
        elapsed_ms: i64,
        error: Option<&str>,
        lost_while_running: bool,
    ) -> Result<(), Failure> {
        let message = match error {
            Some(text) => env.new_string(text)?.into(),
            None => JObject::null(),
        };
        let args = [
            JValue::Int(status as i32).as_jni(),
            JValue::Long(elapsed_ms).as_jni(),
            JValue::Object(&message).as_jni(),
            JValue::Bool(lost_while_running.into()).as_jni(),
        ];
        // SAFETY: the method ID was looked up with signature (IJLjava/lang/String;Z)V and the
        // arguments match it.
        unsafe {
            env.call_method_unchecked(
                self.object,
                self.methods.released,
                ReturnType::Primitive(Primitive::Void),
                &args,
            )
        }?;
        env.delete_local_ref(message)?;
        Ok(())
    }
}
