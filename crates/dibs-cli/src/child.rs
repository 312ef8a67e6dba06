//! The command `dibs run` runs, as its watchdog's child ([`Watchdog`]): in a process group of
//! its own (the watchdog's), given the terminal when dibs has it, passed the signals dibs
//! receives ([`crate::signals`]), and stopped when its lock is lost. Its run ends when nothing it
//! started runs any more: what it leaves running (a daemon, what bash ran) is the watchdog's to
//! wait for, as the watchdog is their subreaper; dibs's, should the watchdog die
//! ([`crate::descendants`]).

use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::thread;

use crate::signals::{self, Forwarder, LossStop, SafeFor};
use crate::watchdog::{Report, Start, Watchdog};
use crate::{cgroup, descendants};
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
/// waits for it and all it started to exit; the code is the child's own. The command gets the
/// lock's fencing token as `DIBS_FENCING_TOKEN`. `safe_for` tells how long the lock may still be
/// relied on, for `on_lost`.
pub fn run_child(
    forwarder: &Forwarder,
    lock: &str,
    program: &str,
    args: &[String],
    fence: u64,
    on_lost: Option<LossStop>,
    safe_for: SafeFor,
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
    let terminal = foreground_terminal();
    let grace = on_lost.as_ref().map(LossStop::grace);
    let started = Watchdog::start(program, args, fence, forwarder.ignored(), terminal, grace);
    let mut watchdog = match started {
        Ok(watchdog) => watchdog,
        Err(e) => {
            eprintln!("dibs: cannot start the watchdog of {program}: {e}");
            return ended(EX_SOFTWARE);
        }
    };
    let pid = match watchdog.started() {
        Start::Ran(pid) => pid,
        Start::NotRun(why) => {
            eprintln!("dibs: cannot run {program}: {why}");
            watchdog.finish();
            return ended(EX_NOT_STARTED);
        }
        Start::Died => {
            eprintln!("dibs: the watchdog of {program} ended before it ran {program}");
            watchdog.finish();
            return ended(EX_SOFTWARE);
        }
    };
    starting.started(watchdog.group(), watchdog.link());
    thread::scope(|scope| {
        let stopper = on_lost.map(|stop| stop.watch(scope, forwarder, lock, program, safe_for));
        let code = wait_for_all(forwarder, &mut watchdog, pid, terminal, program);
        forwarder.exited();
        let stopped_for_loss = stopper.is_some_and(|watch| watch.finish());
        ChildEnd {
            code,
            stopped_for_loss: watchdog.finish() || stopped_for_loss,
        }
    })
}

/// Waits for the child and all it started to exit; the child's exit code.
fn wait_for_all(
    forwarder: &Forwarder,
    watchdog: &mut Watchdog,
    pid: libc::pid_t,
    terminal: Option<RawFd>,
    program: &str,
) -> u8 {
    let status = wait_for_exit(forwarder, watchdog, pid, terminal);
    if let Some(fd) = terminal {
        take_terminal(fd);
    }
    let code = match status {
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
    wait_for_the_rest(forwarder, watchdog, program);
    code
}

/// Waits until the child (`pid`) exits; its status. A child stopped by job control (Ctrl-Z, or
/// reading the terminal from the background) stops dibs with the same signal, so that the shell
/// sees the job stopped; continued, dibs gives it the terminal back, if dibs has it, and
/// continues it. The watchdog tells; once it has died (a SIGKILL to CMD's group), the child is
/// dibs's own, reaped under `forwarder`'s lock.
fn wait_for_exit(
    forwarder: &Forwarder,
    watchdog: &mut Watchdog,
    pid: libc::pid_t,
    terminal: Option<RawFd>,
) -> io::Result<ExitStatus> {
    let group = watchdog.group();
    while let Some(report) = watchdog.next() {
        match report {
            Report::Stopped(signal) => stopped(signal, terminal, group),
            Report::Exited(status) => return Ok(ExitStatus::from_raw(status)),
            _ => {}
        }
    }
    watchdog.reap(forwarder);
    wait_for_own_child(pid, terminal, group)?;
    let mut status = 0;
    // SAFETY: waitpid(2) on our own child, which has exited.
    let reaped = forwarder.reap(pid, || unsafe { libc::waitpid(pid, &mut status, 0) });
    if reaped != pid {
        return Err(io::Error::last_os_error());
    }
    Ok(ExitStatus::from_raw(status))
}

/// The job control of a child stopped by `signal`: a stop from the terminal (SIGTSTP, SIGTTIN,
/// SIGTTOU) stops dibs too, and once dibs is continued, so is the child's group.
fn stopped(signal: i32, terminal: Option<RawFd>, group: libc::pid_t) {
    if !matches!(signal, libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU) {
        return;
    }
    if let Some(fd) = terminal {
        take_terminal(fd);
    }
    // SAFETY: a stop signal to dibs itself, which returns once dibs is continued; tcgetpgrp on
    // a terminal descriptor of ours; SIGCONT to CMD's group, pinned by the watchdog (or, after
    // it, by the stopped child).
    unsafe {
        libc::kill(libc::getpid(), signal);
        if let Some(fd) = terminal {
            if libc::tcgetpgrp(fd) == libc::getpgrp() {
                give_terminal(fd, group);
            }
        }
        libc::kill(-group, libc::SIGCONT);
    }
}

/// Waits, without reaping, until the child, dibs's own since its watchdog died, exits.
fn wait_for_own_child(
    pid: libc::pid_t,
    terminal: Option<RawFd>,
    group: libc::pid_t,
) -> io::Result<()> {
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
        // SAFETY: the stop is consumed (not the exit: WEXITED is not asked for).
        unsafe {
            let mut seen: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut seen,
                libc::WSTOPPED | libc::WNOHANG,
            );
            stopped(info.si_status(), terminal, group);
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

/// Once the child has exited: waits until nothing it started runs. The watchdog, their
/// subreaper, tells; once it has died, they are dibs's children, and dibs waits for each and
/// reaps it under `forwarder`'s lock.
fn wait_for_the_rest(forwarder: &Forwarder, watchdog: &mut Watchdog, program: &str) {
    let mut said = false;
    let mut say = |left: &[libc::pid_t]| {
        if !said && !left.is_empty() {
            let pids: Vec<String> = left.iter().map(|p| p.to_string()).collect();
            eprintln!(
                "dibs: {program} exited, and left running pid {}: the lock is kept until they exit",
                pids.join(", ")
            );
            said = true;
        }
    };
    while let Some(report) = watchdog.next() {
        match report {
            Report::Left(pids) => say(&pids),
            Report::Gone => return,
            _ => {}
        }
    }
    watchdog.reap(forwarder);
    loop {
        let left = descendants::children();
        if left.is_empty() {
            break;
        }
        say(&left);
        // SAFETY: waitid(2) for any child of ours, which it leaves unreaped (WNOWAIT), then
        // waitpid(2) on that one; the loop asks again which are left.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOWAIT;
        if unsafe { libc::waitid(libc::P_ALL, 0, &mut info, flags) } != 0 {
            match io::Error::last_os_error().kind() {
                io::ErrorKind::Interrupted => continue,
                _ => break, // ECHILD: none left
            }
        }
        // SAFETY: si_pid of a siginfo that waitid filled for an exited child.
        let pid = unsafe { info.si_pid() };
        forwarder.reap(pid, || unsafe {
            libc::waitpid(pid, std::ptr::null_mut(), 0)
        });
    }
    // SAFETY: getpid takes nothing.
    cgroup::remove_left(unsafe { libc::getpid() });
}
