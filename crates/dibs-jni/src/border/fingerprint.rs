// Generated with Border.java and NativeLib.java (see `border::java`): do not edit.
/// The fingerprint of the JNI border this library is built with.
pub(crate) const FINGERPRINT: &str = "0b8ceeef05011973";
