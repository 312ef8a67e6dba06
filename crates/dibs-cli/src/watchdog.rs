//! The guard of a SIGKILL to dibs, which dibs cannot catch: the watchdog, a process of its own
//! that runs CMD as its child, leads CMD's process group (and ignores what a group is sent, so
//! that it outlives a Ctrl-C or a `kill -- -PGID`), and is the subreaper of everything CMD
//! starts. dibs's death does not kill it: it is in a group of its own, not dibs's. It holds a
//! socket whose other end only dibs holds; when dibs dies, however, the socket reads
//! end-of-file, and the watchdog kills CMD's cgroup, where there is one, and every process of
//! CMD's, one by one as each comes to it, setsid daemons and `set -m` jobs included, before the
//! lock expires ([`life`]).
//!
//! It is dibs's own binary, exec'd afresh ([`wire::ARG`]), rather than a fork of dibs: a fork of
//! a process with threads may only make async-signal-safe calls, and the watchdog reads /proc,
//! spawns CMD and reaps as an ordinary single-threaded program.

mod life;
mod wire;

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, PipeReader, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Command;

pub use life::main;
pub use wire::{monotonic_ns, Report, ARG};
use wire::{Setup, FINISH, LAPSE};

use crate::signals::Forwarder;

pub struct Watchdog {
    pid: libc::pid_t,
    /// dibs's end of the link: closed when dibs exits, however it exits.
    link: UnixStream,
    reports: BufReader<PipeReader>,
    reaped: bool,
    /// Whether it said the lock lapsed, and stopped CMD for it.
    lapsed: bool,
}

/// How the start of CMD went.
pub enum Start {
    Ran(libc::pid_t),
    /// CMD could not be run, and why.
    NotRun(String),
    /// The watchdog ended before it said.
    Died,
}

/// The way to the watchdog for the signals dibs passes on.
pub struct Link(UnixStream);

impl Link {
    /// Has the watchdog send `signal` to every group of CMD's once; false when it is gone.
    pub fn signal(&self, signal: i32) -> bool {
        let mut answer = [0u8];
        (&self.0).write_all(&[signal as u8]).is_ok() && matches!((&self.0).read(&mut answer), Ok(1))
    }

    /// Tells the watchdog when the lock may lapse ([`wire::LAPSE`]).
    pub fn lapse_at(&self, at: u64) {
        let mut message = [LAPSE; 9];
        message[1..].copy_from_slice(&at.to_le_bytes());
        let _ = (&self.0).write_all(&message);
    }
}

impl Watchdog {
    /// Starts the watchdog, which starts CMD (`program` with `args`, the fencing token `fence`,
    /// the signals `ignored` when dibs started, the foreground of `terminal`); with `grace`
    /// (`--on-lost`'s, with keep-alive), it stops CMD if the lock may lapse before dibs says
    /// otherwise ([`Link::lapse_at`]).
    pub fn start(
        program: &str,
        args: &[String],
        fence: u64,
        ignored: u64,
        terminal: Option<RawFd>,
        grace: Option<std::time::Duration>,
    ) -> io::Result<Watchdog> {
        let (link, theirs) = UnixStream::pair()?;
        let (reports, their_reports) = io::pipe()?;
        // SAFETY: getpid and getpgrp take nothing.
        let (dibs, dibs_group) = unsafe { (libc::getpid(), libc::getpgrp()) };
        let setup = Setup {
            link: theirs.as_raw_fd(),
            reports: their_reports.as_raw_fd(),
            dibs,
            dibs_group,
            terminal,
            ignored,
            grace_ms: grace.map(|g| g.as_millis() as u64),
        };
        let mut watchdog = Command::new(own_binary()?);
        watchdog
            .arg0(std::env::args_os().next().unwrap_or_else(|| "dibs".into()))
            .arg(ARG)
            .args(setup.to_args())
            .arg("--")
            .arg(program)
            .args(args)
            // DIBS_REDIS may hold a password: it is dibs's, not the command's.
            .env_remove("DIBS_REDIS")
            .env("DIBS_FENCING_TOKEN", fence.to_string())
            .process_group(0);
        let fds = [setup.link, setup.reports];
        // SAFETY: fcntl(2) alone, async-signal-safe: the two descriptors stay open in the
        // watchdog (it closes them on exec again before it starts CMD).
        unsafe {
            watchdog.pre_exec(move || {
                for fd in fds {
                    if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let pid = watchdog.spawn()?.id() as libc::pid_t;
        Ok(Watchdog {
            pid,
            link,
            reports: BufReader::new(reports),
            reaped: false,
            lapsed: false,
        })
    }

    /// Waits until CMD runs, or could not be run.
    pub fn started(&mut self) -> Start {
        loop {
            match self.next() {
                Some(Report::Started(pid)) => return Start::Ran(pid),
                Some(Report::NotStarted(why)) => return Start::NotRun(why),
                Some(_) => {}
                None => return Start::Died,
            }
        }
    }

    /// CMD's process group: the watchdog's, which stays in being while the watchdog is not
    /// reaped.
    pub fn group(&self) -> libc::pid_t {
        self.pid
    }

    pub fn link(&self) -> Option<Link> {
        self.link.try_clone().ok().map(Link)
    }

    /// The watchdog's next report; None once it has ended (it was SIGKILLed, with CMD's group).
    /// A warning is said here.
    pub fn next(&mut self) -> Option<Report> {
        loop {
            let mut line = String::new();
            match self.reports.read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => match Report::parse(&line) {
                    Some(Report::Warning(what)) => eprintln!("dibs: warning: {what}"),
                    Some(Report::Lapsed) => self.lapsed = true,
                    Some(report) => return Some(report),
                    None => {}
                },
            }
        }
    }

    /// Reaps the watchdog, which has ended, under `forwarder`'s lock: no signal goes to its
    /// group id after that. What it left (CMD, its leftovers) is dibs's child from then on.
    pub fn reap(&mut self, forwarder: &Forwarder) {
        if !self.reaped {
            forwarder.reap(self.pid, || wait(self.pid));
            self.reaped = true;
        }
    }

    /// Tells the watchdog that dibs ends normally (nothing of CMD runs), says what it still has
    /// to say, and waits for its end. Whether it stopped CMD for a lapse of the lock.
    pub fn finish(mut self) -> bool {
        if !self.reaped {
            let _ = (&self.link).write_all(&[FINISH]);
            let _ = self.link.shutdown(Shutdown::Both);
            while self.next().is_some() {}
            wait(self.pid);
        }
        self.lapsed
    }
}

/// dibs's binary, as it runs now: /proc/self/exe, which an upgrade that replaces the file does
/// not change, where there is one.
fn own_binary() -> io::Result<OsString> {
    let proc = std::path::Path::new("/proc/self/exe");
    if proc.exists() {
        return Ok(proc.into());
    }
    Ok(std::env::current_exe()?.into())
}

/// Reaps `pid`, a child of ours.
fn wait(pid: libc::pid_t) {
    // SAFETY: waitpid(2) on our child.
    while unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) } == -1
        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
    {}
}
