//! SIGKILL to `dibs run` where dibs cannot make a cgroup: a user without the right to write one
//! (here dibs runs as `nobody`), a container without a delegated subtree. CMD is bash, which
//! leaves a setsid daemon (a session of its own) and a `set -m` job (a group of its own) writing
//! a timestamp every 50 ms, both ignoring SIGTERM; a second `dibs run` of the same lock tries
//! again and again meanwhile. After a SIGKILL to dibs, or to dibs's process group, both have
//! written their last line before the second run's command starts, and no process of the first
//! run is left. Before, the watchdog killed CMD's process group alone, and the daemon and the job
//! ran on beside the second run.

use crate::common;
use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::RedisServer;
use support::counter::kill;
use support::descendants::{assert_wrote_before, group_of, Job, Shape, KEPT_ALIVE};
use support::{KilledOnPanic, Running};

/// The environment variable that marks every process of one test's first run (dibs, its
/// watchdog, CMD and all CMD started inherit it), for the scan of /proc.
const MARK: &str = "DIBS_TEST_NO_CGROUP";

#[test]
fn sigkill_to_dibs_without_a_cgroup_kills_its_daemon_and_job() {
    sigkill_without_a_cgroup(false);
}

#[test]
fn sigkill_to_dibs_s_group_without_a_cgroup_kills_its_daemon_and_job() {
    sigkill_without_a_cgroup(true);
}

fn sigkill_without_a_cgroup(to_group: bool) {
    let server = RedisServer::start();
    let uri = server.uri();
    let job = Job::new(&format!("nocg-{to_group}"));
    let mark = format!("{}-{}", job.name, std::process::id());
    let _left = KillMarked(mark.clone());
    // dibs's user writes the timestamps there.
    std::fs::set_permissions(job.dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut dibs = unprivileged(job.dir());
    dibs.args(job.args(&uri, &KEPT_ALIVE, Shape::DaemonAndJob, "ignore"))
        .env(MARK, &mark)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if to_group {
        dibs.process_group(0);
    }
    let mut dibs = Running::new(dibs.spawn().unwrap());
    let (daemon, background) = (job.grandchild(), job.job_grandchild());
    let _grandchildren = (KilledOnPanic(daemon), KilledOnPanic(background));
    let dibs_pid = dibs.id() as i32;
    assert_eq!(
        group_of(daemon),
        daemon,
        "the daemon leads a group of its own"
    );
    assert_eq!(group_of(background), background, "so does the job");
    assert_ne!(group_of(background), group_of(dibs_pid));
    if cgroup_of(daemon) != cgroup_of(dibs_pid) || cgroup_of(background) != cgroup_of(dibs_pid) {
        println!("SKIPPED: dibs made a cgroup for its command (this user may write one)");
        return;
    }
    let second = job.second(&uri);
    kill(if to_group { -dibs_pid } else { dibs_pid }, libc::SIGKILL);
    let _ = dibs.child_mut().wait();
    let started = second.started();
    let left: Vec<String> = marked(&mark)
        .into_iter()
        .map(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            format!("{pid} {}", comm.trim())
        })
        .collect();
    assert!(
        left.is_empty(),
        "left running of the first run when the second started: {left:?}"
    );
    assert_wrote_before(&job, &job.out(), daemon, started);
    assert_wrote_before(&job, &job.job_out(), background, started);
}

/// `dibs`, as `nobody` when the test runs as root (who may write any cgroup): that user may
/// write none here. A copy of it in `dir` where `nobody` may not reach the build's (a checkout
/// under /root).
fn unprivileged(dir: &Path) -> Command {
    // SAFETY: geteuid takes nothing.
    if unsafe { libc::geteuid() } != 0 {
        return Command::new(env!("CARGO_BIN_EXE_dibs"));
    }
    let as_nobody = |program: &Path| {
        let mut setpriv = Command::new("setpriv");
        setpriv
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
            .arg(program);
        setpriv
    };
    let mut binary = PathBuf::from(env!("CARGO_BIN_EXE_dibs"));
    let reached = as_nobody(Path::new("test"))
        .arg("-x")
        .arg(&binary)
        .status()
        .unwrap();
    if !reached.success() {
        let copy = dir.join("dibs");
        std::fs::copy(&binary, &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        binary = copy;
    }
    as_nobody(&binary)
}

impl Drop for KillMarked {
    fn drop(&mut self) {
        for pid in marked(&self.0) {
            // SAFETY: kill(2) on a process of this test's first run, found by its mark.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// Every process of the first run left when dropped is killed: a failed assertion must not leave
/// the daemon writing.
struct KillMarked(String);

/// The live processes whose environment holds `MARK=mark`.
fn marked(mark: &str) -> Vec<i32> {
    let wanted = format!("{MARK}={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            environ.split(|&b| b == 0).any(|v| v == wanted.as_bytes())
        })
        .collect()
}

/// The cgroup (v2) a process is in.
fn cgroup_of(pid: i32) -> String {
    let own = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    own.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap_or_default()
        .to_owned()
}
