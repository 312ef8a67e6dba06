//! Panic and error containment for JNI entry points.

use std::panic::{self, AssertUnwindSafe};

use jni::objects::{JObject, JThrowable, JValue};
use jni::JNIEnv;

use dibs_core::Error;

/// Why an entry point did not return normally.
pub(super) enum Failure {
    /// A dibs error, to be thrown as the matching Java exception.
    Dibs(Error),
    /// A Java exception is already pending; leave it to propagate, make no further JNI call.
    Pending,
    /// A call out of order, e.g. a lease released twice: `IllegalStateException`.
    State(String),
    /// A broken JNI contract between the Java and Rust halves of dibs.
    Internal(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Dibs(e)
    }
}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Self {
        match e {
            jni::errors::Error::JavaException => Failure::Pending,
            other => Failure::Internal(format!("JNI call failed: {other}")),
        }
    }
}

/// Runs an entry point's body. On error or panic it throws a Java exception and returns
/// `R::default()`, which the JVM discards because an exception is pending.
pub(super) fn entry<'local, R: Default>(
    env: &mut JNIEnv<'local>,
    body: impl FnOnce(&mut JNIEnv<'local>) -> Result<R, Failure>,
) -> R {
    let failure = match panic::catch_unwind(AssertUnwindSafe(|| body(env))) {
        Ok(Ok(value)) => return value,
        Ok(Err(failure)) => failure,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            // A panic may strike with an exception pending; the panic is the news.
            if env.exception_check().unwrap_or(true) {
                let _ = env.exception_clear();
            }
            Failure::Internal(format!("panic in dibs native code: {what}"))
        }
    };
    let (class, message) = match failure {
        Failure::Pending => return R::default(),
        Failure::Dibs(Error::InvalidArgument { arg, message }) => {
            throw_argument(env, arg, &dibs_core::shown(&message));
            return R::default();
        }
        Failure::Dibs(e) => (exception_class(&e), e.to_string()),
        Failure::State(message) => ("java/lang/IllegalStateException", message),
        Failure::Internal(message) => ("dibs/DibsException", message),
    };
    // A message may carry what a server said, or what Redis holds: a log line or a terminal
    // gets it escaped (`dibs_core::shown`, the one rule), never raw.
    let message = dibs_core::shown(&message);
    if env.throw_new(class, &message).is_err() && !env.exception_check().unwrap_or(true) {
        // The exception class itself failed to load; fall back to one that always exists.
        let _ = env.throw_new("java/lang/RuntimeException", &message);
    }
    R::default()
}

/// Throws `dibs.DibsArgumentException(argument, message)`: the argument travels as a field, so
/// that Java callers (the Spring starter) can name their own setting without reading the message.
fn throw_argument(env: &mut JNIEnv, arg: &str, message: &str) {
    let thrown = (|| -> jni::errors::Result<()> {
        let arg = JObject::from(env.new_string(arg)?);
        let text = JObject::from(env.new_string(message)?);
        let exception = env.new_object(
            "dibs/DibsArgumentException",
            "(Ljava/lang/String;Ljava/lang/String;)V",
            &[JValue::Object(&arg), JValue::Object(&text)],
        )?;
        env.throw(JThrowable::from(exception))
    })();
    if thrown.is_err() {
        // The class did not load, or the JVM is out of memory: an exception is pending then;
        // if not, the plain class still says what was wrong.
        if !env.exception_check().unwrap_or(true) {
            let _ = env.throw_new("java/lang/IllegalArgumentException", message);
        }
    }
}

fn exception_class(e: &Error) -> &'static str {
    match e {
        Error::InvalidArgument { .. } => "dibs/DibsArgumentException",
        Error::Connection(_) => "dibs/DibsConnectionException",
        Error::Timeout(_) => "dibs/DibsTimeoutException",
        Error::Authentication(_) => "dibs/DibsAuthenticationException",
        Error::Permission(_) => "dibs/DibsPermissionException",
        Error::Server(_) | Error::ClockAhead(_) => "dibs/DibsException",
    }
}
