//! The `dibs` command line against a real redis-server.

// The core's test fixtures (a redis-server of the test's own, a throwaway PKI), shared.
#[path = "../../../tests/common/mod.rs"]
mod common;
mod support;

use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::RedisServer;
use redis::Commands;
use support::{dibs, run, text};

#[test]
fn runs_the_command_when_it_wins_and_exits_with_its_code() {
    let server = RedisServer::start();
    let uri = server.uri();
    let out = run(&uri, "cron", "10s", &["--", "sh", "-c", "echo ran; exit 7"]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "ran\n");
    assert!(!server.exists("dibs:cron"), "released after the command");

    let out = run(&uri, "cron", "10s", &["--at-least", "5s", "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ttl: i64 = server.admin().pttl("dibs:cron").unwrap();
    assert!((4_000..=5_000).contains(&ttl), "atLeast keeps it: {ttl}");
}

#[test]
fn a_keep_alive_schedule_that_cannot_hold_is_warned_before_the_command_runs() {
    let server = RedisServer::start();
    let uri = server.uri();
    // The command prints after dibs's warning, which must come first: it is said at acquire.
    let out = run(
        &uri,
        "tight",
        "2s",
        &[
            "--keep-alive",
            "--redis-opt",
            "timeout-ms=1000",
            "--",
            "sh",
            "-c",
            "echo ran >&2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let warning = "dibs: warning: lock 'tight': with keep-alive, atMost 2000 ms is shorter than 3 x the 3000 ms";
    assert!(
        stderr.starts_with(warning) && stderr.ends_with("ran\n"),
        "{stderr}"
    );
    let out = run(
        &uri,
        "roomy",
        "9s",
        &[
            "--keep-alive",
            "--redis-opt",
            "timeout-ms=1000",
            "--",
            "true",
        ],
    );
    assert_eq!(
        text(&out.stderr),
        "",
        "a schedule that holds is not warned about"
    );
}

#[test]
fn skips_with_the_chosen_exit_code_and_a_line_on_stderr() {
    let server = RedisServer::start();
    let _: () = server.admin().set_ex("dibs:busy", "someone", 60).unwrap();
    let uri = server.uri();
    let out = run(&uri, "busy", "1m", &["--", "sh", "-c", "echo ran"]);
    assert_eq!(out.status.code(), Some(0), "default skip exit code");
    assert_eq!(text(&out.stdout), "", "the command must not run");
    assert!(
        text(&out.stderr).contains("lock 'busy' is held by another holder"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&uri, "busy", "1m", &["--skip-exit", "75", "--", "true"]);
    assert_eq!(out.status.code(), Some(75), "{}", text(&out.stderr));
}

#[test]
fn status_prints_the_holder_and_the_remaining_ttl() {
    let server = RedisServer::start();
    let uri = server.uri();
    let out = dibs(&["status", "--redis", &uri, "--lock", "s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "lock 's' is free\n");

    let mut holder = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args([
            "run",
            "--redis",
            &uri,
            "--lock",
            "s",
            "--at-most",
            "10m",
            "--",
            "sleep",
            "3",
        ])
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !server.exists("dibs:s") {
        assert!(started.elapsed() < Duration::from_secs(5));
        thread::sleep(Duration::from_millis(20));
    }
    let out = dibs(&["status", "--redis", &uri, "--lock", "s"]);
    let line = text(&out.stdout);
    assert!(line.contains(&format!("pid {}", holder.id())), "{line}");
    assert!(
        line.contains("expires in 9 min") || line.contains("expires in 10 min"),
        "{line}"
    );
    holder.kill().unwrap();
    let _ = holder.wait();
}

#[test]
fn bad_usage_exits_64_with_the_usage_and_conn_options_work() {
    let out = dibs(&["run", "--lock", "x", "--at-most", "soon", "--", "true"]);
    assert_eq!(out.status.code(), Some(64), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    // Clap's form: the error, then where to find the usage (after a refused value; the usage
    // itself after other errors).
    assert!(
        err.starts_with(
            "error: invalid value 'soon' for '--at-most <DURATION>': not a whole number"
        ) && err.contains("For more information, try '--help'."),
        "{err}"
    );
    let out = dibs(&["run", "--lock", "x"]);
    assert_eq!(out.status.code(), Some(64), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("error: the following required arguments were not provided:")
            && err.contains("\nUsage: dibs run "),
        "{err}"
    );

    let out = dibs(&[
        "run",
        "--redis",
        "redis://127.0.0.1:1",
        "--lock",
        "",
        "--at-most",
        "1s",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(64), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("lockName must not be empty"));

    let server = RedisServer::start();
    let out = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args([
            "run",
            "--lock",
            "p",
            "--at-most",
            "10s",
            "--at-least",
            "10s",
            "--redis-opt",
            "key-prefix=app:",
        ])
        .args(["--", "true"])
        .env("DIBS_REDIS", server.uri())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(server.exists("app:p"), "key prefix from --redis-opt");

    let out = dibs(&[
        "run",
        "--redis",
        "redis://:hunter2@127.0.0.1:1",
        "--lock",
        "d",
        "--at-most",
        "1s",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(69), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("hunter2"));
}

/// Clap's help and errors, with dibs's exit codes: 0 for the help, 64 (not clap's 2) for bad
/// usage.
#[test]
fn help_exits_0_and_bad_usage_64_in_clap_s_form() {
    for args in [
        &["--help"][..],
        &["run", "--help"],
        &["help", "check"],
        &["-V"],
    ] {
        let out = dibs(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stderr), "", "{args:?}");
    }
    let help = text(&dibs(&["run", "--help"]).stdout);
    for said in [
        "Usage: dibs run [OPTIONS] --redis <CONN> --lock <NAME> --at-most <DURATION> -- <CMD>...",
        "rediss://, unix:///path.sock",
        "[env: DIBS_REDIS]",
        "500ms, 30s, 10m, 1h, 2d",
        "--on-lost <GRACE|ignore>",
        "64 bad usage",
        "127 CMD could not be started",
    ] {
        assert!(help.contains(said), "{said}: {help}");
    }
    for args in [&["bogus"][..], &[], &["locks", "--redis", "r", "--", "x"]] {
        let out = dibs(args);
        assert_eq!(out.status.code(), Some(64), "{args:?}");
        assert_eq!(text(&out.stdout), "", "{args:?}");
        assert!(text(&out.stderr).contains("Usage: dibs"), "{args:?}");
    }
}

#[test]
fn the_command_gets_neither_dibs_redis_nor_its_password() {
    let server = RedisServer::start_with(&["--requirepass", "s3cret-pw"]);
    let uri = server.uri().replace("redis://", "redis://:s3cret-pw@");
    let out = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args(["run", "--lock", "env", "--at-most", "10s", "--", "env"])
        .env("DIBS_REDIS", &uri)
        .env("DIBS_TEST_OTHER", "kept")
        .output()
        .unwrap();
    // It ran, so dibs itself read DIBS_REDIS and its password.
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let env = text(&out.stdout);
    assert!(env.contains("DIBS_TEST_OTHER=kept\n"), "{env}");
    assert!(!env.contains("DIBS_REDIS"), "{env}");
    assert!(!env.contains("s3cret-pw"), "{env}");
    assert!(!server.exists("dibs:env"), "released");
}

#[test]
fn the_command_gets_the_fencing_token_of_its_lock_greater_each_run() {
    let server = RedisServer::start();
    let token = || {
        let out = run(
            &server.uri(),
            "fenced",
            "10s",
            &["--", "sh", "-c", "echo $DIBS_FENCING_TOKEN"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout).trim().parse::<u64>().unwrap()
    };
    let (first, second) = (token(), token());
    assert!(first > 0 && second > first, "{first} then {second}");
}

/// `dibs ARGS --redis URI`.
fn ops(uri: &str, args: &[&str]) -> Output {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--redis", uri]);
    dibs(&all)
}

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

#[test]
fn locks_lists_the_held_locks_and_release_forces_one_into_the_history() {
    let server = RedisServer::start();
    let uri = server.uri();
    assert_eq!(
        text(&ops(&uri, &["locks"]).stdout),
        "no lock held (matching '*')\n"
    );
    let holder = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args([
            "run",
            "--redis",
            &uri,
            "--lock",
            "stuck-job",
            "--at-most",
            "60s",
            "--",
            "sleep",
            "5",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !server.exists("dibs:stuck-job") {
        assert!(Instant::now() < deadline, "the holder never took the lock");
        thread::sleep(Duration::from_millis(20));
    }
    let out = ops(&uri, &["locks"]);
    let listed = text(&out.stdout);
    assert!(listed.starts_with("NAME "), "{listed}");
    assert!(
        listed.contains(&format!("stuck-job  {} pid {}", hostname(), holder.id())),
        "{listed}"
    );
    assert!(!listed.contains("TOKEN"), "no token unless asked: {listed}");
    let value: String = server.admin().get("dibs:stuck-job").unwrap();
    let token = &value[..36];
    assert!(!listed.contains(token), "{listed}");
    let with_tokens = text(&ops(&uri, &["locks", "stuck*", "--show-tokens"]).stdout);
    assert!(with_tokens.contains(token), "{with_tokens}");

    // Asked first: a "no" touches nothing.
    let release = |answer: &str, extra: &[&str]| {
        let mut args = vec!["release", "stuck-job", "--redis", &uri];
        args.extend_from_slice(extra);
        let mut child = Command::new(env!("CARGO_BIN_EXE_dibs"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(answer.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let no = release("n\n", &[]);
    assert_eq!(no.status.code(), Some(1));
    assert!(
        text(&no.stderr).contains("release lock 'stuck-job', held by"),
        "{}",
        text(&no.stderr)
    );
    assert!(server.exists("dibs:stuck-job"));
    // A token that is not the holder's: left alone.
    let wrong = format!(
        "{}{}",
        &token[..35],
        if token.ends_with('0') { '1' } else { '0' }
    );
    let other = release("", &["--token", &wrong]);
    assert_eq!(other.status.code(), Some(1), "{}", text(&other.stdout));
    assert!(server.exists("dibs:stuck-job"));
    let yes = release("y\n", &[]);
    assert_eq!(yes.status.code(), Some(0), "{}", text(&yes.stderr));
    assert!(text(&yes.stdout).contains("recorded in its job's history as forced by"));
    assert!(!server.exists("dibs:stuck-job"));
    let again = release("", &["--yes"]);
    assert_eq!(
        text(&again.stdout),
        "lock 'stuck-job' is not held; nothing to release\n"
    );

    let holder = holder.wait_with_output().unwrap();
    assert!(
        text(&holder.stderr).contains("was no longer ours"),
        "{}",
        text(&holder.stderr)
    );
    let history = text(&ops(&uri, &["history", "stuck-job"]).stdout);
    let lines: Vec<&str> = history.lines().collect();
    assert_eq!(lines.len(), 4, "{history}");
    assert!(lines[2].ends_with("no-longer-ours"), "{history}");
    assert!(lines[3].contains("forced by "), "{history}");
    assert!(!history.contains(token), "{history}");
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
        let _ = locker.acquire(&params).unwrap().unwrap().release();
    }
    let out = ops(&uri, &["check", "order-0", "--within", "1h"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    let said = text(&out.stdout);
    assert!(
        said.starts_with("unknown: no success of job 'order-0'"),
        "{said}"
    );
    assert!(
        said.contains("dropped the least recently run one's runs"),
        "{said}"
    );
    let recent = ops(&uri, &["check", "order-1020", "--within", "1h"]);
    assert_eq!(recent.status.code(), Some(0), "{}", text(&recent.stdout));
}

/// Issue 29 (3): `dibs locks` on a server whose keyspace is mostly other keys (a cache sharing
/// the server: 1,000,000 of them) lists every held lock, or says that its list is partial and
/// exits 3. Before, the scan stopped after 100 `SCAN` calls and said "no lock held" while 5 were.
#[test]
fn locks_among_a_million_other_keys_lists_every_held_lock_or_says_it_is_partial() {
    let server = RedisServer::start();
    let uri = server.uri();
    let mut admin = server.admin();
    for batch in 0..10 {
        let _: () = redis::cmd("EVAL")
            .arg("for i = 1, 100000 do redis.call('SET', 'cache:' .. ARGV[1] .. ':' .. i, 'x') end")
            .arg(0)
            .arg(batch)
            .query(&mut admin)
            .unwrap();
    }
    let locker = dibs::Locker::new(dibs::ConnSpec::from_uri(&uri).unwrap()).unwrap();
    let held: Vec<_> = (1..=5)
        .map(|n| {
            let params = dibs::LockParams::from_millis(&format!("held-{n}"), 60_000, 0).unwrap();
            locker.acquire(&params).unwrap().unwrap()
        })
        .collect();
    let started = Instant::now();
    let out = ops(&uri, &["locks"]);
    let took = started.elapsed();
    let listed = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{listed}");
    for n in 1..=5 {
        assert!(listed.contains(&format!("held-{n} ")), "{listed}");
    }
    assert!(!listed.contains("partial"), "{listed}");
    eprintln!("dibs locks over 1,000,005 keys: {} ms", took.as_millis());

    let out = ops(&uri, &["locks", "--budget", "20ms"]);
    let partial = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{partial}");
    assert!(partial.contains("partial: scanned about "), "{partial}");
    assert!(partial.contains(" of 1000005 keys"), "{partial}");
    assert!(!partial.contains("no lock held"), "{partial}");
    for lease in held {
        let _ = lease.release();
    }
}

/// Issue 30 (5): a value under the prefix that dibs did not write, such as the one that made
/// `dibs locks` and `dibs status` panic (exit 101), is shown as such; the value is never printed.
#[test]
fn a_foreign_value_under_the_prefix_is_shown_as_a_value_dibs_did_not_write() {
    let server = RedisServer::start();
    let uri = server.uri();
    let value = "0123456789abcdef0123456789abcdef;hhé;1;2";
    let mut admin = server.admin();
    let _: () = admin.set("dibs:foreign", value).unwrap();
    let _: () = admin
        .set(b"dibs:\xffbytes".as_slice(), b"\xfe\xff;x".as_slice())
        .unwrap();
    let status = dibs(&["status", "--redis", &uri, "--lock", "foreign"]);
    assert_eq!(status.status.code(), Some(0), "{}", text(&status.stderr));
    let said = text(&status.stdout);
    assert!(
        said.contains("held (by a value dibs did not write)"),
        "{said}"
    );
    let locks = ops(&uri, &["locks", "--show-tokens"]);
    assert_eq!(locks.status.code(), Some(0), "{}", text(&locks.stderr));
    let listed = text(&locks.stdout);
    assert!(
        listed.contains("foreign") && listed.contains("(a value dibs did not write)"),
        "{listed}"
    );
    assert!(
        listed.contains("\u{fffd}bytes"),
        "a key of other bytes, shown: {listed}"
    );
    for out in [&status, &locks] {
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(
            !all.contains("hhé") && !all.contains("0123456789abcdef0123"),
            "{all}"
        );
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_owned()
}
