//! Issue 42 (2): no descendant of `dibs run`'s command outlives its lock. CMD is bash running a
//! program (the grandchild, which writes a timestamp every 50 ms), as `/opt/report.sh` would; a
//! second `dibs run` of the same lock tries again and again meanwhile. Whatever stops the first
//! run, the grandchild has written its last line before the second run's command starts.
//! Before, a signal reached bash alone: bash ended, the lock was released at once, and the
//! grandchild ran on beside the second run.

use crate::common;
use crate::support;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::RedisServer;
use support::counter::kill;
use support::descendants::{
    assert_ended_before, assert_wrote_before, children_of, gone, group_of, parent_of, watchdog_of,
    Job, Shape, KEPT_ALIVE,
};
use support::{text, KilledOnPanic, Running};

/// Where a signal is sent.
#[derive(Clone, Copy, Debug)]
enum To {
    Dibs,
    DibsGroup,
    CommandGroup,
}

/// The first run's record, before the second's: its line in `dibs history`.
fn recorded(uri: &str, job: &str) -> String {
    let out = support::dibs(&["history", "--redis", uri, job, "--limit", "2"]);
    text(&out.stdout)
        .lines()
        .nth(3)
        .unwrap_or_else(|| panic!("no run of {job}: {}", text(&out.stdout)))
        .to_owned()
}

/// SIGTERM, SIGINT and SIGHUP, to dibs, to its process group or to CMD's: each reaches the
/// grandchild, which finishes its work (five more lines) and exits; the lock is released after
/// that, not when bash ends. Before, a signal to dibs or its group reached bash alone and the
/// grandchild ran on for ever; one to CMD's group reached the grandchild, but the lock was
/// released when bash ended, while the grandchild still finished.
#[test]
fn a_signal_stops_the_grandchild_before_the_lock_is_released() {
    let server = RedisServer::start();
    let uri = server.uri();
    for to in [To::Dibs, To::DibsGroup, To::CommandGroup] {
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            let job = Job::new(&format!("sig-{to:?}-{signal}"));
            let mut dibs = job.dibs(&uri, &KEPT_ALIVE, Shape::Grandchild, "finish");
            if matches!(to, To::DibsGroup) {
                dibs.process_group(0);
            }
            let dibs = Running::new(dibs.spawn().unwrap());
            let pid = job.grandchild();
            let _grandchild = KilledOnPanic(pid);
            let second = job.second(&uri);
            match to {
                To::Dibs => kill(dibs.id() as i32, signal),
                To::DibsGroup => kill(-(dibs.id() as i32), signal),
                To::CommandGroup => kill(-group_of(pid), signal),
            }
            let code = dibs.exit_code();
            assert_ended_before(&job, pid, second.started());
            let run = recorded(&uri, &job.name);
            println!("{to:?} {signal}: dibs exited {code}; {run}");
            assert!(run.ends_with("released"), "{to:?} {signal}: {run}");
        }
    }
}

/// SIGKILL to dibs, or to its process group (`timeout -k`'s last word, a supervisor's): dibs
/// cannot catch it, and its watchdog, left in CMD's group, kills that group; the lock expires by
/// --at-most. Before, CMD's group ran on while the lock expired.
#[test]
fn sigkill_to_dibs_or_its_group_kills_the_command_s_group() {
    let server = RedisServer::start();
    let uri = server.uri();
    for to in [To::Dibs, To::DibsGroup] {
        let job = Job::new(&format!("kill-{to:?}"));
        let mut dibs = job.dibs(&uri, &KEPT_ALIVE, Shape::Grandchild, "ignore");
        if matches!(to, To::DibsGroup) {
            dibs.process_group(0);
        }
        let mut dibs = Running::new(dibs.spawn().unwrap());
        let pid = job.grandchild();
        let _grandchild = KilledOnPanic(pid);
        let second = job.second(&uri);
        match to {
            To::Dibs => kill(dibs.id() as i32, libc::SIGKILL),
            _ => kill(-(dibs.id() as i32), libc::SIGKILL),
        }
        let _ = dibs.child_mut().wait();
        assert_ended_before(&job, pid, second.started());
    }
}

/// Review of issue 42, D5: SIGKILL to dibs, whose command started a job-control group of its
/// own (`set -m`) or a setsid daemon (a session of its own): the watchdog kills those too, by
/// CMD's cgroup, and removes the cgroup. The grandchild has written its last line before a
/// second run's command starts. Before, the watchdog killed CMD's group alone, and the grandchild
/// ran on beside the second run. SKIPPED where dibs cannot make a cgroup (v2) of its own.
#[test]
fn sigkill_to_dibs_kills_the_command_s_other_groups_and_sessions() {
    let Some(cgroups) = own_cgroup() else {
        println!("SKIPPED: no cgroup v2 that this user can write to");
        return;
    };
    let server = RedisServer::start();
    let uri = server.uri();
    for shape in [Shape::JobControl, Shape::Daemon] {
        let job = Job::new(&format!("kill-{}", shape == Shape::Daemon));
        let mut dibs = Running::new(
            job.dibs(&uri, &KEPT_ALIVE, shape, "ignore")
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let pid = job.grandchild();
        let _grandchild = KilledOnPanic(pid);
        let command = dibs.id() as i32;
        assert_ne!(group_of(pid), group_of(command), "a group of its own");
        let cgroup = cgroups.join(format!("dibs-run-{command}"));
        assert!(cgroup.exists(), "{} was made", cgroup.display());
        let second = job.second(&uri);
        kill(dibs.id() as i32, libc::SIGKILL);
        let _ = dibs.child_mut().wait();
        assert_ended_before(&job, pid, second.started());
        let deadline = Instant::now() + Duration::from_secs(10);
        while cgroup.exists() {
            assert!(Instant::now() < deadline, "{} is left", cgroup.display());
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The cgroup (v2) directory this test runs in, if it may make one beside it.
fn own_cgroup() -> Option<std::path::PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mounts.lines().find(|l| l.contains(" - cgroup2 "))?;
    let fields: Vec<&str> = mount.split(' ').collect();
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let path = path.strip_prefix(fields[3]).unwrap_or(path);
    let dir = std::path::Path::new(fields[4]).join(path.trim_start_matches('/'));
    let c = std::ffi::CString::new(dir.to_str()?).ok()?;
    // SAFETY: access(2) on a NUL-terminated path.
    (unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0).then_some(dir)
}

/// SIGSTOP to dibs, or to its group: dibs can neither extend the lock nor see it lost, and the
/// lock lapses by --at-most. The watchdog, which dibs tells when the lock may lapse, stops
/// what the command started then, as `--on-lost` would (SIGKILL at once, with a grace of 0s), so
/// a setsid daemon and a `set -m` job that ignore SIGTERM have written their last line before a
/// second run's command starts. Continued, dibs exits 75. Before, they ran on beside the second
/// run for as long as dibs was stopped.
#[test]
fn sigstop_to_dibs_stops_the_command_before_its_lock_lapses() {
    let server = RedisServer::start();
    let uri = server.uri();
    let flags = [KEPT_ALIVE.as_slice(), &["--on-lost", "0s"]].concat();
    for to in [To::Dibs, To::DibsGroup] {
        let job = Job::new(&format!("stop-{to:?}"));
        let mut dibs = job.dibs(&uri, &flags, Shape::DaemonAndJob, "ignore");
        if matches!(to, To::DibsGroup) {
            dibs.process_group(0);
        }
        let dibs = Running::new(dibs.stderr(Stdio::null()).spawn().unwrap());
        let (daemon, background) = (job.grandchild(), job.job_grandchild());
        let _grandchildren = (KilledOnPanic(daemon), KilledOnPanic(background));
        let second = job.second(&uri);
        let target = match to {
            To::DibsGroup => -(dibs.id() as i32),
            _ => dibs.id() as i32,
        };
        kill(target, libc::SIGSTOP);
        let started = second.started();
        assert_ended_before(&job, daemon, started);
        assert_wrote_before(&job, &job.job_out(), background, started);
        kill(target, libc::SIGCONT);
        assert_eq!(dibs.exit_code(), 75, "{to:?}: stopped for the loss");
    }
}

/// `timeout 2 dibs run ...` sends SIGTERM to dibs and to dibs's group: the grandchild finishes
/// and the lock is released after it. `timeout -k 1 2 ...` with a grandchild that ignores
/// SIGTERM: a SIGKILL to dibs and its group a second later, and the watchdog kills CMD's group.
/// 2 s is some 40 times what dibs takes to start its command here.
#[test]
fn timeout_and_timeout_k_end_the_grandchild_before_another_run() {
    let server = RedisServer::start();
    let uri = server.uri();
    for (kill_after, mode) in [(None, "finish"), (Some("1"), "ignore")] {
        let job = Job::new(&format!("timeout-{}", kill_after.is_some()));
        let mut timeout = Command::new("timeout");
        if let Some(after) = kill_after {
            timeout.args(["-k", after]);
        }
        timeout
            .arg("2")
            .arg(env!("CARGO_BIN_EXE_dibs"))
            .args(job.args(&uri, &KEPT_ALIVE, Shape::Grandchild, mode))
            .stdout(Stdio::null());
        let mut timeout = Running::new(timeout.spawn().unwrap());
        let pid = job.grandchild();
        let _grandchild = KilledOnPanic(pid);
        let second = job.second(&uri);
        let status = timeout.child_mut().wait().unwrap();
        assert_ended_before(&job, pid, second.started());
        println!("timeout -k {kill_after:?}: {status}");
        if kill_after.is_none() {
            assert!(recorded(&uri, &job.name).ends_with("released"));
        }
    }
}

/// `--on-lost`: another holder takes the lock while CMD runs (a thief's value, for 6 s); the
/// grandchild ignores SIGTERM, and is killed when the 1 s grace is over, though bash ended at
/// the SIGTERM. Before, the SIGKILL went only while bash ran, and the grandchild ran on.
#[test]
fn on_lost_kills_a_grandchild_that_outlives_the_grace() {
    let server = RedisServer::start();
    let uri = server.uri();
    let job = Job::new("lost");
    let flags = ["--at-most", "1500ms", "--keep-alive", "--on-lost", "1s"];
    let dibs = Running::new(
        job.dibs(&uri, &flags, Shape::Grandchild, "ignore")
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = job.grandchild();
    let _grandchild = KilledOnPanic(pid);
    let second = job.second(&uri);
    let _: () = redis::cmd("SET")
        .arg("dibs:lost")
        .arg("thief")
        .arg("PX")
        .arg(6000)
        .query(&mut server.admin())
        .unwrap();
    assert_eq!(dibs.exit_code(), 75);
    assert_ended_before(&job, pid, second.started());
}

/// A command that leaves a daemon behind (setsid: a session and group of its own) and exits 0:
/// dibs keeps the lock while the daemon runs, passes a SIGTERM on to the daemon's group too, and
/// releases the lock once the daemon has finished. dibs exits with CMD's own code, 0. Before,
/// the lock was released when bash exited, and the daemon ran on beside the second run.
#[test]
fn a_daemon_the_command_leaves_keeps_the_lock_until_it_ends() {
    let server = RedisServer::start();
    let uri = server.uri();
    let job = Job::new("daemon");
    let dibs = Running::new(
        job.dibs(&uri, &KEPT_ALIVE, Shape::Daemon, "finish")
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = job.grandchild();
    let _daemon = KilledOnPanic(pid);
    assert_eq!(group_of(pid), pid, "the daemon leads a group of its own");
    let second = job.second(&uri);
    // bash exits at once: the daemon is then the child of dibs's watchdog (its subreaper), or,
    // before, dibs had exited too.
    let mut dibs = dibs;
    let deadline = Instant::now() + Duration::from_secs(10);
    while watchdog_of(dibs.id() as i32) != Some(parent_of(pid))
        && dibs.child_mut().try_wait().unwrap().is_none()
    {
        assert!(Instant::now() < deadline, "bash never exited");
        std::thread::sleep(Duration::from_millis(10));
    }
    if dibs.child_mut().try_wait().unwrap().is_none() {
        kill(dibs.id() as i32, libc::SIGTERM);
    }
    assert_eq!(dibs.exit_code(), 0, "CMD's own code");
    assert_ended_before(&job, pid, second.started());
    assert!(recorded(&uri, &job.name).ends_with("released"));
}

/// Review of issue 42, D4: once dibs has reaped the watchdog (a `kill -9` to CMD's group ended it
/// and CMD, and a daemon CMD left, the watchdog's child, is dibs's then and keeps the lock), the
/// group id it led is free, and a process that
/// is not dibs's may take it: here an unrelated `setsid sleep`, started by the test with that pid
/// (through ns_last_pid). A SIGTERM to dibs then reaches the daemon, and not the unrelated group.
/// Before, dibs passed it on to CMD's former group id too, and killed the unrelated sleep.
#[test]
fn a_signal_never_reaches_a_group_that_took_the_command_s_reaped_group_id() {
    let server = RedisServer::start();
    let uri = server.uri();
    let job = Job::new("reuse");
    let dibs = Running::new(
        job.dibs(&uri, &KEPT_ALIVE, Shape::Daemon, "finish")
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = job.grandchild();
    let _daemon = KilledOnPanic(pid);
    // bash exits at once: the daemon is then the only child of the watchdog (dibs's only
    // child), leader of what was CMD's group.
    let dibs_pid = dibs.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(10);
    let watchdog = loop {
        if let Some(watchdog) = watchdog_of(dibs_pid) {
            if children_of(watchdog) == [pid] {
                break watchdog;
            }
        }
        assert!(Instant::now() < deadline, "bash never exited");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(children_of(dibs_pid), [watchdog]);
    kill(-watchdog, libc::SIGKILL);
    // dibs reaps it: its pid, CMD's group id, is free from then on; the daemon is dibs's.
    while std::path::Path::new(&format!("/proc/{watchdog}")).exists() {
        assert!(Instant::now() < deadline, "dibs never reaped the watchdog");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        parent_of(pid),
        dibs_pid,
        "the daemon went to dibs, its subreaper"
    );
    let Some(mut unrelated) = start_with_pid(watchdog) else {
        println!("SKIPPED: cannot write /proc/sys/kernel/ns_last_pid (not root?)");
        return;
    };
    kill(dibs_pid, libc::SIGTERM);
    let code = dibs.exit_code();
    let still_runs = unrelated.try_wait().unwrap().is_none();
    let _ = unrelated.kill();
    let _ = unrelated.wait();
    assert!(
        gone(pid),
        "the daemon got the SIGTERM and finished (dibs exited {code})"
    );
    assert!(
        still_runs,
        "the unrelated group {watchdog} was signalled by dibs"
    );
    // The watchdog died before it could remove CMD's cgroup: dibs does, once the daemon is reaped.
    if let Some(cgroups) = own_cgroup() {
        let cgroup = cgroups.join(format!("dibs-run-{dibs_pid}"));
        assert!(!cgroup.exists(), "{} is left", cgroup.display());
    }
}

/// `setsid sleep 100`, started as process `pid`, which leads a session and group `pid` of its
/// own, not dibs's; None where ns_last_pid cannot be written. Other tests' processes may take
/// the pid first: up to 100 tries.
fn start_with_pid(pid: i32) -> Option<std::process::Child> {
    let deadline = Instant::now() + Duration::from_secs(10);
    for _ in 0..100 {
        std::fs::write("/proc/sys/kernel/ns_last_pid", (pid - 1).to_string()).ok()?;
        let mut sleep = Command::new("setsid")
            .args(["sleep", "100"])
            .spawn()
            .unwrap();
        if sleep.id() as i32 != pid {
            let _ = sleep.kill();
            let _ = sleep.wait();
            continue;
        }
        // setsid calls setsid(2), then execs sleep: wait for the exec.
        while std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap() != "sleep\n" {
            assert!(Instant::now() < deadline, "setsid never ran sleep");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(group_of(pid), pid);
        return Some(sleep);
    }
    panic!("pid {pid} was always taken by another process first");
}
