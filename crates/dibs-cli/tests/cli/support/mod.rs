//! What the command-line tests share: running the `dibs` binary built for them.
#![allow(dead_code)] // each test binary uses its own part of it

pub mod counter;
pub mod descendants;

use std::process::{Command, Output};

pub fn dibs(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args(args)
        .output()
        .expect("run dibs")
}

/// `dibs run --redis URI --lock LOCK --at-most AT_MOST` then `rest` (more flags, `--`, the command).
pub fn run(uri: &str, lock: &str, at_most: &str, rest: &[&str]) -> Output {
    let mut args = vec!["run", "--redis", uri, "--lock", lock, "--at-most", at_most];
    args.extend_from_slice(rest);
    dibs(&args)
}

/// `dibs ARGS --redis URI`.
pub fn ops(uri: &str, args: &[&str]) -> Output {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--redis", uri]);
    dibs(&all)
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A directory of the test's own under the temp directory, removed when dropped.
pub struct TempDir(std::path::PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A process the test started, killed and reaped when dropped unless the test waited for it: a
/// failed assertion must not leave a `dibs run` running, holding the test's output open (cargo
/// would wait for it) and its lock taken.
pub struct Running(Option<std::process::Child>);

impl Running {
    pub fn new(child: std::process::Child) -> Running {
        Running(Some(child))
    }

    pub fn id(&self) -> u32 {
        self.child().id()
    }

    pub fn child(&self) -> &std::process::Child {
        self.0.as_ref().expect("not yet waited for")
    }

    pub fn child_mut(&mut self) -> &mut std::process::Child {
        self.0.as_mut().expect("not yet waited for")
    }

    /// Waits for the exit; the exit code, or a panic when it died of a signal.
    pub fn exit_code(mut self) -> i32 {
        let status = self.0.take().unwrap().wait().unwrap();
        status
            .code()
            .unwrap_or_else(|| panic!("it died of a signal: {status}"))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A process the test did not start itself (a grandchild), killed if the test fails: a failed
/// assertion panics while it may still run. Only then, as its pid is not the test's to reap.
pub struct KilledOnPanic(pub i32);

impl Drop for KilledOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // SAFETY: kill(2) on a process this test's child started, which still runs.
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }
}
