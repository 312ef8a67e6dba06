//! `dibs run` against a real redis-server: the command runs where the lock is won, with its exit
//! code, its fencing token and not dibs's connection; a held lock skips it.

// The core's test fixtures (a redis-server of the test's own, a throwaway PKI), shared.
use crate::common;
use crate::support;

use std::process::Command;

use common::RedisServer;
use redis::Commands;
use support::{run, text};

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

/// A tick's skip names the lock that is held, `NAME@TICK`, not `NAME` (which nobody holds): the
/// robustness harness's cron hosts logged "lock 'h-run' is held by another holder".
#[test]
fn a_skipped_tick_names_the_tick_lock_that_is_held() {
    let server = RedisServer::start();
    let uri = server.uri();
    let first = run(
        &uri,
        "nightly",
        "1m",
        &["--tick", "2026-12-07", "--", "true"],
    );
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let again = run(
        &uri,
        "nightly",
        "1m",
        &["--tick", "2026-12-07", "--", "sh", "-c", "echo ran"],
    );
    assert_eq!(text(&again.stdout), "", "the tick ran already");
    assert!(
        text(&again.stderr).contains("lock 'nightly@2026-12-07' is held by another holder"),
        "{}",
        text(&again.stderr)
    );
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

/// Issue 42, item 10, at the command line: a user whose ACL lacks `+time` gets fencing token 0,
/// and `dibs run` says why on stderr, once, before the command runs (the library warns the same
/// way, through its lease's warning).
#[test]
fn a_server_that_refuses_time_is_warned_about_before_the_command_runs() {
    let server = RedisServer::start();
    let _: () = redis::cmd("ACL")
        .arg(&[
            "SETUSER", "cron", "on", ">cron-pw", "~*", "&*", "+@all", "-time",
        ])
        .query(&mut server.admin())
        .unwrap();
    let uri = server.uri().replace("redis://", "redis://cron:cron-pw@");
    let out = run(
        &uri,
        "untimed",
        "10s",
        &["--", "sh", "-c", "echo token=$DIBS_FENCING_TOKEN >&2"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let warning =
        "refused TIME, so every fencing token is 0 and a write guarded by it is refused, \
                   and catch-up cannot check this instance's clock: grant +time";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("dibs: warning: ") && stderr.ends_with("token=0\n"),
        "{stderr}"
    );
    assert!(!stderr.contains("cron-pw"), "{stderr}");
    assert!(!server.exists("dibs:untimed"), "released");
}

/// The attack on issue 44's change: a tick or a lock name with a right-to-left override (U+202E,
/// which a lock name may hold) was printed raw in the skip line, turning what follows it around
/// on the terminal; it goes out escaped, as every other line of the CLI does.
#[test]
fn a_skip_line_escapes_what_the_terminal_would_act_on() {
    let server = RedisServer::start();
    let uri = server.uri();
    let tick = "2026\u{202e}-12-07";
    let first = run(
        &uri,
        "report\u{202e}",
        "1m",
        &["--tick", tick, "--", "true"],
    );
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let again = run(
        &uri,
        "report\u{202e}",
        "1m",
        &["--tick", tick, "--", "true"],
    );
    let said = text(&again.stderr);
    assert!(said.contains("is held by another holder"), "{said}");
    assert!(!said.contains('\u{202e}'), "printed raw: {said:?}");
}
