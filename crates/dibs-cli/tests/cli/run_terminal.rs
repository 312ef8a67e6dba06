//! `dibs run` at a terminal, against a real redis-server: Ctrl-C and Ctrl-Z reach the command,
//! which has the terminal's foreground in a process group of its own, and job control goes on
//! working.

use crate::common;
use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::RedisServer;
use support::counter::{counting, kill, report_path, wait_for};
use support::{KilledOnPanic, Running, TempDir};

/// A terminal of the test's own: dibs runs as the leader of a new session whose controlling
/// terminal it is, in the foreground, as in an interactive shell.
struct Terminal {
    master: std::fs::File,
}

impl Terminal {
    /// Starts `dibs` on a new pseudo-terminal.
    fn spawn(dibs: &mut Command) -> (Terminal, Running) {
        use std::os::fd::{FromRawFd, OwnedFd};
        use std::os::unix::process::CommandExt;
        // SAFETY: posix_openpt/grantpt/unlockpt/ptsname_r on the descriptor just opened; the
        // slave is opened by path, and both are owned from here on.
        let (master, slave) = unsafe {
            let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(master >= 0, "posix_openpt");
            assert_eq!(libc::grantpt(master), 0);
            assert_eq!(libc::unlockpt(master), 0);
            let mut name = [0 as libc::c_char; 128];
            assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
            let slave = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
            assert!(slave >= 0, "open the slave");
            (
                std::fs::File::from_raw_fd(master),
                OwnedFd::from_raw_fd(slave),
            )
        };
        dibs.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: setsid(2) and ioctl(2), async-signal-safe, between fork and exec.
        unsafe {
            dibs.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = dibs.spawn().unwrap();
        (Terminal { master }, Running::new(child))
    }

    /// Types `byte`, as a key would: ^C is 3, ^Z 26.
    fn type_key(&mut self, byte: u8) {
        std::io::Write::write_all(&mut self.master, &[byte]).unwrap();
    }
}

/// Issue 30 (3): Ctrl-C at a terminal reaches the command once. The command runs in the
/// terminal's foreground, in its own group, so the terminal signals it alone. Before, dibs and
/// the command shared the foreground group: the command got the INT from the terminal, and
/// again from dibs.
#[test]
fn ctrl_c_at_a_terminal_reaches_the_command_once() {
    let server = RedisServer::start();
    let dir = TempDir::new("dibs-tty");
    let report = report_path(&dir, "ctrl-c");
    let (mut terminal, dibs) = Terminal::spawn(&mut counting(
        &server.uri(),
        "tty",
        &["--at-most", "1m"],
        &report,
        libc::SIGHUP,
    ));
    let pid = dibs.id() as i32;
    let ready = wait_for(&report, |_| true);
    assert!(
        ready.foreground,
        "the command has the terminal's foreground"
    );
    terminal.type_key(3);
    wait_for(&report, |r| r.count(libc::SIGINT) > 0);
    kill(pid, libc::SIGHUP);
    assert_eq!(dibs.exit_code(), 128 + libc::SIGHUP);
    let seen = wait_for(&report, |r| r.count(libc::SIGHUP) > 0);
    assert_eq!(seen.count(libc::SIGINT), 1, "one Ctrl-C: {seen:?}");
    assert!(!server.exists("dibs:tty"), "released");
}

/// A shell's job control, in short: it runs its argv[2..] as a job (a process group of its own,
/// the terminal's foreground) and reports to the file argv[1] the job's pid, then each event:
/// `stopped:SIG` when the job stops, which it answers with `fg` (the terminal back to the job,
/// SIGCONT to its group), and `exit:CODE` at its end. dibs needs a shell around it to be
/// stopped: a process group with no parent in its session outside it (dibs as a session's
/// leader) is orphaned, and the kernel discards stop signals to it.
const SHELL: &str = r#"
import os, signal, sys
out, argv = sys.argv[1], sys.argv[2:]
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
events = []
def note(event):
    events.append(event)
    with open(out + ".tmp", "w") as f:
        f.write(" ".join(events) + "\n")
    os.replace(out + ".tmp", out)
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    os.tcsetpgrp(0, os.getpid())
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)
    os.execvp(argv[0], argv)
try:
    os.setpgid(pid, pid)
except PermissionError:
    pass  # the job has exec'd, its group already made
os.tcsetpgrp(0, pid)
note("pid:%d" % pid)
while True:
    _, status = os.waitpid(pid, os.WUNTRACED)
    if os.WIFSTOPPED(status):
        note("stopped:%d" % os.WSTOPSIG(status))
        os.tcsetpgrp(0, pid)
        os.killpg(pid, signal.SIGCONT)
        continue
    note("exit:%d" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)))
    break
"#;

/// Waits until [`SHELL`]'s report, its events, has one for which `what` holds; 10 s at most.
fn wait_for_shell(report: &Path, what: impl Fn(&str) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let line = std::fs::read_to_string(report).unwrap_or_default();
        let events: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        if events.iter().any(|e| what(e)) {
            return events;
        }
        assert!(Instant::now() < deadline, "the shell reported {events:?}");
        thread::sleep(Duration::from_millis(5));
    }
}

/// Job control goes on working with the command in its own group. dibs runs as a shell's job;
/// Ctrl-Z stops the command (the terminal's foreground), and dibs then stops itself, so the
/// shell sees its job stopped. The shell's `fg` continues dibs, which gives the command the
/// terminal again and continues it: the command then gets a HUP sent to dibs.
#[test]
fn ctrl_z_stops_the_command_and_dibs_and_fg_continues_both() {
    let server = RedisServer::start();
    let dir = TempDir::new("dibs-tstp");
    let report = report_path(&dir, "ctrl-z");
    let shell_report = report_path(&dir, "shell");
    let dibs = counting(
        &server.uri(),
        "tstp",
        &["--at-most", "1m"],
        &report,
        libc::SIGHUP,
    );
    let mut shell = Command::new("python3");
    shell
        .args(["-c", SHELL])
        .arg(&shell_report)
        .arg(dibs.get_program())
        .args(dibs.get_args());
    let (mut terminal, shell) = Terminal::spawn(&mut shell);
    let events = wait_for_shell(&shell_report, |e| e.starts_with("pid:"));
    let pid: i32 = events[0]["pid:".len()..].parse().unwrap();
    let _dibs = KilledOnPanic(pid);
    let ready = wait_for(&report, |_| true);
    assert!(
        ready.foreground,
        "the command has the terminal's foreground"
    );
    terminal.type_key(26);
    let events = wait_for_shell(&shell_report, |e| e.starts_with("stopped:"));
    assert_eq!(
        events[1],
        format!("stopped:{}", libc::SIGTSTP),
        "{events:?}"
    );
    kill(pid, libc::SIGHUP); // reaches the command only once it runs again, after the fg
    let events = wait_for_shell(&shell_report, |e| e.starts_with("exit:"));
    assert_eq!(
        events.last().unwrap(),
        &format!("exit:{}", 128 + libc::SIGHUP),
        "{events:?}"
    );
    let seen = wait_for(&report, |r| r.count(libc::SIGHUP) > 0);
    assert!(
        seen.foreground,
        "the command had the terminal again: {seen:?}"
    );
    drop(shell);
    assert!(!server.exists("dibs:tstp"), "released");
}
