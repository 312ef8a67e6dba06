//! The command `dibs run` runs, as its child: in a process group of its own, given the terminal
//! when dibs has it, passed the signals dibs receives, and stopped when its lock is lost.
//!
//! One signal reaches the command once. A signal to dibs's process group (a `kill -- -PGID`, a
//! supervisor stopping the group) reaches dibs alone, which passes it on; Ctrl-C at a terminal
//! goes to the foreground group, which is the command's while it runs, and dibs never sees it.

use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command as Process;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::{EX_NOT_STARTED, EX_SOFTWARE};

const FORWARDED: [i32; 3] = [SIGTERM, SIGINT, SIGHUP];

/// Passes SIGTERM, SIGINT and SIGHUP on to the child. A signal that comes before the child
/// exists is kept and delivered once it does; none is sent once the child has been reaped,
/// when its pid may belong to another process.
pub struct Forwarder {
    target: Arc<Mutex<Target>>,
    /// Kept for the child: what nohup ignores, the command ignores too.
    ignored: [bool; FORWARDED.len()],
    handle: signal_hook::iterator::Handle,
    thread: thread::JoinHandle<()>,
}

enum Target {
    /// No child yet; the first signal that came meanwhile.
    Waiting(Option<i32>),
    Child(libc::pid_t),
    Done,
}

/// How the child ended, as dibs's exit code tells it.
pub struct ChildEnd {
    /// The child's exit code, or 128 + the signal that killed it (or that came before it could
    /// start), or dibs's own code when it could not be run.
    pub code: u8,
    /// Whether the lock was found lost while it ran, and the child was told to stop.
    pub stopped_for_loss: bool,
}

/// Stops the child when its lock is lost: SIGTERM to its process group, then SIGKILL `grace`
/// later if it still runs.
pub struct LossStop {
    grace: Duration,
    events: mpsc::Receiver<Event>,
    sender: mpsc::Sender<Event>,
}

enum Event {
    Lost,
    Exited,
}

impl LossStop {
    pub fn new(grace: Duration) -> LossStop {
        let (sender, events) = mpsc::channel();
        LossStop {
            grace,
            events,
            sender,
        }
    }

    /// What keep-alive calls, on its thread, when the lock is found lost.
    pub fn teller(&self) -> impl FnOnce() + Send + 'static {
        let sender = self.sender.clone();
        move || {
            let _ = sender.send(Event::Lost);
        }
    }
}

impl Forwarder {
    pub fn start() -> io::Result<Forwarder> {
        let ignored = inherited_ignored()?;
        let mut signals = Signals::new(FORWARDED)?;
        let handle = signals.handle();
        let target = Arc::new(Mutex::new(Target::Waiting(None)));
        let shared = target.clone();
        // The signals are blocked on every thread but the forwarder's: a handler running on the
        // main thread would interrupt its Redis reads (EINTR) mid-acquire or mid-release. The
        // child inherits this mask (std does not reset it): `child_setup` clears it.
        set_mask(libc::SIG_BLOCK, &FORWARDED)?;
        let thread = thread::spawn(move || {
            let _ = set_mask(libc::SIG_UNBLOCK, &FORWARDED);
            for signal in signals.forever() {
                let mut target = shared.lock().unwrap_or_else(|p| p.into_inner());
                match &mut *target {
                    Target::Waiting(first) => *first = first.or(Some(signal)),
                    // SAFETY: kill(2) on our child, which is not reaped while we hold the lock.
                    Target::Child(pid) => unsafe {
                        libc::kill(*pid, signal);
                    },
                    Target::Done => {}
                }
            }
        });
        Ok(Forwarder {
            target,
            ignored,
            handle,
            thread,
        })
    }

    /// Runs the child with our stdin, stdout and stderr, and waits for it to exit.
    /// The command gets the lock's fencing token as `DIBS_FENCING_TOKEN`.
    pub fn run_child(
        &self,
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
        let mut target = self.target.lock().unwrap_or_else(|p| p.into_inner());
        if let Target::Waiting(Some(signal)) = *target {
            eprintln!("dibs: signal {signal} before {program} started; not run");
            return ended((128 + signal).clamp(0, 255) as u8);
        }
        let ignored = self.ignored;
        let terminal = foreground_terminal();
        let mut process = Process::new(program);
        // DIBS_REDIS may hold a password: it is dibs's, not the command's.
        process
            .args(args)
            .env_remove("DIBS_REDIS")
            .env("DIBS_FENCING_TOKEN", fence.to_string());
        // SAFETY: `child_setup` makes only async-signal-safe calls.
        unsafe {
            process.pre_exec(move || child_setup(&ignored, terminal));
        }
        // spawn returns once the child has exec'd: its process group exists from here on.
        let child = match process.spawn() {
            Ok(child) => child,
            Err(e) => {
                eprintln!("dibs: cannot run {program}: {e}");
                return ended(EX_NOT_STARTED);
            }
        };
        let pid = child.id() as libc::pid_t;
        *target = Target::Child(pid);
        drop(target);
        let stopper = on_lost.map(|stop| {
            let exited = stop.sender.clone();
            let shared = self.target.clone();
            let program = program.to_owned();
            let lock = lock.to_owned();
            let thread = thread::spawn(move || stop_on_loss(&shared, stop, &lock, &program));
            (exited, thread)
        });
        let waited = wait_for_exit(pid, terminal);
        *self.target.lock().unwrap_or_else(|p| p.into_inner()) = Target::Done;
        let stopped_for_loss = stopper.is_some_and(|(exited, thread)| {
            let _ = exited.send(Event::Exited); // the stopper signals no more
            thread.join().unwrap_or(false)
        });
        if let Some(fd) = terminal {
            take_terminal(fd);
        }
        if let Err(e) = waited {
            eprintln!("dibs: waiting for {program} failed: {e}");
        }
        let mut child = child;
        let code = match child.wait() {
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
        ChildEnd {
            code,
            stopped_for_loss,
        }
    }

    pub fn stop(self) {
        self.handle.close();
        let _ = self.thread.join();
    }
}

/// Waits for a loss of the lock or for the child's exit, whichever comes first. On a loss:
/// SIGTERM to the child's group now, SIGKILL after the grace if the child still runs. Returns
/// whether the lock was lost first.
fn stop_on_loss(target: &Mutex<Target>, stop: LossStop, lock: &str, program: &str) -> bool {
    let group = |sig| {
        let target = target.lock().unwrap_or_else(|p| p.into_inner());
        if let Target::Child(pid) = *target {
            // SAFETY: kill(2) on our child's group; the child is not reaped (the target says
            // so, under its lock), so its pid, the group's id, is not anyone else's.
            unsafe { libc::kill(-pid, sig) };
        }
    };
    if !matches!(stop.events.recv(), Ok(Event::Lost)) {
        return false;
    }
    let grace = crate::human(stop.grace);
    eprintln!(
        "dibs: warning: lock '{lock}' was lost while {program} ran, and another holder may run \
         it now: {program} is sent SIGTERM, and SIGKILL in {grace} if it still runs"
    );
    group(libc::SIGTERM);
    if let Err(RecvTimeoutError::Timeout) = stop.events.recv_timeout(stop.grace) {
        eprintln!("dibs: {program} still runs {grace} after SIGTERM: SIGKILL");
        group(libc::SIGKILL);
    }
    true
}

/// Waits, without reaping, until the child exits: its pid stays ours until forwarding stops.
/// A child stopped by job control (Ctrl-Z, or reading the terminal from the background) stops
/// dibs with the same signal, so that the shell sees the job stopped; continued, dibs gives it
/// the terminal back, if dibs has it, and continues it.
fn wait_for_exit(pid: libc::pid_t, terminal: Option<RawFd>) -> io::Result<()> {
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
                        give_terminal(fd, pid);
                    }
                }
                libc::kill(-pid, libc::SIGCONT);
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
    let _ = set_mask(libc::SIG_BLOCK, &[libc::SIGTTOU]);
    // SAFETY: tcsetpgrp(3) on a terminal descriptor of ours.
    unsafe { libc::tcsetpgrp(fd, group) };
    let _ = set_mask(libc::SIG_UNBLOCK, &[libc::SIGTTOU]);
}

/// Blocks or unblocks `signals` for the calling thread.
fn set_mask(how: libc::c_int, signals: &[i32]) -> io::Result<()> {
    // SAFETY: a sigset_t filled by sigemptyset/sigaddset, passed to pthread_sigmask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &signal in signals {
            libc::sigaddset(&mut set, signal);
        }
        match libc::pthread_sigmask(how, &set, std::ptr::null_mut()) {
            0 => Ok(()),
            code => Err(io::Error::from_raw_os_error(code)),
        }
    }
}

/// Which of [`FORWARDED`] were ignored when dibs started (nohup, a shell's background job).
fn inherited_ignored() -> io::Result<[bool; FORWARDED.len()]> {
    let mut ignored = [false; FORWARDED.len()];
    for (signal, ignored) in FORWARDED.iter().zip(&mut ignored) {
        // SAFETY: sigaction(2) only reading the disposition into a zeroed struct.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(*signal, std::ptr::null(), &mut action) != 0 {
                return Err(io::Error::last_os_error());
            }
            *ignored = action.sa_sigaction == libc::SIG_IGN;
        }
    }
    Ok(ignored)
}

/// Runs in the child between fork and exec, so async-signal-safe calls only. Puts the command
/// in a process group of its own, the terminal's foreground if dibs had it, and gives it the
/// signal state it would have had without dibs. The dispositions go before the mask: a signal
/// let through by the mask must not run signal-hook's handler, which would tell the parent.
fn child_setup(ignored: &[bool; FORWARDED.len()], terminal: Option<RawFd>) -> io::Result<()> {
    // SAFETY: setpgid, tcsetpgrp, sigaction and sigprocmask, with sets filled by sigemptyset.
    unsafe {
        if libc::setpgid(0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(fd) = terminal {
            // From the new (background) group: SIGTTOU is blocked until the mask is cleared.
            let mut ttou: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut ttou);
            libc::sigaddset(&mut ttou, libc::SIGTTOU);
            libc::sigprocmask(libc::SIG_BLOCK, &ttou, std::ptr::null_mut());
            libc::tcsetpgrp(fd, libc::getpid());
        }
        for (signal, ignored) in FORWARDED.iter().zip(ignored) {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = if *ignored {
                libc::SIG_IGN
            } else {
                libc::SIG_DFL
            };
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(*signal, &action, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        if libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
