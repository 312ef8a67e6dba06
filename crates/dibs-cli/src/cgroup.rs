//! A cgroup (v2) of CMD's own, `dibs-run-PID` (dibs's pid) beside dibs's, where the kernel has
//! one and lets dibs make it (root, or a delegated subtree): CMD joins it before it runs, and
//! every process it starts stays in it, whatever group or session it goes to, and whoever its
//! parent. The [`crate::watchdog`], which makes it, kills them all at once through it
//! (`cgroup.kill`, Linux 5.14) when dibs dies, besides killing its descendants one by one, and
//! removes it once it is empty. Without one, the watchdog's descendants are all it reaches.

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

pub struct Cgroup {
    dir: PathBuf,
    /// Its `cgroup.procs`, written by CMD ("0": the writer) before it execs.
    procs: OwnedFd,
    /// Its `cgroup.kill` and `cgroup.events`.
    kill: OwnedFd,
    events: OwnedFd,
}

impl Cgroup {
    /// Makes CMD's cgroup, named after `dibs`'s pid; None where there is no cgroup v2, no
    /// `cgroup.kill`, or no right to make one.
    pub fn create(dibs: libc::pid_t) -> Option<Cgroup> {
        if !cfg!(target_os = "linux") {
            return None;
        }
        let dir = own_dir()?.join(format!("dibs-run-{dibs}"));
        if let Err(e) = fs::create_dir(&dir) {
            // Left by an earlier dibs of this pid, killed before its watchdog ran: empty, as
            // its processes are gone with the pid.
            if e.kind() != io::ErrorKind::AlreadyExists || fs::remove_dir(&dir).is_err() {
                return None;
            }
            fs::create_dir(&dir).ok()?;
        }
        let made = (|| {
            let open = |name: &str, write: bool| {
                fs::OpenOptions::new()
                    .read(!write)
                    .write(write)
                    .open(dir.join(name))
                    .map(OwnedFd::from)
            };
            Ok::<_, io::Error>(Cgroup {
                procs: open("cgroup.procs", true)?,
                kill: open("cgroup.kill", true)?,
                events: open("cgroup.events", false)?,
                dir: dir.clone(),
            })
        })();
        if made.is_err() {
            let _ = fs::remove_dir(&dir);
        }
        made.ok()
    }

    /// Its `cgroup.procs`, which the child writes between fork and exec to join it.
    pub fn procs(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// SIGKILLs every process in it, at once.
    pub fn kill(&self) {
        // SAFETY: write(2) of a static byte to a descriptor of ours.
        unsafe { libc::write(self.kill.as_raw_fd(), b"1".as_ptr().cast(), 1) };
    }

    /// Waits until it is empty, and removes it; the error, if it cannot be.
    pub fn remove(self) -> Result<(), String> {
        // cgroup.events says "populated 0" once its last process has exited; a change wakes
        // poll with POLLPRI. The timeout is a safety net for a lost wake-up.
        let events = self.events.as_raw_fd();
        let mut buf = [0u8; 128];
        loop {
            // SAFETY: lseek, read and poll on a descriptor of ours, into a buffer of ours.
            let n = unsafe {
                libc::lseek(events, 0, libc::SEEK_SET);
                libc::read(events, buf.as_mut_ptr().cast(), buf.len())
            };
            if n <= 0 || contains(&buf[..n as usize], b"populated 0") {
                break;
            }
            let mut fd = libc::pollfd {
                fd: events,
                events: libc::POLLPRI,
                revents: 0,
            };
            // SAFETY: poll(2) on one pollfd of ours.
            unsafe { libc::poll(&mut fd, 1, 100) };
        }
        fs::remove_dir(&self.dir)
            .map_err(|e| format!("cannot remove the cgroup {}: {e}", self.dir.display()))
    }
}

/// Removes CMD's cgroup, if its watchdog made one and died before it could remove it (a
/// `kill -9` to CMD's group): once dibs has reaped what CMD left, it is empty.
pub fn remove_left(dibs: libc::pid_t) {
    let Some(dir) = own_dir().map(|d| d.join(format!("dibs-run-{dibs}"))) else {
        return;
    };
    match fs::remove_dir(&dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => eprintln!(
            "dibs: warning: cannot remove the cgroup {}: {e}",
            dir.display()
        ),
        _ => {}
    }
}

/// Runs in the child between fork and exec, so async-signal-safe calls only: moves it into the
/// cgroup of `procs`. A failure leaves it where dibs is, as if there were no cgroup.
pub fn join(procs: RawFd) {
    // SAFETY: write(2) of a static byte to a descriptor of ours.
    unsafe { libc::write(procs, b"0".as_ptr().cast(), 1) };
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The directory of dibs's own cgroup in the v2 hierarchy, from /proc/self/mountinfo and
/// /proc/self/cgroup.
fn own_dir() -> Option<PathBuf> {
    let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
    // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - FSTYPE SOURCE OPTIONS
    let mount = mounts.lines().find(|l| l.contains(" - cgroup2 "))?;
    let fields: Vec<&str> = mount.split(' ').collect();
    let (root, mountpoint) = (*fields.get(3)?, *fields.get(4)?);
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let path = path.strip_prefix(root).unwrap_or(path);
    Some(Path::new(mountpoint).join(path.trim_start_matches('/')))
}
