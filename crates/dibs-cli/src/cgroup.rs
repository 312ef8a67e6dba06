//! A cgroup (v2) of CMD's own, `dibs-run-PID` beside dibs's, where the kernel has one and lets
//! dibs make it (root, or a delegated subtree): CMD joins it before it runs, and every process
//! it starts stays in it, whatever group or session it goes to. The [`crate::watchdog`] kills
//! them all at once through it (`cgroup.kill`, Linux 5.14) when dibs dies, and removes it; dibs
//! removes it after its last descendant is reaped. Without one, the watchdog reaches CMD's
//! process group alone.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub struct Cgroup {
    dir: PathBuf,
    /// Its `cgroup.procs`, written by CMD ("0": the writer) before it execs.
    procs: OwnedFd,
    /// Its `cgroup.kill` and `cgroup.events`, for the watchdog.
    kill: OwnedFd,
    events: OwnedFd,
    /// Its path, for the watchdog's rmdir.
    path: CString,
}

/// What the watchdog needs of the cgroup, as raw descriptors and a path made before the fork.
#[derive(Clone, Copy)]
pub struct ForWatchdog {
    pub kill: RawFd,
    pub events: RawFd,
    pub path: *const libc::c_char,
}

impl Cgroup {
    /// Makes CMD's cgroup; None where there is no cgroup v2, no `cgroup.kill`, or no right to
    /// make one.
    pub fn create() -> Option<Cgroup> {
        if !cfg!(target_os = "linux") {
            return None;
        }
        let dir = own_dir()?.join(format!("dibs-run-{}", std::process::id()));
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
                path: CString::new(dir.as_os_str().as_bytes())?,
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

    pub fn for_watchdog(&self) -> ForWatchdog {
        ForWatchdog {
            kill: self.kill.as_raw_fd(),
            events: self.events.as_raw_fd(),
            path: self.path.as_ptr(),
        }
    }

    /// Removes it, once nothing of CMD runs: it is empty then.
    pub fn remove(self) {
        if let Err(e) = fs::remove_dir(&self.dir) {
            eprintln!(
                "dibs: warning: cannot remove the cgroup {}: {e}",
                self.dir.display()
            );
        }
    }
}

/// Runs in the child between fork and exec, so async-signal-safe calls only: moves it into the
/// cgroup of `procs`. A failure leaves it where dibs is, as if there were no cgroup.
pub fn join(procs: RawFd) {
    // SAFETY: write(2) of a static byte to a descriptor of ours.
    unsafe { libc::write(procs, b"0".as_ptr().cast(), 1) };
}

/// Runs in the watchdog, once dibs has died, so async-signal-safe calls only: kills every
/// process of the cgroup, waits until it is empty, and removes it.
///
/// # Safety
///
/// `cgroup`'s descriptors are open and its path valid (made before the fork).
pub unsafe fn kill_all(cgroup: ForWatchdog) {
    if libc::write(cgroup.kill, b"1".as_ptr().cast(), 1) != 1 {
        return;
    }
    // cgroup.events says "populated 0" once its last process has exited; a change wakes poll
    // with POLLPRI. The timeout is a safety net for a lost wake-up.
    let mut buf = [0u8; 128];
    loop {
        libc::lseek(cgroup.events, 0, libc::SEEK_SET);
        let n = libc::read(cgroup.events, buf.as_mut_ptr().cast(), buf.len());
        if n <= 0 || contains(&buf[..n as usize], b"populated 0") {
            break;
        }
        let mut fd = libc::pollfd {
            fd: cgroup.events,
            events: libc::POLLPRI,
            revents: 0,
        };
        libc::poll(&mut fd, 1, 100);
    }
    libc::rmdir(cgroup.path);
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
