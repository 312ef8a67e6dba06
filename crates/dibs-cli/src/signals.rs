//! The signals dibs passes on to the command `dibs run` runs, and those it sends it when the
//! lock is lost: to CMD's process group, and to the group of each process CMD started that went
//! to another (a daemon that called setsid, see [`crate::descendants`]). The watchdog, which
//! reaps them, sends them at dibs's word ([`crate::watchdog::Link`]); dibs itself, once the
//! watchdog has died.
//!
//! One signal reaches each group once. A signal to dibs's process group (a `kill -- -PGID`, a
//! supervisor stopping the group) reaches dibs alone, which passes it on; one to CMD's group
//! (Ctrl-C at a terminal: it is the foreground group while CMD runs) reaches CMD's group, and
//! dibs never sees it.

use std::io;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::descendants::signal_groups;
use crate::output::human;
use crate::watchdog::{monotonic_ns, Link};

pub const FORWARDED: [i32; 3] = [SIGTERM, SIGINT, SIGHUP];

/// Passes SIGTERM, SIGINT and SIGHUP on to the child's process group and its descendants'. A
/// signal that comes before the child exists is kept and delivered once it does; none is sent
/// once everything the child started has been reaped, when CMD's group may be no more.
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
    /// CMD runs, or what it started does; the watchdog while it is unreaped.
    Running(Option<Watched>),
    Done,
}

/// CMD's process group, whose leader, the watchdog, is unreaped (the group's id is then no
/// other's), and the link to the watchdog.
struct Watched {
    group: libc::pid_t,
    link: Option<Link>,
}

impl Target {
    /// Sends `signal` to every group of CMD's, once each: by the watchdog while it lives, else
    /// by dibs (all CMD's processes are then dibs's descendants).
    fn deliver(&self, signal: i32) {
        match self {
            Target::Running(Some(watched)) => {
                if !watched
                    .link
                    .as_ref()
                    .is_some_and(|link| link.signal(signal))
                {
                    signal_groups(Some(watched.group), signal);
                }
            }
            Target::Running(None) => signal_groups(None, signal),
            Target::Waiting(_) | Target::Done => {}
        }
    }

    /// Tells the watchdog when the lock may lapse ([`monotonic_ns`]; `u64::MAX`: never mind).
    fn lapse_at(&self, at: u64) {
        if let Target::Running(Some(Watched {
            link: Some(link), ..
        })) = self
        {
            link.lapse_at(at);
        }
    }
}

/// Forwarding held while the child is started: a signal that comes meanwhile waits, and goes to
/// the child's group once [`Starting::started`] names it.
pub struct Starting<'a>(MutexGuard<'a, Target>);

impl Starting<'_> {
    /// CMD runs in `group`, the watchdog's, reached by `link`.
    pub fn started(mut self, group: libc::pid_t, link: Option<Link>) {
        *self.0 = Target::Running(Some(Watched { group, link }));
    }
}

impl Forwarder {
    pub fn start() -> io::Result<Forwarder> {
        let ignored = inherited_ignored();
        let mut signals = Signals::new(FORWARDED)?;
        let handle = signals.handle();
        let target = Arc::new(Mutex::new(Target::Waiting(None)));
        let shared = target.clone();
        // The signals are blocked on every thread but the forwarder's: a handler running on the
        // main thread would interrupt its Redis reads (EINTR) mid-acquire or mid-release. The
        // child inherits this mask (std does not reset it): `restore_in_child` clears it.
        set_mask(libc::SIG_BLOCK, &FORWARDED)?;
        let thread = thread::spawn(move || {
            let _ = set_mask(libc::SIG_UNBLOCK, &FORWARDED);
            for signal in signals.forever() {
                let mut target = shared.lock().unwrap_or_else(|p| p.into_inner());
                match &mut *target {
                    Target::Waiting(first) => *first = first.or(Some(signal)),
                    running => running.deliver(signal),
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

    /// Which of [`RESTORED`] were ignored when dibs started, as a mask (bit N: signal N), for
    /// [`restore_in_child`].
    pub fn ignored(&self) -> u64 {
        let mut mask = 0;
        for signal in RESTORED {
            let ignored = match FORWARDED.iter().position(|&s| s == signal) {
                Some(i) => self.ignored[i],
                // dibs never changes the others.
                None => ignored_now(signal),
            };
            if ignored {
                mask |= 1 << signal;
            }
        }
        mask
    }

    /// Holds forwarding for the child about to start; the signal that came before instead, if
    /// one did: the child is then not to be started.
    pub fn starting(&self) -> Result<Starting<'_>, i32> {
        let target = self.target.lock().unwrap_or_else(|p| p.into_inner());
        match *target {
            Target::Waiting(Some(signal)) => Err(signal),
            _ => Ok(Starting(target)),
        }
    }

    /// Reaps `pid`, a child of dibs that has exited, with `reap`, while no signal is being sent:
    /// a group with a child of dibs in it stays in being until it is signalled. Once the
    /// watchdog is reaped, CMD's group id is signalled only if a descendant is seen in it.
    pub fn reap<T>(&self, pid: libc::pid_t, reap: impl FnOnce() -> T) -> T {
        let mut target = self.target.lock().unwrap_or_else(|p| p.into_inner());
        let reaped = reap();
        if matches!(&*target, Target::Running(Some(watched)) if watched.group == pid) {
            *target = Target::Running(None);
        }
        reaped
    }

    /// No signal goes to the child's group from here on: nothing it started runs, and its
    /// group is about to end.
    pub fn exited(&self) {
        *self.target.lock().unwrap_or_else(|p| p.into_inner()) = Target::Done;
    }

    pub fn stop(self) {
        self.handle.close();
        let _ = self.thread.join();
    }
}

/// Stops the child when its lock is lost: SIGTERM to its process group (and its descendants'),
/// then SIGKILL `grace` later if anything of it still runs.
pub struct LossStop {
    grace: Duration,
    events: mpsc::Receiver<Event>,
    sender: mpsc::Sender<Event>,
}

enum Event {
    Lost,
    Exited,
}

/// A [`LossStop`] watching a running child.
pub struct LossWatch<'scope> {
    exited: mpsc::Sender<Event>,
    thread: thread::ScopedJoinHandle<'scope, bool>,
}

/// How much longer the lock may be relied on, from now ([`dibs::Lease::safe_for`]).
pub type SafeFor<'a> = &'a (dyn Fn() -> Duration + Sync);

impl LossStop {
    pub fn new(grace: Duration) -> LossStop {
        let (sender, events) = mpsc::channel();
        LossStop {
            grace,
            events,
            sender,
        }
    }

    pub fn grace(&self) -> Duration {
        self.grace
    }

    /// What keep-alive calls, on its thread, when the lock is found lost.
    pub fn teller(&self) -> impl FnOnce() + Send + 'static {
        let sender = self.sender.clone();
        move || {
            let _ = sender.send(Event::Lost);
        }
    }

    /// Watches for the loss while the child, whose signals `forwarder` passes on, runs, and
    /// tells the watchdog meanwhile when the lock may lapse (`safe_for`).
    pub fn watch<'scope, 'env>(
        self,
        scope: &'scope thread::Scope<'scope, 'env>,
        forwarder: &Forwarder,
        lock: &str,
        program: &str,
        safe_for: SafeFor<'env>,
    ) -> LossWatch<'scope> {
        let exited = self.sender.clone();
        let target = forwarder.target.clone();
        let (lock, program) = (lock.to_owned(), program.to_owned());
        let thread = scope.spawn(move || stop_on_loss(&target, self, &lock, &program, safe_for));
        LossWatch { exited, thread }
    }
}

impl LossWatch<'_> {
    /// Once the child and all it started have exited: whether it was told to stop for a loss of
    /// the lock.
    pub fn finish(self) -> bool {
        let _ = self.exited.send(Event::Exited); // the stopper signals no more
        self.thread.join().unwrap_or(false)
    }
}

/// Waits for a loss of the lock or for the end of the child and all it started, whichever comes
/// first, telling the watchdog meanwhile when the lock may lapse, a quarter of the time left
/// apart: should dibs stop running (SIGSTOP), the watchdog stops the child then. On a loss:
/// SIGTERM to their groups now, SIGKILL after the grace if any still runs (not bash alone: what
/// it ran too). Returns whether the lock was lost first.
fn stop_on_loss(
    target: &Mutex<Target>,
    stop: LossStop,
    lock: &str,
    program: &str,
    safe_for: SafeFor,
) -> bool {
    let with = |act: &dyn Fn(&Target)| act(&target.lock().unwrap_or_else(|p| p.into_inner()));
    loop {
        // Now before the time left: the sum is never later than the lapse.
        let now = monotonic_ns();
        let safe = safe_for();
        // None left: lost (keep-alive says so at once) or lapsed; the last time said stands.
        if !safe.is_zero() {
            with(&|t| t.lapse_at(now + safe.as_nanos() as u64));
        }
        let period = (safe / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
        match stop.events.recv_timeout(period) {
            Ok(Event::Lost) => break,
            Ok(Event::Exited) | Err(RecvTimeoutError::Disconnected) => return false,
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
    with(&|t| t.lapse_at(u64::MAX)); // dibs stops it itself from here
    let grace = human(stop.grace);
    eprintln!(
        "dibs: warning: lock '{lock}' was lost while {program} ran, and another holder may run \
         it now: {program} is sent SIGTERM, and SIGKILL in {grace} if it still runs"
    );
    with(&|t| t.deliver(libc::SIGTERM));
    if let Err(RecvTimeoutError::Timeout) = stop.events.recv_timeout(stop.grace) {
        eprintln!("dibs: {program} still runs {grace} after SIGTERM: SIGKILL");
        with(&|t| t.deliver(libc::SIGKILL));
    }
    true
}

/// Blocks or unblocks `signals` for the calling thread.
pub fn set_mask(how: libc::c_int, signals: &[i32]) -> io::Result<()> {
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
fn inherited_ignored() -> [bool; FORWARDED.len()] {
    FORWARDED.map(ignored_now)
}

/// Whether `signal` is ignored now.
fn ignored_now(signal: i32) -> bool {
    // SAFETY: sigaction(2) only reading the disposition into a zeroed struct.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut action) == 0
            && action.sa_sigaction == libc::SIG_IGN
    }
}

/// The signals whose disposition CMD gets as dibs got it: those dibs forwards, and those the
/// watchdog, CMD's parent, ignores (SIGPIPE aside: std gives every child the default).
pub const RESTORED: [i32; 9] = [
    SIGTERM,
    SIGINT,
    SIGHUP,
    libc::SIGQUIT,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// Runs in the child between fork and exec, so async-signal-safe calls only: gives it the
/// signal state it would have had without dibs: each of [`RESTORED`] ignored if its bit is set
/// in `ignored`, else the default; no signal blocked. The dispositions go before the mask: a
/// signal let through by the mask must not run a handler of its parent's.
pub fn restore_in_child(ignored: u64) -> io::Result<()> {
    // SAFETY: sigaction and sigprocmask, with sets filled by sigemptyset.
    unsafe {
        for signal in RESTORED {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = if ignored & (1 << signal) != 0 {
                libc::SIG_IGN
            } else {
                libc::SIG_DFL
            };
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
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
