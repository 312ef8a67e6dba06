//! The run history, against a real redis-server: `dibs history` and `dibs check`.

// The core's test fixtures (a redis-server of the test's own, a throwaway PKI), shared.
use crate::common;
use crate::support;

use std::thread;
use std::time::Duration;

use common::RedisServer;
use support::{ops, run, text};

#[test]
fn history_and_check_tell_who_ran_a_job_and_whether_it_is_overdue() {
    let server = RedisServer::start();
    let uri = server.uri();
    let out = ops(&uri, &["check", "report", "--within", "1h"]);
    assert_eq!(out.status.code(), Some(1), "nothing recorded: overdue");
    assert!(
        text(&out.stdout).contains("no success of it is recorded"),
        "{}",
        text(&out.stdout)
    );

    let ok = run(
        &uri,
        "report-2026-12-01",
        "10s",
        &["--redis-opt", "instance-id=pod-a", "--", "true"],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    let out = ops(&uri, &["check", "report", "--within", "1h"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).starts_with("ok: job 'report' ran "),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).contains("pod-a"), "{}", text(&out.stdout));

    let failed = run(
        &uri,
        "report-2026-12-02",
        "10s",
        &["--", "sh", "-c", "exit 3"],
    );
    assert_eq!(failed.status.code(), Some(3));
    thread::sleep(Duration::from_millis(1_100));
    // The success is over a second old, and a failure came since.
    let out = ops(&uri, &["check", "report", "--within", "1s"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let said = text(&out.stdout);
    assert!(
        said.starts_with("overdue: job 'report' has not run to success within 1000 ms"),
        "{said}"
    );
    assert!(said.contains("its last success was"), "{said}");
    assert!(
        said.contains("its latest record") && said.contains("task failed"),
        "{said}"
    );
    assert_eq!(
        ops(&uri, &["check", "report", "--within", "1h"])
            .status
            .code(),
        Some(0)
    );

    let out = ops(&uri, &["history", "report"]);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    assert_eq!(
        lines[0], "job 'report': the last 2 recorded, newest first",
        "{lines:?}"
    );
    assert!(lines[1].starts_with("RECORDED (UTC)"), "{lines:?}");
    assert!(
        lines[2].contains("report-2026-12-02") && lines[2].contains("failed"),
        "{lines:?}"
    );
    assert!(
        lines[3].contains("report-2026-12-01") && lines[3].contains("pod-a ("),
        "{lines:?}"
    );
    assert!(
        lines[3].contains(" ok ") && lines[3].ends_with("released"),
        "{lines:?}"
    );

    let out = ops(&uri, &["history", "nothing"]);
    assert_eq!(
        text(&out.stdout),
        "no run of job or lock 'nothing' is recorded\n"
    );
    let out = ops(&uri, &["check", "report"]);
    assert_eq!(out.status.code(), Some(64), "--within is required");
}

/// Issue 29 (2): `dibs check` answers for exactly the job or lock it is given, and says which.
/// Before, `backup-db1` was filed under job `backup` (its digit segment cut), so `check backup`
/// passed although `backup-db2` never ran, and `check backup-db1` failed.
#[test]
fn check_and_history_answer_for_exactly_the_job_or_lock_named() {
    let server = RedisServer::start();
    let uri = server.uri();
    let ok = run(&uri, "backup-db1", "10s", &["--", "true"]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    let check = |name: &str| ops(&uri, &["check", name, "--within", "1h"]);
    let out = check("backup-db1");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).starts_with("ok: job 'backup-db1' ran "));
    for never in ["backup", "backup-db2"] {
        let out = check(never);
        assert_eq!(out.status.code(), Some(1), "{never}: {}", text(&out.stdout));
        assert!(
            text(&out.stdout).contains(&format!("overdue: job '{never}'")),
            "{}",
            text(&out.stdout)
        );
    }

    // A per-tick name: its job is `report`; asked by its own name, the lock of that job.
    let ok = run(&uri, "report-2026-12-01", "10s", &["--", "true"]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    let out = check("report-2026-12-01");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).starts_with("ok: lock 'report-2026-12-01' of job 'report' ran "),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(check("report").status.code(), Some(0));
    assert_eq!(check("report-2026-12-02").status.code(), Some(1));
    let history = text(&ops(&uri, &["history", "report-2026-12-01"]).stdout);
    assert!(
        history.starts_with("lock 'report-2026-12-01' of job 'report': the last 1 recorded"),
        "{history}"
    );

    // A tick run, the CLI's executeOnce: recorded under the job named, its lock kept for all of
    // --at-most, so that another host's cron firing the same tick later skips it.
    let tick = |cmd: &str| {
        run(
            &uri,
            "nightly-report",
            "10s",
            &["--tick", "2026-12-04", "--", "sh", "-c", cmd],
        )
    };
    let first = tick("echo ran");
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    assert_eq!(text(&first.stdout), "ran\n");
    let again = tick("echo twice");
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(text(&again.stdout), "", "the tick ran once");
    let ttl = server.pttl("dibs:nightly-report@2026-12-04");
    assert!((8_000..=10_000).contains(&ttl), "kept as done: {ttl}");
    let out = check("nightly-report");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("nightly-report@2026-12-04"));
    let out = check("nightly-report@2026-12-04");
    assert!(
        text(&out.stdout)
            .starts_with("ok: lock 'nightly-report@2026-12-04' of job 'nightly-report'"),
        "{}",
        text(&out.stdout)
    );
}

/// Issue 29 (1): when the history had to drop a job's runs to stay within its jobs, a job with no
/// record may have been among them: `dibs check` says it cannot tell (exit 3), never overdue.
#[test]
fn check_cannot_tell_a_dropped_history_from_a_job_that_never_ran_and_says_so() {
    let server = RedisServer::start();
    let uri = server.uri();
    let locker = dibs::Locker::new(dibs::ConnSpec::from_uri(&uri).unwrap()).unwrap();
    for n in 0..=dibs::HISTORY_JOBS + 20 {
        let params = dibs::LockParams::from_millis(&format!("order-{n}"), 10_000, 0).unwrap();
        let _ = locker.acquire(&params).unwrap().won().unwrap().release();
    }
    let out = ops(&uri, &["check", "order-0", "--within", "1h"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    let said = text(&out.stdout);
    assert!(
        said.starts_with("unknown: no success of job 'order-0'"),
        "{said}"
    );
    // Issue 43: where the runs dropped were its own, it says so, and when.
    assert!(
        said.contains("its own runs were dropped from the history at"),
        "{said}"
    );
    // A job that never ran may have been dropped too, as far as the history can tell.
    let never = ops(&uri, &["check", "invoice-export", "--within", "1h"]);
    assert_eq!(never.status.code(), Some(3), "{}", text(&never.stdout));
    assert!(
        text(&never.stdout).contains("dropped the least recently run one's runs"),
        "{}",
        text(&never.stdout)
    );
    let recent = ops(&uri, &["check", "order-1020", "--within", "1h"]);
    assert_eq!(recent.status.code(), Some(0), "{}", text(&recent.stdout));
}

/// Issue 33 (2): the dead-man's switch's further rules, each with its exit code: a success too
/// short to be trusted (4), a run holding its lock too long (5), and the grace a run that started
/// has to finish before its job is overdue (0 while within it, 1 past it).
#[test]
fn check_flags_a_suspect_success_a_run_too_long_and_gives_a_started_run_its_grace() {
    let server = RedisServer::start();
    let uri = server.uri();
    let ok = run(&uri, "export", "10s", &["--", "sleep", "0.2"]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    let check = |args: &[&str]| {
        let mut all = vec!["check", "export", "--within", "1h"];
        all.extend_from_slice(args);
        ops(&uri, &all)
    };
    assert_eq!(check(&[]).status.code(), Some(0));
    let out = check(&["--min-duration", "10s"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).starts_with("suspect: job 'export' ran "),
        "{}",
        text(&out.stdout)
    );
    // It took 200 ms or more: not suspect below that.
    assert_eq!(check(&["--min-duration", "150ms"]).status.code(), Some(0));

    // A run of another job that holds its lock now, and has never succeeded.
    let holder = support::Running::new(
        std::process::Command::new(env!("CARGO_BIN_EXE_dibs"))
            .args([
                "run",
                "--redis",
                &uri,
                "--lock",
                "backup",
                "--at-most",
                "60s",
            ])
            .args(["--", "sleep", "30"])
            .spawn()
            .unwrap(),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !server.exists("dibs:backup") {
        assert!(
            std::time::Instant::now() < deadline,
            "dibs run took no lock"
        );
        thread::sleep(Duration::from_millis(10));
    }
    let backup = |args: &[&str]| {
        let mut all = vec!["check", "backup", "--within", "1h"];
        all.extend_from_slice(args);
        ops(&uri, &all)
    };
    let out = backup(&["--max-duration", "1ms"]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout)
            .starts_with("too long: job 'backup' has a run holding its lock longer than"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        backup(&["--max-duration", "1h"]).status.code(),
        Some(1),
        "no success: overdue"
    );
    let out = backup(&["--grace-after-start", "1h"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).starts_with("running: job 'backup' has not run to success within"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        backup(&["--grace-after-start", "1ms"]).status.code(),
        Some(1),
        "past its grace, a running job that never succeeded is overdue"
    );
    // A finished run's done-mark is no run: a tick's lock kept after its release.
    drop(holder);
    let tick = run(
        &uri,
        "nightly",
        "60s",
        &["--tick", "2026-12-05", "--", "true"],
    );
    assert_eq!(tick.status.code(), Some(0), "{}", text(&tick.stderr));
    let out = ops(
        &uri,
        &[
            "check",
            "nightly",
            "--within",
            "1h",
            "--max-duration",
            "1ms",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// A scan for running locks cut short by `--budget` (here among 100,000 other keys) settles no
/// rule that a run it missed could change: "ok" under `--max-duration` and "overdue" under
/// `--grace-after-start` become unknown (3). Before, they exited 0 and 1, a guess said as a
/// proof. A complete scan answers as before.
#[test]
fn check_on_a_scan_cut_short_says_unknown_where_a_missed_run_could_change_the_answer() {
    let server = RedisServer::start();
    let uri = server.uri();
    let mut admin = server.admin();
    let _: () = redis::cmd("EVAL")
        .arg("for i = 1, 100000 do redis.call('SET', 'cache:' .. i, 'x') end")
        .arg(0)
        .query(&mut admin)
        .unwrap();
    let ok = run(&uri, "export", "10s", &["--", "true"]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    let failed = run(&uri, "sync", "10s", &["--", "false"]);
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed.stderr));
    let check = |job: &str, rule: &str, budget: &str| {
        ops(
            &uri,
            &[
                "check", job, "--within", "1h", rule, "1h", "--budget", budget,
            ],
        )
    };

    let out = check("export", "--max-duration", "1ms");
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(said.starts_with("unknown: job 'export': it ran "), "{said}");
    assert!(
        said.contains("but a run holding its lock longer than --max-duration 1 h 0 min may be missing; the scan for its running locks was partial (--budget 1 ms)"),
        "{said}"
    );
    let out = check("sync", "--grace-after-start", "1ms");
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(
        said.starts_with("unknown: job 'sync': it has not run to success within 1 h 0 min; no success of it is recorded, but a run started within the grace after start (1 h 0 min) may be missing; the scan"),
        "{said}"
    );

    assert_eq!(
        check("export", "--max-duration", "60s").status.code(),
        Some(0)
    );
    assert_eq!(
        check("sync", "--grace-after-start", "60s").status.code(),
        Some(1)
    );
    // A suspect success is proven whatever the scan missed.
    let out = ops(
        &uri,
        &[
            "check",
            "export",
            "--within",
            "1h",
            "--min-duration",
            "1h",
            "--max-duration",
            "1h",
            "--budget",
            "1ms",
        ],
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stdout));
}

/// A job's running locks behind 1,000 others that share its name as a prefix (a lock per
/// tenant, `sync-tenant-N`, sorts before the job's tick `sync@...`): the listing was cut at 1,000
/// names before the job's own were kept, so a hung run passed as overdue, not too long, and a
/// run within its grace after start as overdue too.
#[test]
fn check_finds_a_running_lock_of_the_job_behind_a_thousand_others() {
    let server = RedisServer::start();
    let uri = server.uri();
    let mut admin = server.admin();
    // Held locks as dibs writes them (`token;host;pid;acquired-at`, a fresh v4 token).
    let hold = |admin: &mut redis::Connection, name: &str, age_ms: u64| {
        let now: u64 = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let value = format!(
            "0123abcd-89ab-4cde-8f01-23456789abcd;host-1;42;{}",
            now - age_ms
        );
        let _: () = redis::cmd("SET")
            .arg(format!("dibs:{name}"))
            .arg(value)
            .arg("PX")
            .arg(3_600_000)
            .query(admin)
            .unwrap();
    };
    for n in 0..1_000 {
        hold(&mut admin, &format!("sync-tenant-{n}"), 1_000);
    }
    let failed = run(&uri, "sync", "10s", &["--", "false"]);
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed.stderr));
    // A run of the job's tick, hung for 2 hours.
    hold(&mut admin, "sync@2026-12-06", 7_200_000);
    let check = |rule: &str| ops(&uri, &["check", "sync", "--within", "1h", rule, "1h"]);
    let out = check("--max-duration");
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("sync@2026-12-06"),
        "{}",
        text(&out.stdout)
    );
    // A run of it that started a minute ago, within its grace after start: running.
    hold(&mut admin, "sync@2026-12-06", 60_000);
    let out = check("--grace-after-start");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// Issue 43, item 6: what Redis holds is shown escaped. A key whose name holds a newline, an
/// ESC sequence and a bidi override, a holder whose host does too, and a history entry copied
/// from a real run with such a host (raw `SET` and `XADD`, as anyone who may write under the
/// prefix can) forge no row of `dibs locks` or `dibs history`, and send no control byte to the
/// terminal. Before, they were printed as they were.
#[test]
fn what_redis_holds_forges_no_row_and_reaches_no_terminal() {
    let server = RedisServer::start();
    let uri = server.uri();
    let mut admin = server.admin();
    let forged = "evil\nnightly-report  pod-9 pid 1\u{1b}[2J\u{202e}";
    let holder = format!(
        "{};ho\u{1b}]0;owned\u{7}st\nforged row;1;{}",
        "6f1d4c1e-1d2b-4c3e-9f6a-0a1b2c3d4e5f",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    let _: () = redis::cmd("SET")
        .arg(format!("dibs:{forged}"))
        .arg(&holder)
        .arg("EX")
        .arg(600)
        .query(&mut admin)
        .unwrap();
    let ok = run(&uri, "report", "1m", &["--", "true"]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    let stream = "dibs:\u{1f}{history}:report";
    let entries: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
        .arg(stream)
        .arg("-")
        .arg("+")
        .query(&mut admin)
        .unwrap();
    let real = &entries[0].1[0].1;
    let host = real.split(';').nth(7).unwrap().to_owned();
    let copy = real.replacen(&host, "h\nreport  ok  forged\u{1b}[31m\u{2066}", 1);
    let _: String = redis::cmd("XADD")
        .arg(stream)
        .arg("*")
        .arg("run")
        .arg(&copy)
        .query(&mut admin)
        .unwrap();

    for (args, rows) in [(&["locks"][..], 3), (&["history", "report"][..], 4)] {
        let out = ops(&uri, args);
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
        assert!(
            !stdout
                .chars()
                .any(|c| c.is_control() && c != '\n' || c == '\u{202e}' || c == '\u{2066}'),
            "{stdout:?}"
        );
        assert!(!stdout.contains("forged row\n") && !stdout.contains("\nreport  ok  forged"));
        assert!(
            stdout.contains("\\n") && stdout.contains("\\e["),
            "{stdout}"
        );
        assert!(stdout.lines().count() <= rows, "{args:?}: {stdout}");
    }
}
