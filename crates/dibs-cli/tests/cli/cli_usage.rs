//! The `dibs` command line's usage: clap's help and errors, dibs's exit codes (64 for bad
//! usage), and the connection options.

// The core's test fixtures (a redis-server of the test's own, a throwaway PKI), shared.
use crate::common;
use crate::support;

use std::process::Command;

use common::RedisServer;
use support::{dibs, text};

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

/// Issue 42 (13): `dibs check --within 0s` called a job that had just succeeded overdue (exit
/// 1), and `--budget 0s` made every listing partial (exit 3) after scanning no key. Now a 0 is a
/// usage error (64) that names the option, before any network I/O (the same arguments against a
/// port nothing listens on exit 64, not 69).
#[test]
fn a_duration_of_0_is_bad_usage_naming_its_option() {
    let server = RedisServer::start();
    let uri = server.uri();
    let ran = dibs(&[
        "run",
        "--redis",
        &uri,
        "--lock",
        "zero",
        "--at-most",
        "1m",
        "--",
        "true",
    ]);
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    for (args, option) in [
        (&["check", "zero", "--within", "0s"][..], "--within"),
        (
            &["check", "zero", "--within", "1h", "--budget", "0s"],
            "--budget",
        ),
        (
            &["check", "zero", "--within", "1h", "--min-duration", "0ms"],
            "--min-duration",
        ),
        (
            &["check", "zero", "--within", "1h", "--max-duration", "0s"],
            "--max-duration",
        ),
        (
            &[
                "check",
                "zero",
                "--within",
                "1h",
                "--grace-after-start",
                "0s",
            ],
            "--grace-after-start",
        ),
        (&["locks", "--budget", "0s"], "--budget"),
        (
            &["run", "--lock", "zero", "--at-most", "0s", "--", "true"],
            "--at-most",
        ),
    ] {
        for redis in [uri.as_str(), "redis://127.0.0.1:1"] {
            let mut all = args.to_vec();
            all.extend_from_slice(&["--redis", redis]);
            let out = dibs(&all);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(64), "{args:?}: {err}");
            assert!(
                err.contains(&format!("for '{option} <DURATION>': must be more than 0")),
                "{args:?}: {err}"
            );
        }
    }
    let check = dibs(&["check", "zero", "--within", "1h", "--redis", &uri]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stdout));
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
