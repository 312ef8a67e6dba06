//! `dibs run` and signals, against a real redis-server: what dibs passes on to its command, and
//! how often, whether the signal is sent to dibs alone or to its whole process group.

use crate::common;
use crate::support;

use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::RedisServer;
use support::counter::{counting, kill, report_path, wait_for};
use support::{run, text, Running, TempDir};

#[test]
fn sigterm_is_passed_on_and_the_lock_released_when_the_child_exits() {
    let server = RedisServer::start();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args([
            "run",
            "--redis",
            &server.uri(),
            "--lock",
            "long",
            "--at-most",
            "1m",
            "--",
        ])
        .args([
            "sh",
            "-c",
            "trap 'echo got-term; exit 42' TERM; echo started; while true; do sleep 0.05; done",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The shell prints `started` once its trap is installed, and dibs runs it only once it holds
    // the lock.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut out = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut out).unwrap();
    assert_eq!(out, "started\n", "the child's first line");
    assert!(server.exists("dibs:long"), "held while the child runs");
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let status = child.wait().unwrap();
    std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
    assert_eq!(
        status.code(),
        Some(42),
        "the child's own exit code; stdout: {out}"
    );
    assert!(out.contains("got-term"), "{out}");
    assert!(!server.exists("dibs:long"), "released");
}

#[test]
fn a_child_killed_by_a_signal_exits_128_plus_it_and_a_missing_command_127() {
    let server = RedisServer::start();
    let uri = server.uri();
    let out = run(&uri, "k", "10s", &["--", "sh", "-c", "kill -KILL $$"]);
    assert_eq!(out.status.code(), Some(128 + 9), "{}", text(&out.stderr));
    let out = run(&uri, "k", "10s", &["--", "/nonexistent/program"]);
    assert_eq!(out.status.code(), Some(127), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cannot run /nonexistent/program"),
        "{}",
        text(&out.stderr)
    );
    assert!(!server.exists("dibs:k"), "released");
}

#[test]
fn a_signal_before_the_command_starts_releases_the_lock_and_runs_nothing() {
    let server = RedisServer::start();
    let signal = |sig: &str, pid: u32| {
        let ok = Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
    };
    // A frozen server holds dibs inside its acquire while the signal arrives.
    signal("-STOP", server.pid());
    let child = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args([
            "run",
            "--redis",
            &server.uri(),
            "--lock",
            "early",
            "--at-most",
            "1m",
        ])
        .args(["--", "sh", "-c", "echo ran"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_millis(300));
    signal("-HUP", child.id());
    thread::sleep(Duration::from_millis(100));
    signal("-CONT", server.pid());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(128 + 1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "the command must not run");
    assert!(
        text(&out.stderr).contains("before sh started; not run"),
        "{}",
        text(&out.stderr)
    );
    assert!(!server.exists("dibs:early"), "released");
}

/// `dibs run ... -- grep ... /proc/self/status` started with `ignored` of SIGHUP, SIGINT and
/// SIGTERM set to SIG_IGN and the others to SIG_DFL, as a shell, nohup or cron could leave them;
/// returns the command's blocked and ignored signal sets. grep is run directly: a shell between
/// would clear its children's mask itself (dash does) and hide what dibs passed on.
fn command_signal_sets(uri: &str, ignored: &[i32]) -> (u64, u64) {
    use std::os::unix::process::CommandExt;
    let ignored = ignored.to_vec();
    let mut dibs = Command::new(env!("CARGO_BIN_EXE_dibs"));
    dibs.args(["run", "--redis", uri, "--lock", "mask", "--at-most", "10s"])
        .args(["--", "grep", "-E", "^(SigBlk|SigIgn):", "/proc/self/status"]);
    // SAFETY: only signal(2), which is async-signal-safe, between fork and exec.
    unsafe {
        dibs.pre_exec(move || {
            for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM] {
                let disposition = if ignored.contains(&signal) {
                    libc::SIG_IGN
                } else {
                    libc::SIG_DFL
                };
                libc::signal(signal, disposition);
            }
            Ok(())
        });
    }
    let out = dibs.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let set = |name: &str| {
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {stdout}"));
        u64::from_str_radix(line.trim(), 16).unwrap()
    };
    (set("SigBlk:"), set("SigIgn:"))
}

/// A signal's bit in a /proc/PID/status signal set.
fn bit(signal: i32) -> u64 {
    1 << (signal - 1)
}

#[test]
fn the_command_starts_with_no_signal_blocked_and_the_dispositions_dibs_was_given() {
    let server = RedisServer::start();
    let (blocked, ignored) = command_signal_sets(&server.uri(), &[]);
    assert_eq!(blocked, 0, "SigBlk {blocked:016x}");
    for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM] {
        assert_eq!(
            ignored & bit(signal),
            0,
            "{signal} in SigIgn {ignored:016x}"
        );
    }
    // As under nohup: a signal ignored when dibs started stays ignored in the command.
    let (blocked, ignored) = command_signal_sets(&server.uri(), &[libc::SIGHUP]);
    assert_eq!(blocked, 0, "SigBlk {blocked:016x}");
    assert_ne!(ignored & bit(libc::SIGHUP), 0, "SigIgn {ignored:016x}");
    assert_eq!(ignored & bit(libc::SIGTERM), 0, "SigIgn {ignored:016x}");
    assert!(!server.exists("dibs:mask"), "released");
}

#[test]
fn sigterm_to_dibs_ends_a_command_that_does_not_trap_it_and_dibs_exits_143() {
    let server = RedisServer::start();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args(["run", "--redis", &server.uri(), "--lock", "sleepy"])
        .args(["--at-most", "1m", "--", "sleep", "30"])
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !server.exists("dibs:sleepy") {
        assert!(started.elapsed() < Duration::from_secs(5), "never acquired");
        thread::sleep(Duration::from_millis(20));
    }
    thread::sleep(Duration::from_millis(300)); // let sleep start
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let killed = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if killed.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the command still runs 5 s after SIGTERM");
        }
        thread::sleep(Duration::from_millis(20));
    };
    assert!(
        killed.elapsed() < Duration::from_secs(3),
        "{:?}",
        killed.elapsed()
    );
    assert_eq!(status.code(), Some(128 + 15));
    assert!(!server.exists("dibs:sleepy"), "released");
}

#[test]
fn a_command_that_kills_itself_with_sigterm_makes_dibs_exit_143() {
    let server = RedisServer::start();
    let out = run(
        &server.uri(),
        "self",
        "10s",
        &["--", "sh", "-c", "kill -TERM $$"],
    );
    assert_eq!(out.status.code(), Some(128 + 15), "{}", text(&out.stderr));
    assert!(!server.exists("dibs:self"), "released");
}

/// Issue 30 (3): a signal to dibs alone (`kill PID`, systemd with `KillMode=mixed`) is passed on
/// to the command, once. HUP then ends it: dibs exits 129, 128 + the signal that killed it.
#[test]
fn a_signal_to_dibs_alone_reaches_the_command_once() {
    let server = RedisServer::start();
    let dir = TempDir::new("dibs-alone");
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let report = report_path(&dir, &format!("alone-{signal}"));
        let dibs = Running::new(
            counting(
                &server.uri(),
                "alone",
                &["--at-most", "1m"],
                &report,
                libc::SIGHUP,
            )
            .spawn()
            .unwrap(),
        );
        let pid = dibs.id() as i32;
        let ready = wait_for(&report, |_| true);
        assert_ne!(
            ready.group, pid,
            "the command has a process group of its own"
        );
        kill(pid, signal);
        wait_for(&report, |r| r.count(signal) > 0);
        kill(pid, libc::SIGHUP);
        assert_eq!(dibs.exit_code(), 128 + libc::SIGHUP);
        let seen = wait_for(&report, |r| r.count(libc::SIGHUP) > 0);
        assert_eq!(seen.count(signal), 1, "signal {signal}: {seen:?}");
        assert_eq!(seen.count(libc::SIGHUP), 1, "{seen:?}");
    }
    assert!(!server.exists("dibs:alone"), "released");
}

/// Issue 30 (3): a signal to the whole process group dibs runs in (`kill -- -PGID`, a
/// supervisor stopping the group) reaches the command once: the kernel delivers it to dibs
/// alone, which passes it on. Before, it came twice, from the kernel and from dibs. And the
/// exit codes stay: 143 for a TERM, 130 for an INT.
#[test]
fn a_signal_to_the_whole_process_group_reaches_the_command_once() {
    use std::os::unix::process::CommandExt;
    let server = RedisServer::start();
    let dir = TempDir::new("dibs-group");
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let report = report_path(&dir, &format!("group-{signal}"));
        let dibs = Running::new(
            counting(
                &server.uri(),
                "group",
                &["--at-most", "1m"],
                &report,
                libc::SIGHUP,
            )
            .process_group(0) // dibs leads a group, as a shell's job does
            .spawn()
            .unwrap(),
        );
        let group = dibs.id() as i32;
        wait_for(&report, |_| true);
        kill(-group, signal);
        wait_for(&report, |r| r.count(signal) > 0);
        kill(group, libc::SIGHUP);
        assert_eq!(dibs.exit_code(), 128 + libc::SIGHUP);
        let seen = wait_for(&report, |r| r.count(libc::SIGHUP) > 0);
        assert_eq!(
            seen.count(signal),
            1,
            "signal {signal} to the group: {seen:?}"
        );

        // The same signal ends the command: dibs exits 128 + it.
        let report = report_path(&dir, &format!("group-end-{signal}"));
        let dibs = Running::new(
            counting(
                &server.uri(),
                "group",
                &["--at-most", "1m"],
                &report,
                signal,
            )
            .process_group(0)
            .spawn()
            .unwrap(),
        );
        let group = dibs.id() as i32;
        wait_for(&report, |_| true);
        kill(-group, signal);
        assert_eq!(
            dibs.exit_code(),
            128 + signal,
            "signal {signal} to the group"
        );
    }
    assert!(!server.exists("dibs:group"), "released");
}

/// Found by the robustness harness (Sentinel, seed 6): `dibs run` stopped (SIGSTOP, as a frozen
/// VM is) while it waited for its acquire's reply, then continued, failed with "Interrupted
/// system call" and exit 69, and left the lock it had won and its tick's start behind: the tick
/// ran nowhere. A stop and SIGCONT end a read that has a timeout with EINTR, with no handler
/// (signal(7)). The read is now made again, and a reply that came while dibs was stopped is
/// taken even when dibs is continued past the read's deadline.
#[test]
fn a_run_stopped_while_it_waits_for_its_lock_takes_the_reply_when_continued() {
    let server = RedisServer::start();
    // A first run loads the acquire's script, so that the run below sends it once (EVALSHA).
    let warm = run(&server.uri(), "warm", "1m", &["--tick", "1", "--", "true"]);
    assert_eq!(warm.status.code(), Some(0), "{}", text(&warm.stderr));
    // The connection's setup is answered; the acquire is held back until let through.
    let proxy = Proxy::start_answering_once(server.port);
    let dibs = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args([
            "run",
            "--redis",
            &proxy.uri(),
            "--redis-opt",
            "timeout-ms=1000",
        ])
        .args([
            "--lock",
            "stopped",
            "--tick",
            "1",
            "--at-most",
            "1m",
            "--",
            "true",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = dibs.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(10);
    while proxy.held_bytes() == 0 {
        assert!(Instant::now() < deadline, "dibs never sent its acquire");
        thread::sleep(Duration::from_millis(5));
    }
    let sent = Instant::now();
    kill(pid, libc::SIGSTOP);
    proxy.let_through();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server.exists("dibs:stopped@1") {
        assert!(Instant::now() < deadline, "the server never took the lock");
        thread::sleep(Duration::from_millis(5));
    }
    // Continued only once the read's deadline (1 s from its send) has passed.
    while sent.elapsed() < Duration::from_millis(1500) {
        thread::sleep(Duration::from_millis(20));
    }
    kill(pid, libc::SIGCONT);
    let out = dibs.wait_with_output().unwrap();
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {said}");
    assert!(!said.contains("Interrupted"), "{said}");
    let history = support::ops(&server.uri(), &["history", "stopped"]);
    assert!(
        text(&history.stdout).contains("ok"),
        "{}",
        text(&history.stdout)
    );
}
