//! Panic and error containment for JNI entry points.

use std::panic::{self, AssertUnwindSafe};

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
        Failure::Dibs(e) => (exception_class(&e), e.to_string()),
        Failure::State(message) => ("java/lang/IllegalStateException", message),
        Failure::Internal(message) => ("dibs/DibsException", message),
    };
    if env.throw_new(class, &message).is_err() && !env.exception_check().unwrap_or(true) {
        // The exception class itself failed to load; fall back to one that always exists.
        let _ = env.throw_new("java/lang/RuntimeException", &message);
    }
    R::default()
}

fn exception_class(e: &Error) -> &'static str {
    match e {
        Error::InvalidArgument { .. } => "java/lang/IllegalArgumentException",
        Error::Connection(_) => "dibs/DibsConnectionException",
        Error::Timeout(_) => "dibs/DibsTimeoutException",
        Error::Authentication(_) => "dibs/DibsAuthenticationException",
        Error::Permission(_) => "dibs/DibsPermissionException",
        Error::Server(_) => "dibs/DibsException",
    }
}
