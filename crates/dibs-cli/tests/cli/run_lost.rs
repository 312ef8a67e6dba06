//! `dibs run --keep-alive` when the lock is lost, against a real redis-server: the command is
//! stopped (SIGTERM, then SIGKILL after the grace), dibs exits 75 and the run is recorded lost;
//! or, with `--on-lost ignore`, it runs on.

use crate::common;
use crate::support;

use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use common::RedisServer;
use redis::Commands;
use support::counter::{counting, kill, report_path, wait_for};
use support::{text, KilledOnPanic, Running, TempDir};

/// Lines of dibs's stderr, as they come.
fn stderr_lines(dibs: &mut Running) -> std::sync::mpsc::Receiver<String> {
    let stderr = dibs.child_mut().stderr.take().expect("stderr piped");
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Keep-alive extends a 1,500 ms lock every 500 ms: a loss is found within one period.
const KEPT: [&str; 3] = ["--at-most", "1500ms", "--keep-alive"];
const PERIOD: Duration = Duration::from_millis(500);

/// Issue 30 (6): with `--keep-alive`, an outsider deletes the held key; keep-alive's next
/// extension finds the lock lost, and the command gets SIGTERM within one extension period;
/// it dies of it, and dibs exits 75. The run is in the history as lost, and failed; `dibs
/// check` says the job did not run to success. Before, dibs only warned, and the command ran
/// on while another host could take the lock.
#[test]
fn a_lost_lock_stops_the_command_with_sigterm_within_one_extension_period() {
    let server = RedisServer::start();
    let dir = TempDir::new("dibs-lost");
    let report = report_path(&dir, "lost");
    let mut dibs = Running::new(
        counting(&server.uri(), "lost-job", &KEPT, &report, libc::SIGTERM)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stderr = stderr_lines(&mut dibs);
    wait_for(&report, |_| true);
    let deleted = Instant::now();
    let _: i64 = server.admin().del("dibs:lost-job").unwrap();
    wait_for(&report, |r| r.count(libc::SIGTERM) > 0);
    let told = deleted.elapsed();
    assert_eq!(dibs.exit_code(), 75);
    let said: Vec<String> = stderr.iter().collect();
    println!("lost lock (dibs run): the command got SIGTERM {told:?} after the key was deleted (period {PERIOD:?})");
    assert!(
        told <= PERIOD + Duration::from_millis(300),
        "told after {told:?}: {said:?}"
    );
    assert!(
        said.iter().any(|l| l.contains("lock 'lost-job' was lost")),
        "{said:?}"
    );
    let history = support::dibs(&["history", "--redis", &server.uri(), "lost-job"]);
    let history = text(&history.stdout);
    let run = history
        .lines()
        .find(|l| l.split_whitespace().last() == Some("lost"))
        .unwrap_or_else(|| panic!("{history}"));
    assert!(run.contains("failed"), "{history}");
    let check = support::dibs(&[
        "check",
        "--redis",
        &server.uri(),
        "lost-job",
        "--within",
        "1h",
    ]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check.stdout));
}

/// Issue 30 (6): a command that goes on after SIGTERM is killed when the grace (`--on-lost`)
/// is over.
#[test]
fn a_command_that_outlives_the_grace_after_a_loss_is_killed() {
    let server = RedisServer::start();
    let dir = TempDir::new("dibs-grace");
    let report = report_path(&dir, "grace");
    let grace = Duration::from_secs(1);
    let mut flags = KEPT.to_vec();
    flags.extend(["--on-lost", "1s"]);
    // It counts SIGTERM, and ends only with a HUP, which never comes.
    let mut dibs = Running::new(
        counting(&server.uri(), "grace", &flags, &report, libc::SIGHUP)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stderr = stderr_lines(&mut dibs);
    wait_for(&report, |_| true);
    let _: i64 = server.admin().del("dibs:grace").unwrap();
    wait_for(&report, |r| r.count(libc::SIGTERM) > 0);
    let termed = Instant::now();
    assert_eq!(dibs.exit_code(), 75);
    let killed = termed.elapsed();
    let said: Vec<String> = stderr.iter().collect();
    assert!(
        killed >= grace - Duration::from_millis(50),
        "killed {killed:?} after SIGTERM"
    );
    assert!(
        killed <= grace + Duration::from_millis(500),
        "killed {killed:?} after SIGTERM"
    );
    assert!(said.iter().any(|l| l.contains("SIGKILL")), "{said:?}");
}

/// `--on-lost ignore` keeps the behaviour from before: a warning, and the command runs on, to
/// its own end and exit code.
#[test]
fn on_lost_ignore_warns_and_lets_the_command_run_on() {
    let server = RedisServer::start();
    let dir = TempDir::new("dibs-ignore");
    let report = report_path(&dir, "ignore");
    let mut flags = KEPT.to_vec();
    flags.extend(["--on-lost", "ignore"]);
    let mut dibs = Running::new(
        counting(&server.uri(), "ignored", &flags, &report, libc::SIGHUP)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stderr = stderr_lines(&mut dibs);
    let ready = wait_for(&report, |_| true);
    let _command = KilledOnPanic(-ready.group);
    let _: i64 = server.admin().del("dibs:ignored").unwrap();
    // The loss is found within one extension period; 10 s is far beyond it.
    let deadline = Instant::now() + Duration::from_secs(10);
    let warned = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = stderr.recv_timeout(left).expect("a warning on the loss");
        if line.contains("was lost") {
            break line;
        }
    };
    assert!(warned.contains("runs on"), "{warned}");
    kill(dibs.id() as i32, libc::SIGHUP);
    assert_eq!(
        dibs.exit_code(),
        128 + libc::SIGHUP,
        "the command's own end"
    );
    let seen = wait_for(&report, |r| r.count(libc::SIGHUP) > 0);
    assert_eq!(seen.count(libc::SIGTERM), 0, "{seen:?}");
}
