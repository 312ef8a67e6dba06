//! Issue 42 (2): no descendant of `dibs run`'s command outlives its lock. CMD is bash running a
//! program (the grandchild, which writes a timestamp every 50 ms), as `/opt/report.sh` would; a
//! second `dibs run` of the same lock tries again and again meanwhile. Whatever stops the first
//! run, the grandchild has written its last line before the second run's command starts.
//! Before, a signal reached bash alone: bash ended, the lock was released at once, and the
//! grandchild ran on beside the second run.

#[path = "../../../tests/common/mod.rs"]
mod common;
mod support;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::RedisServer;
use support::counter::kill;
use support::descendants::{assert_ended_before, group_of, parent_of, Job, Shape};
use support::{text, KilledOnPanic, Running};

/// Keep-alive extends a 3 s lock: the lock outlives a killed dibs by 3 s at most. Its
/// extensions wait 750 ms at most (a loopback server answers in well under 1 ms).
const KEPT: [&str; 5] = [
    "--at-most",
    "3s",
    "--keep-alive",
    "--redis-opt",
    "timeout-ms=250",
];

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
            let mut dibs = job.dibs(&uri, &KEPT, Shape::Grandchild, "finish");
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
        let mut dibs = job.dibs(&uri, &KEPT, Shape::Grandchild, "ignore");
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
            .args(job.args(&uri, &KEPT, Shape::Grandchild, mode))
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
        job.dibs(&uri, &KEPT, Shape::Daemon, "finish")
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = job.grandchild();
    let _daemon = KilledOnPanic(pid);
    assert_eq!(group_of(pid), pid, "the daemon leads a group of its own");
    let second = job.second(&uri);
    // bash exits at once: the daemon is then dibs's child (dibs is a subreaper), or, before,
    // dibs had exited too.
    let mut dibs = dibs;
    let deadline = Instant::now() + Duration::from_secs(10);
    while parent_of(pid) != dibs.id() as i32 && dibs.child_mut().try_wait().unwrap().is_none() {
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
