//! The `dibs` command line's usage: clap's help and errors, dibs's exit codes (64 for bad
//! usage), and the connection options.

// The core's test fixtures (a redis-server of the test's own, a throwaway PKI), shared.
#[path = "../../../tests/common/mod.rs"]
mod common;
mod support;

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
