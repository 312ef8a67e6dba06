//! The JNI glue behind `dibs.NativeLib`. It only converts values and maps errors; every
//! decision lives in the core. Each entry point runs inside [`guard::entry`], so a Rust panic
//! becomes a Java exception instead of a crashed JVM.
//!
//! The user's task never runs under a native frame: Java calls `acquire`, runs the task in plain
//! Java, then calls `release` (in a finally). So a virtual thread running a task is never pinned
//! to its carrier, and no Java exception ever crosses this layer. Every rule stays in Rust: the
//! token, the timing, the scripts, keep-alive, and how the call ended ([`dibs_core::Ending`]).
//!
//! This library is named `dibs` (the file the jar carries: libdibs.so, libdibs.dylib, dibs.dll), so
//! the core crate, also `dibs`, is known here as `dibs_core`.

mod border;
mod entry;
mod guard;
mod handles;
mod leases;
mod lost;
mod native_loader;
#[cfg(feature = "test-hooks")]
mod test_hooks;
mod tokens;
