//! The watchdog's life, in a process of its own (dibs's binary, exec'd afresh: one thread, so
//! it may allocate, read /proc and spawn as any program does). It leads CMD's process group, is
//! CMD's parent and the subreaper of all CMD starts, so that everything of CMD that outlives its
//! parent becomes its child, whatever group or session it went to. While dibs lives it reports
//! CMD's stops and exit, passes on the signals dibs asks it to, and reaps what CMD left. When
//! dibs dies (end-of-file on the link, without [`FINISH`]) or asks for SIGKILL (`--on-lost`), it
//! kills CMD's cgroup if there is one, then each of its children, again as their own children
//! come to it, until none is left; then it exits. With `--on-lost GRACE`, it also stops CMD as
//! `--on-lost` would if the lock may lapse before dibs says it was extended ([`LAPSE`]): dibs
//! is stopped (SIGSTOP) or starved, and cannot.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

use super::wire::{monotonic_ns, Report, Setup, FINISH, LAPSE};
use crate::cgroup::{self, Cgroup};
use crate::descendants::{become_subreaper, children_of, signal_groups_below};
use crate::output::human;
use crate::signals;

/// Signals the watchdog ignores: those a terminal or a supervisor sends a whole group (CMD's is
/// the watchdog's), which CMD gets back as dibs had them (`signals::RESTORED`), and SIGPIPE (dibs
/// gone, its reports go nowhere).
fn ignored() -> impl Iterator<Item = i32> {
    signals::RESTORED.into_iter().chain([libc::SIGPIPE])
}

/// The watchdog's `main`, with what follows [`super::ARG`] on its command line.
pub fn main(args: Vec<OsString>) -> u8 {
    let Some((setup, program, args)) = Setup::parse(&args) else {
        eprintln!("dibs: {} is for dibs run's own use", super::ARG);
        return crate::EX_USAGE;
    };
    // SAFETY: the descriptors were made for this process by dibs, and are its alone.
    let link = unsafe { UnixStream::from_raw_fd(setup.link) };
    let reports = unsafe { File::from_raw_fd(setup.reports) };
    let mut life = Life {
        // SAFETY: getpid takes nothing.
        me: unsafe { libc::getpid() },
        dibs_group: setup.dibs_group,
        link,
        reports,
        cgroup: None,
        command: None,
        killing: false,
        dibs_left: None,
        said_left: false,
        said_gone: false,
        grace_ms: setup.grace_ms,
        lapse_at: None,
        kill_at: None,
        pending: Vec::new(),
    };
    if let Err(e) = prepare(&setup) {
        life.report(Report::NotStarted(format!(
            "its watchdog could not start: {e}"
        )));
        return crate::EX_SOFTWARE;
    }
    let chld = match sigchld_pipe() {
        Ok(chld) => chld,
        Err(e) => {
            life.report(Report::NotStarted(format!(
                "its watchdog could not start: {e}"
            )));
            return crate::EX_SOFTWARE;
        }
    };
    // SIGKILLed while it started this process: nothing is to run.
    if dibs_is_gone(&life.link) {
        return 0;
    }
    life.cgroup = Cgroup::create(setup.dibs);
    let procs = life.cgroup.as_ref().map(Cgroup::procs);
    let (ignored, terminal, group) = (setup.ignored, setup.terminal, life.me);
    let mut command = Command::new(&program);
    command.args(&args);
    // SAFETY: `child_setup` makes only async-signal-safe calls.
    unsafe {
        command.pre_exec(move || child_setup(ignored, terminal, group, procs));
    }
    match command.spawn() {
        Ok(child) => life.started(child.id() as libc::pid_t),
        Err(e) => {
            life.report(Report::NotStarted(e.to_string()));
            life.remove_cgroup();
            return 0;
        }
    }
    // It holds no terminal or output pipe of dibs's from here on: CMD has its own copies.
    release_stdio();
    life.watch(&chld);
    life.remove_cgroup();
    0
}

struct Life {
    me: libc::pid_t,
    dibs_group: libc::pid_t,
    link: UnixStream,
    reports: File,
    cgroup: Option<Cgroup>,
    /// CMD, until it is reaped.
    command: Option<libc::pid_t>,
    /// Whether everything of CMD is being killed.
    killing: bool,
    /// Once dibs has left (the link is not read any more): whether it asked to finish (else it
    /// died).
    dibs_left: Option<bool>,
    said_left: bool,
    said_gone: bool,
    /// `--on-lost`'s grace, with keep-alive: the lapse of the lock is watched.
    grace_ms: Option<u64>,
    /// When the lock may lapse ([`monotonic_ns`]), by dibs's last word.
    lapse_at: Option<u64>,
    /// Once it lapsed and CMD got SIGTERM: when it is to be SIGKILLed.
    kill_at: Option<u64>,
    /// Bytes of the link not yet taken as a whole request.
    pending: Vec<u8>,
}

impl Life {
    fn started(&mut self, pid: libc::pid_t) {
        self.command = Some(pid);
        self.report(Report::Started(pid));
    }

    /// Until nothing of CMD is left and dibs has left: reaps, reports, and kills when it must.
    /// Every change it waits for comes as a SIGCHLD (a child exited or stopped; an orphan came
    /// to it before the child it came from could be reaped) or on the link.
    fn watch(&mut self, chld: &UnixStream) {
        loop {
            self.reap();
            // /proc is read only when its answer is needed: each of the watchdog's children
            // that exits (an orphan of CMD's) wakes it.
            let children = if self.killing || self.command.is_none() {
                children_of(self.me)
            } else {
                Vec::new()
            };
            if self.killing {
                kill_each(&children);
            }
            if self.command.is_none() {
                if children.is_empty() {
                    if self.dibs_left.is_some() {
                        return;
                    }
                    if !self.said_gone {
                        self.said_gone = true;
                        self.report(Report::Gone);
                    }
                } else if !self.said_left && !self.killing {
                    self.said_left = true;
                    self.report(Report::Left(children));
                }
            }
            let link = self.dibs_left.is_none().then_some(&self.link);
            let next = match (self.lapse_at, self.kill_at) {
                (_, Some(at)) if !self.killing => Some(at),
                (Some(at), None) if !self.killing => Some(at),
                _ => None,
            };
            if wait_for(link, chld, next) {
                self.read_requests();
            }
            drain(chld);
            self.on_time();
        }
    }

    /// Past the lapse dibs said: SIGTERM to every group of CMD's, as `--on-lost` sends it, and
    /// SIGKILL once the grace is over.
    fn on_time(&mut self) {
        let now = monotonic_ns();
        if self.kill_at.is_some_and(|at| at <= now) {
            self.kill_at = None;
            self.kill_all();
        }
        let (Some(at), Some(grace)) = (self.lapse_at, self.grace_ms) else {
            return;
        };
        if at > now {
            return;
        }
        self.lapse_at = None;
        // Nothing left to stop, or all of it being killed already.
        if self.killing || self.command.is_none() && children_of(self.me).is_empty() {
            return;
        }
        self.report(Report::Lapsed);
        let after = human(Duration::from_millis(grace));
        self.report(Report::Warning(format!(
            "the lock may have lapsed while dibs did not run (stopped?) to extend it: what the \
             command started is sent SIGTERM, and SIGKILL in {after} if it still runs"
        )));
        signal_groups_below(self.me, Some(self.me), self.dibs_group, libc::SIGTERM);
        self.kill_at = Some(now + grace * 1_000_000);
        if grace == 0 {
            self.kill_at = None;
            self.kill_all();
        }
    }

    /// Reaps every child that has exited, and reports CMD's stops and exit.
    fn reap(&mut self) {
        loop {
            let mut status = 0;
            // SAFETY: waitpid(2) for any child of ours, into a status of ours.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::WUNTRACED) };
            if pid == -1 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            if pid <= 0 {
                return;
            }
            if Some(pid) != self.command {
                continue;
            }
            if libc::WIFSTOPPED(status) {
                self.report(Report::Stopped(libc::WSTOPSIG(status)));
            } else {
                self.command = None;
                self.report(Report::Exited(status));
            }
        }
    }

    /// Reads what dibs asks: signals to deliver, each answered once sent; end-of-file.
    fn read_requests(&mut self) {
        let mut buf = [0u8; 16];
        let n = match (&self.link).read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return,
            Err(_) => 0,
        };
        if n == 0 {
            self.dibs_left = Some(false);
            self.kill_all();
            return;
        }
        self.pending.extend_from_slice(&buf[..n]);
        while let Some(&byte) = self.pending.first() {
            match byte {
                FINISH => {
                    self.dibs_left = Some(true);
                    return;
                }
                LAPSE => {
                    let Some(at) = self.pending.get(1..9) else {
                        return; // the rest is still on its way
                    };
                    let at = u64::from_le_bytes(at.try_into().expect("8 bytes"));
                    self.pending.drain(..9);
                    // Once the stop for a lapse has begun, it goes on: the lock may be another's.
                    if self.kill_at.is_none() {
                        self.lapse_at = (at != u64::MAX).then_some(at);
                    }
                    continue;
                }
                signal if i32::from(signal) == libc::SIGKILL => self.kill_all(),
                // What the stop for a lapse sent already, dibs's own stop for the loss sends
                // again once dibs runs: once is enough.
                signal if i32::from(signal) == libc::SIGTERM && self.kill_at.is_some() => {}
                signal => {
                    signal_groups_below(self.me, Some(self.me), self.dibs_group, signal.into())
                }
            }
            self.pending.remove(0);
            let _ = (&self.link).write_all(&[byte]);
        }
    }

    /// SIGKILLs CMD's cgroup, and each child now; [`Life::watch`] kills those that come after.
    fn kill_all(&mut self) {
        if !self.killing {
            self.killing = true;
            if let Some(cgroup) = &self.cgroup {
                cgroup.kill();
            }
        }
        let mut children = children_of(self.me);
        // Without /proc, CMD is the only child known.
        children.extend(self.command);
        kill_each(&children);
    }

    fn remove_cgroup(&mut self) {
        if let Some(Err(e)) = self.cgroup.take().map(Cgroup::remove) {
            self.report(Report::Warning(e));
        }
    }

    /// Writes a report; lost once dibs is gone.
    fn report(&mut self, report: Report) {
        let _ = self.reports.write_all(report.line().as_bytes());
    }
}

/// SIGKILLs each of `children`: the watchdog's own, whose pids stay theirs until it reaps them.
fn kill_each(children: &[libc::pid_t]) {
    for &pid in children {
        // SAFETY: kill(2) on a child of ours, not yet reaped.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// The watchdog's own state: its name for `ps`, a subreaper, deaf to group signals, its
/// descriptors not passed on to CMD.
fn prepare(setup: &Setup) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(2) with a NUL-terminated name of under 16 bytes.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, c"dibs-watchdog".as_ptr(), 0, 0, 0);
    }
    become_subreaper()?;
    for signal in ignored() {
        // SAFETY: signal(2) setting a disposition.
        unsafe { libc::signal(signal, libc::SIG_IGN) };
    }
    // dibs's main thread blocks the signals it forwards, and exec keeps the mask.
    signals::set_mask(libc::SIG_SETMASK, &[])?;
    for fd in [setup.link, setup.reports] {
        // SAFETY: fcntl(2) on a descriptor of ours.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A socket that reads a byte for each SIGCHLD, to wait for it with poll.
fn sigchld_pipe() -> io::Result<UnixStream> {
    let (read, write) = UnixStream::pair()?;
    read.set_nonblocking(true)?;
    signal_hook::low_level::pipe::register(libc::SIGCHLD, write)?;
    Ok(read)
}

/// Whether the link already reads end-of-file.
fn dibs_is_gone(link: &UnixStream) -> bool {
    let mut fd = libc::pollfd {
        fd: link.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll(2) on one pollfd of ours, then recv(2) peeking into a byte of ours.
    unsafe {
        if libc::poll(&mut fd, 1, 0) != 1 {
            return false;
        }
        let mut byte = 0u8;
        libc::recv(
            link.as_raw_fd(),
            (&mut byte as *mut u8).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        ) == 0
    }
}

/// Waits until the link (while dibs has not left) or the SIGCHLD pipe can be read, or until
/// `until` ([`monotonic_ns`]); whether the link can be read.
fn wait_for(link: Option<&UnixStream>, chld: &UnixStream, until: Option<u64>) -> bool {
    // poll(2) skips a negative descriptor.
    let mut fds = [link.map_or(-1, |l| l.as_raw_fd()), chld.as_raw_fd()].map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    // Rounded up: a wake-up before the time would only wait again.
    let timeout = until.map_or(-1, |at| {
        let ms = at.saturating_sub(monotonic_ns()).div_ceil(1_000_000);
        ms.min(i32::MAX as u64) as i32
    });
    // SAFETY: poll(2) on two pollfds of ours; EINTR (a SIGCHLD) returns at once.
    if unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) } <= 0 {
        return false;
    }
    fds[0].revents != 0
}

fn drain(chld: &UnixStream) {
    let mut buf = [0u8; 64];
    while matches!((&*chld).read(&mut buf), Ok(n) if n > 0) {}
}

/// Points the watchdog's stdin, stdout and stderr at /dev/null.
fn release_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        for fd in 0..=2 {
            // SAFETY: dup2(2) of a descriptor of ours onto a standard one.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
}

/// Runs in CMD between fork and exec, so async-signal-safe calls only. Puts it in its cgroup
/// (`procs`, if it has one) and in `group` (the watchdog's), the terminal's foreground if dibs
/// had it, and gives it the signal state it would have had without dibs: the dispositions dibs
/// started with (`ignored`), no signal blocked.
fn child_setup(
    ignored: u64,
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
