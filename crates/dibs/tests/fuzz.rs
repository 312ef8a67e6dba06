//! Property-based fuzzing of everything that reads caller input: the conn-spec parser (URIs and
//! maps) and lock-argument validation. Neither may panic, hang or leak a password into a message.
//!
//! Plain `cargo test` runs 2,000 cases per target; `scripts/test.sh` runs 150,000 (about a
//! minute). For a longer run:
//! `DIBS_FUZZ_CASES=2000000 cargo test --release -p dibs --test fuzz`.

use std::time::{Duration, Instant};

use dibs::{ConnSpec, Error, LockParams, SpecValue};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn cases() -> u32 {
    std::env::var("DIBS_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000)
}

fn config() -> Config {
    let cases = cases();
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// A parse must take microseconds; a slow one hints at a pathological loop.
fn timed<T>(f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = f();
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "took {:?}",
        started.elapsed()
    );
    out
}

const SECRET: &str = "Pw9-zq7-Kx3";

/// URIs built from plausible pieces, and plain noise.
fn uri() -> impl Strategy<Value = String> {
    let scheme = prop_oneof![
        Just("redis"),
        Just("rediss"),
        Just("valkey"),
        Just("valkeys"),
        Just("unix"),
        Just("redis+unix"),
        Just("http"),
        Just("REDIS"),
        Just(""),
    ];
    let user = prop_oneof![
        Just(String::new()),
        "[a-z%:@/#?]{0,8}".prop_map(String::from)
    ];
    let host = prop_oneof![
        Just("127.0.0.1".to_owned()),
        Just("[::1]".to_owned()),
        Just("[::1".to_owned()),
        "[a-z0-9.:%\\[\\]-]{0,12}".prop_map(String::from),
    ];
    let port = prop_oneof![
        Just(String::new()),
        "[0-9]{1,6}".prop_map(|p| format!(":{p}")),
        ":[^/]{0,4}".prop_map(String::from)
    ];
    let path = prop_oneof![
        Just(String::new()),
        "/[0-9a-z-]{0,4}".prop_map(String::from),
        "[/?#&=a-z0-9%]{0,12}".prop_map(String::from)
    ];
    let structured = (scheme, user, host, port, path).prop_map(|(s, u, h, p, path)| {
        let auth = if u.is_empty() {
            format!(":{SECRET}@")
        } else {
            format!("{u}:{SECRET}@")
        };
        format!("{s}://{auth}{h}{p}{path}")
    });
    prop_oneof![
        structured,
        any::<String>(),
        "[ -~]{0,40}".prop_map(String::from)
    ]
}

fn value() -> impl Strategy<Value = SpecValue> {
    let leaf = prop_oneof![
        Just(SpecValue::Null),
        any::<bool>().prop_map(SpecValue::Bool),
        any::<i128>().prop_map(SpecValue::Int),
        (0i128..70_000).prop_map(SpecValue::Int),
        ".{0,12}".prop_map(SpecValue::Str),
        "[0-9]{1,6}".prop_map(SpecValue::Str),
        Just(SpecValue::Str(SECRET.to_owned())),
        "[a-z.]{1,20}".prop_map(SpecValue::Other),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop::collection::vec((key(), inner), 0..6).prop_map(SpecValue::Map)
    })
}

fn key() -> impl Strategy<Value = String> {
    let known = prop::sample::select(vec![
        "uri",
        "host",
        "port",
        "username",
        "password",
        "db",
        "timeout-ms",
        "conn-timeout-ms",
        "read-timeout-ms",
        "idle-timeout-ms",
        "ssl",
        "ca-cert",
        "key-prefix",
        "spec",
        "pool",
        "max-total",
        "max-idle",
        "max-total-per-key",
        "max-idle-per-key",
    ]);
    prop_oneof![
        known.clone().prop_map(String::from),
        known.prop_map(|k| format!(":{k}")),
        ".{0,10}".prop_map(String::from),
    ]
}

/// Records a finished target for the reliability summary of `scripts/test.sh`.
fn report(target: &str) {
    // The workspace's target/, two levels above this crate.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/reliability");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(
        dir.join(format!("fuzz-{target}.txt")),
        format!("fuzz_cases={}\n", cases()),
    );
}

fn check_message(err: &Error) {
    assert!(!err.to_string().contains(SECRET), "password in: {err}");
}

#[test]
fn conn_uris_never_panic_or_leak() {
    TestRunner::new(config())
        .run(&uri(), |uri| {
            match timed(|| ConnSpec::from_uri(&uri)) {
                Ok(spec) => {
                    if let dibs::Address::Tcp { port, .. } = spec.address() {
                        prop_assert!(*port != 0);
                        // (A unix socket path is whatever the caller wrote, secret or not.)
                        prop_assert!(!spec.endpoint().contains(SECRET));
                    }
                    prop_assert!(spec.db() >= 0);
                }
                Err(err) => {
                    prop_assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
                    check_message(&err);
                }
            }
            Ok(())
        })
        .unwrap();
    report("uri");
}

#[test]
fn conn_maps_never_panic_or_leak() {
    TestRunner::new(config())
        .run(&prop::collection::vec((key(), value()), 0..8), |entries| {
            match timed(|| ConnSpec::from_map(&entries)) {
                Ok(spec) => {
                    prop_assert!(spec.max_total() >= 1 && spec.max_idle() <= spec.max_total());
                    prop_assert!(
                        spec.connect_timeout() > Duration::ZERO
                            && spec.read_timeout() > Duration::ZERO
                    );
                }
                Err(err) => {
                    prop_assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
                    check_message(&err);
                }
            }
            Ok(())
        })
        .unwrap();
    report("map");
}

#[test]
fn lock_arguments_are_validated_without_panics() {
    let unit = prop_oneof![Just(1i64), Just(1000i64)];
    let amount = prop_oneof![any::<i64>(), -5i64..100_000, Just(i64::MAX), Just(i64::MIN)];
    let name = prop_oneof![
        any::<String>(),
        ".{0,600}".prop_map(String::from),
        "[a-z]{510,515}".prop_map(String::from)
    ];
    TestRunner::new(config())
        .run(
            &(name, amount.clone(), amount, unit),
            |(name, at_most, at_least, unit)| {
                match timed(|| LockParams::new(&name, at_most, at_least, unit)) {
                    Ok(p) => {
                        prop_assert!(!name.is_empty() && name.len() <= dibs::MAX_NAME_BYTES);
                        prop_assert!(!name.chars().any(char::is_control));
                        prop_assert!(p.at_most() > Duration::ZERO && p.at_least() <= p.at_most());
                        prop_assert_eq!(
                            p.at_most().as_millis() as i128,
                            at_most as i128 * unit as i128
                        );
                    }
                    Err(Error::InvalidArgument { arg, message }) => {
                        prop_assert!(["lockName", "atMost", "atLeast"].contains(&arg));
                        prop_assert!(message.contains(arg), "{}", message);
                    }
                    Err(other) => prop_assert!(false, "unexpected {other:?}"),
                }
                Ok(())
            },
        )
        .unwrap();
    report("lock-args");
}
