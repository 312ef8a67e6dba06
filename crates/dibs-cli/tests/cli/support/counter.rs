//! A command that counts the signals it gets, for the `dibs run` tests: [`COUNTER`], run by
//! [`counting`], read back by [`wait_for`].

use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use super::TempDir;

/// A command that counts each delivery of SIGTERM, SIGINT and SIGHUP, and reports them to the
/// file argv[1] after each; once signal argv[2] has come, it dies of it. Each delivery is one
/// byte, written by the C handler to Python's wakeup fd: two deliveries are never one count, as
/// they can be in a shell's trap. The report also says whether the command is in the terminal's
/// foreground, and its process group.
pub const COUNTER: &str = r#"
import os, signal, sys
out, end = sys.argv[1], int(sys.argv[2])
r, w = os.pipe()
os.set_blocking(w, False)
signal.set_wakeup_fd(w)
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, lambda *a: None)
seen = []
def report():
    fg = int(os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp())
    with open(out + ".tmp", "w") as f:
        f.write("%d %d %s\n" % (fg, os.getpgrp(), ",".join(map(str, seen))))
    os.replace(out + ".tmp", out)
report()
while end not in seen:
    seen.extend(os.read(r, 64))
    report()
os.set_blocking(r, False)
try:
    seen.extend(os.read(r, 64))
except BlockingIOError:
    pass
report()
signal.signal(end, signal.SIG_DFL)
os.kill(os.getpid(), end)
"#;

/// What [`COUNTER`] last reported.
#[derive(Debug)]
pub struct Report {
    pub foreground: bool,
    pub group: i32,
    pub seen: Vec<i32>,
}

impl Report {
    pub fn count(&self, signal: i32) -> usize {
        self.seen.iter().filter(|&&s| s == signal).count()
    }
}

/// The `dibs run` command line that runs [`COUNTER`], reporting to `report`, until `end`.
pub fn counting(uri: &str, lock: &str, flags: &[&str], report: &Path, end: i32) -> Command {
    let mut dibs = Command::new(env!("CARGO_BIN_EXE_dibs"));
    dibs.args(["run", "--redis", uri, "--lock", lock])
        .args(flags)
        .args(["--", "python3", "-c", COUNTER])
        .arg(report)
        .arg(end.to_string());
    dibs
}

/// Waits until the report says `what` (the command writes it at each signal); 10 s at most,
/// far beyond the milliseconds each step takes.
pub fn wait_for(report: &Path, what: impl Fn(&Report) -> bool) -> Report {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(line) = std::fs::read_to_string(report) {
            let mut parts = line.split_whitespace();
            let mut next = || parts.next().unwrap_or("");
            let (foreground, group, seen) = (next() == "1", next().parse().unwrap_or(0), next());
            let seen = seen.split(',').filter_map(|s| s.parse().ok()).collect();
            let report = Report {
                foreground,
                group,
                seen,
            };
            if what(&report) {
                return report;
            }
            assert!(Instant::now() < deadline, "still {report:?}");
        }
        assert!(
            Instant::now() < deadline,
            "no report at {}",
            report.display()
        );
        thread::sleep(Duration::from_millis(5));
    }
}

pub fn kill(pid: i32, signal: i32) {
    // SAFETY: kill(2) on a process (or, negative, a process group) this test started.
    assert_eq!(
        unsafe { libc::kill(pid, signal) },
        0,
        "kill({pid}, {signal})"
    );
}

pub fn report_path(dir: &TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}
