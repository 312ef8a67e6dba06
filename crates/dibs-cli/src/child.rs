//! The command `dibs run` runs, as its child: in a process group of its own (the
//! [`Watchdog`]'s), given the terminal when dibs has it, passed the signals dibs receives
//! ([`crate::signals`]), and stopped when its lock is lost. Its run ends when nothing it started
//! runs any more: what it leaves running (a daemon, what bash ran) is dibs's to wait for, as
//! dibs is their subreaper ([`crate::descendants`]).

use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command as Process;

use crate::cgroup::{self, Cgroup};
use crate::descendants;
use crate::signals::{self, Forwarder, LossStop, FORWARDED};
use crate::watchdog::Watchdog;
use crate::{EX_NOT_STARTED, EX_SOFTWARE};

/// How the child ended, as dibs's exit code tells it.
pub struct ChildEnd {
    /// The child's exit code, or 128 + the signal that killed it (or that came before it could
    /// start), or dibs's own code when it could not be run.
    pub code: u8,
    /// Whether the lock was found lost while it ran, and the child was told to stop.
    pub stopped_for_loss: bool,
}

/// Runs the child with our stdin, stdout and stderr, its signals passed on by `forwarder`, and
/// waits for it and all it started to exit; the code is the child's own. The command gets the lock's fencing token as `DIBS_FENCING_TOKEN`.
pub fn run_child(
    forwarder: &Forwarder,
    lock: &str,
    program: &str,
    args: &[String],
    fence: u64,
    on_lost: Option<LossStop>,
) -> ChildEnd {
    let ended = |code| ChildEnd {
        code,
        stopped_for_loss: false,
    };
    let starting = match forwarder.starting() {
        Ok(starting) => starting,
        Err(signal) => {
            eprintln!("dibs: signal {signal} before {program} started; not run");
            return ended((128 + signal).clamp(0, 255) as u8);
        }
    };
    let cgroup = Cgroup::create();
    let watchdog = match Watchdog::start(cgroup.as_ref().map(Cgroup::for_watchdog)) {
        Ok(watchdog) => watchdog,
        Err(e) => {
            eprintln!("dibs: cannot start the watchdog of {program}'s process group: {e}");
            if let Some(cgroup) = cgroup {
                cgroup.remove();
            }
            return ended(EX_SOFTWARE);
        }
    };
    let group = watchdog.group();
    let ignored = forwarder.ignored();
    let terminal = foreground_terminal();
    let procs = cgroup.as_ref().map(Cgroup::procs);
    let mut process = Process::new(program);
    // DIBS_REDIS may hold a password: it is dibs's, not the command's.
    process
        .args(args)
        .env_remove("DIBS_REDIS")
        .env("DIBS_FENCING_TOKEN", fence.to_string());
    // SAFETY: `child_setup` makes only async-signal-safe calls.
    unsafe {
        process.pre_exec(move || child_setup(&ignored, terminal, group, procs));
    }
    // spawn returns once the child has exec'd: its process group exists from here on.
    let child = match process.spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("dibs: cannot run {program}: {e}");
            watchdog.finish(false);
            if let Some(cgroup) = cgroup {
                cgroup.remove();
            }
            return ended(EX_NOT_STARTED);
        }
    };
    let pid = child.id() as libc::pid_t;
    starting.started(group);
    let stopper = on_lost.map(|stop| stop.watch(forwarder, lock, program));
    let waited = wait_for_exit(pid, terminal, group);
    if let Some(fd) = terminal {
        take_terminal(fd);
    }
    if let Err(e) = waited {
        eprintln!("dibs: waiting for {program} failed: {e}");
    }
    let mut child = child;
    let code = match forwarder.reap(pid, || child.wait()) {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => code.clamp(0, 255) as u8,
            (None, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
            _ => EX_SOFTWARE,
        },
        Err(e) => {
            eprintln!("dibs: waiting for {program} failed: {e}");
            EX_SOFTWARE
        }
    };
    let watchdog_reaped = wait_for_the_rest(forwarder, watchdog.pid(), program);
    forwarder.exited();
    let stopped_for_loss = stopper.is_some_and(|watch| watch.finish());
    watchdog.finish(watchdog_reaped);
    if let Some(cgroup) = cgroup {
        cgroup.remove();
    }
    ChildEnd {
        code,
        stopped_for_loss,
    }
}

/// Waits, without reaping, until the child exits. A child stopped by job control (Ctrl-Z, or reading the terminal from the background) stops
/// dibs with the same signal, so that the shell sees the job stopped; continued, dibs gives it
/// the terminal back, if dibs has it, and continues it.
fn wait_for_exit(pid: libc::pid_t, terminal: Option<RawFd>, group: libc::pid_t) -> io::Result<()> {
    loop {
        // SAFETY: waitid(2) on our own child, with a zeroed siginfo to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WSTOPPED | libc::WNOWAIT;
        if unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) } != 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if info.si_code != libc::CLD_STOPPED {
            return Ok(());
        }
        // SAFETY: the stop is consumed (not the exit: WEXITED is not asked for), then a stop
        // signal to dibs itself, which returns once dibs is continued.
        unsafe {
            let mut seen: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut seen,
                libc::WSTOPPED | libc::WNOHANG,
            );
            let stopped_by = info.si_status();
            if matches!(stopped_by, libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU) {
                if let Some(fd) = terminal {
                    take_terminal(fd);
                }
                libc::kill(libc::getpid(), stopped_by);
                if let Some(fd) = terminal {
                    if libc::tcgetpgrp(fd) == libc::getpgrp() {
                        give_terminal(fd, group);
                    }
                }
                libc::kill(-group, libc::SIGCONT);
            }
        }
    }
}

/// The terminal dibs runs in the foreground of (a stdin, stdout or stderr that is one), if any:
/// its command then gets the foreground, as it would have without dibs.
fn foreground_terminal() -> Option<RawFd> {
    // SAFETY: isatty and tcgetpgrp only query the descriptors.
    (0..=2).find(|&fd| unsafe { libc::isatty(fd) == 1 && libc::tcgetpgrp(fd) == libc::getpgrp() })
}

/// Makes dibs's own group the terminal's foreground again. SIGTTOU is blocked meanwhile: from a
/// background group, tcsetpgrp would otherwise stop dibs with it.
fn take_terminal(fd: RawFd) {
    // SAFETY: getpgrp takes nothing.
    give_terminal(fd, unsafe { libc::getpgrp() });
}

fn give_terminal(fd: RawFd, group: libc::pid_t) {
    let _ = signals::set_mask(libc::SIG_BLOCK, &[libc::SIGTTOU]);
    // SAFETY: tcsetpgrp(3) on a terminal descriptor of ours.
    unsafe { libc::tcsetpgrp(fd, group) };
    let _ = signals::set_mask(libc::SIG_UNBLOCK, &[libc::SIGTTOU]);
}

/// Once the child has exited: waits until every other child of dibs but the watchdog has exited
/// too (what the command left running, reparented to dibs), and reaps them, each under
/// `forwarder`'s lock. Whether the watchdog was reaped meanwhile (a SIGKILL to CMD's group ends
/// it too).
fn wait_for_the_rest(forwarder: &Forwarder, watchdog: libc::pid_t, program: &str) -> bool {
    let mut said = false;
    let mut watchdog_reaped = false;
    loop {
        let left = descendants::children(watchdog);
        if left.is_empty() {
            return watchdog_reaped;
        }
        if !said {
            let pids: Vec<String> = left.iter().map(|p| p.to_string()).collect();
            eprintln!(
                "dibs: {program} exited, and left running pid {}: the lock is kept until they exit",
                pids.join(", ")
            );
            said = true;
        }
        // SAFETY: waitid(2) for any child of ours, which it leaves unreaped (WNOWAIT), then
        // waitpid(2) on that one; the loop asks again which are left.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOWAIT;
        if unsafe { libc::waitid(libc::P_ALL, 0, &mut info, flags) } != 0 {
            match io::Error::last_os_error().kind() {
                io::ErrorKind::Interrupted => continue,
                _ => return true, // ECHILD: none left, not even the watchdog
            }
        }
        // SAFETY: si_pid of a siginfo that waitid filled for an exited child.
        let pid = unsafe { info.si_pid() };
        forwarder.reap(pid, || unsafe {
            libc::waitpid(pid, std::ptr::null_mut(), 0)
        });
        watchdog_reaped |= pid == watchdog;
    }
}

/// Runs in the child between fork and exec, so async-signal-safe calls only. Puts the command
/// in its cgroup (`procs`, if it has one) and in `group` (the watchdog's, a group of its own),
/// the terminal's foreground if dibs had it, and gives it the signal state it would have had
/// without dibs.
fn child_setup(
    ignored: &[bool; FORWARDED.len()],
    terminal: Option<RawFd>,
    group: libc::pid_t,
    procs: Option<RawFd>,
) -> io::Result<()> {
    if let Some(procs) = procs {
        cgroup::join(procs);
    }
    // SAFETY: setpgid, tcsetpgrp and sigprocmask, with a set filled by sigemptyset.
    unsafe {
        if libc::setpgid(0, group) != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(fd) = terminal {
            // From the new (background) group: SIGTTOU is blocked until the mask is cleared.
            let mut ttou: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut ttou);
            libc::sigaddset(&mut ttou, libc::SIGTTOU);
            libc::sigprocmask(libc::SIG_BLOCK, &ttou, std::ptr::null_mut());
            libc::tcsetpgrp(fd, group);
        }
    }
    signals::restore_in_child(ignored)
}
