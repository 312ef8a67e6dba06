//! The guard of a SIGKILL to dibs, which dibs cannot catch: a tiny process that leads CMD's
//! process group and holds the read end of a pipe whose write end only dibs holds. When dibs
//! dies, however, the pipe reads end-of-file and the watchdog kills all of CMD's cgroup
//! ([`crate::cgroup`]: every process CMD started, whatever its group or session) where there is
//! one, then SIGKILLs CMD's group, itself included: nothing of CMD runs on while its lock
//! expires. Without a cgroup, what left CMD's group (a `set -m` job, a setsid daemon) does. It ignores the signals a group gets
//! (a Ctrl-C, a `kill -- -PGID`), so that it outlives them, and never runs anything: it is forked,
//! not exec'd, and makes only async-signal-safe calls.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

use crate::cgroup::ForWatchdog;

/// Signals the watchdog ignores: those a terminal or a supervisor sends a whole group.
const IGNORED: [i32; 10] = [
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGPIPE,
];

pub struct Watchdog {
    pid: libc::pid_t,
    /// Dropped when dibs exits, however it exits: the watchdog's signal.
    _alive: OwnedFd,
}

impl Watchdog {
    /// Starts the watchdog, leader of a new process group for CMD to join, and the killer of
    /// `cgroup`, CMD's, if it has one.
    pub fn start(cgroup: Option<ForWatchdog>) -> io::Result<Watchdog> {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) into an array of two.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: each descriptor is ours alone from here on.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // Both ends close on exec, so that CMD holds neither; no other thread forks meanwhile.
        for fd in fds {
            // SAFETY: fcntl(2) on a descriptor of ours.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        // SAFETY: the child runs `watch` alone, which makes only async-signal-safe calls and
        // never returns.
        match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()),
            0 => unsafe { watch(fds[0], cgroup) },
            pid => {
                // As the child does: whichever runs first, the group exists once this returns.
                // SAFETY: setpgid(2) on our child, which has not exec'd (it never does).
                unsafe { libc::setpgid(pid, pid) };
                drop(read);
                Ok(Watchdog { pid, _alive: write })
            }
        }
    }

    /// CMD's process group: the watchdog's, which stays in being while the watchdog is not
    /// reaped.
    pub fn group(&self) -> libc::pid_t {
        self.pid
    }

    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Ends the watchdog once nothing of CMD runs; `reaped` when the wait for CMD's leftovers
    /// reaped it already (a SIGKILL to CMD's group ends it too).
    pub fn finish(self, reaped: bool) {
        if !reaped {
            // SAFETY: kill(2) and waitpid(2) on our child, not reaped yet.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
                while libc::waitpid(self.pid, std::ptr::null_mut(), 0) == -1
                    && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
                {
                }
            }
        }
    }
}

/// The watchdog's life: closes every descriptor but the pipe's read end and the cgroup's (it
/// must hold no socket, terminal or output pipe of dibs's), waits for end-of-file, and kills
/// the cgroup and its group.
///
/// # Safety
///
/// Only in a child just forked: it calls only async-signal-safe functions, and exits.
unsafe fn watch(read: libc::c_int, cgroup: Option<ForWatchdog>) -> ! {
    libc::setpgid(0, 0);
    for signal in IGNORED {
        libc::signal(signal, libc::SIG_IGN);
    }
    let mut keep = [read, -1, -1];
    if let Some(cgroup) = cgroup {
        keep[1..].copy_from_slice(&[cgroup.kill, cgroup.events]);
    }
    keep.sort_unstable();
    close_all_but(&keep);
    let mut byte = 0u8;
    loop {
        let n = libc::read(read, (&mut byte as *mut u8).cast(), 1);
        if n == 0 || (n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted) {
            break;
        }
    }
    if let Some(cgroup) = cgroup {
        crate::cgroup::kill_all(cgroup);
    }
    libc::kill(0, libc::SIGKILL);
    libc::_exit(0)
}

/// Closes every descriptor but those of `keep` (sorted; -1 for none): close_range(2) where the
/// kernel has it (5.9), else one by one up to 4096.
unsafe fn close_all_but(keep: &[libc::c_int]) {
    #[cfg(target_os = "linux")]
    {
        let mut from = 0u32;
        let mut closed = true;
        for &fd in keep.iter().filter(|&&fd| fd >= 0) {
            if fd as u32 > from {
                closed &= libc::syscall(libc::SYS_close_range, from, (fd - 1) as u32, 0u32) == 0;
            }
            from = fd as u32 + 1;
        }
        closed &= libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32) == 0;
        if closed {
            return;
        }
    }
    for fd in 0..4096 {
        if !keep.contains(&fd) {
            libc::close(fd);
        }
    }
}
