//! The JNI glue behind `dibs.NativeLib`. It only converts values and maps errors; every
//! decision lives in the core. Each entry point runs inside [`guard::entry`], so a Rust panic
//! becomes a Java exception instead of a crashed JVM.
//!
//! Control flow lives in Rust: `execute` calls back into `dibs.Invocation.run()`, which catches
//! everything the user's task throws and keeps it, so no Java exception ever crosses this layer
//! and the lifecycle exists once, in [`crate::Locker::execute`]. The cost is one JNI up-call per
//! locked run (tens of nanoseconds) against two network round trips.

mod entry;
mod guard;
mod handles;
mod invocation;
mod native_loader;
#[cfg(feature = "test-hooks")]
mod test_hooks;
mod tokens;
