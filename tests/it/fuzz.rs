//! Property-based fuzzing of everything that reads caller input: the conn-spec parser (URIs and
//! maps) and lock-argument validation. Neither may panic, hang or leak a password into a message.
//! And of what dibs reads back from Redis under its key prefix, which anyone may have written:
//! `inspect`, `locks`, `jobs` and the history reader take any bytes there without a panic.
//!
//! Plain `cargo test` runs 2,000 cases per target; `scripts/test.sh` runs 150,000 (about a
//! minute). For a longer run:
//! `DIBS_FUZZ_CASES=2000000 cargo test --release -p dibs --test it -- fuzz::`.

use crate::common;

use std::time::{Duration, Instant};

use dibs::{ConnSpec, Error, LockParams, Locker, SpecValue};
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
    // Every key the parser knows (the one list, dibs::CONN_KEYS), and Carmine's map keys.
    let names = dibs::CONN_KEYS.iter().map(|k| k.name);
    let known = prop::sample::select(
        names
            .chain(dibs::POOL_KEYS.iter().copied())
            .chain(dibs::CONN_MAP_KEYS.iter().copied())
            .collect::<Vec<_>>(),
    );
    prop_oneof![
        known.clone().prop_map(String::from),
        known.prop_map(|k| format!(":{k}")),
        ".{0,10}".prop_map(String::from),
    ]
}

/// Records a finished target for the reliability summary of `scripts/test.sh`.
fn report(target: &str) {
    // The workspace's target/, two levels above this crate.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/reliability");
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

/// Values of any bytes, and ones made to look like dibs's own: a token of another form before a
/// character of two bytes (the value that made `dibs locks` panic), a truncated or padded value.
fn foreign_value() -> impl Strategy<Value = Vec<u8>> {
    let token = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..80),
        (token, ".{0,12}", ".{0,12}", ".{0,12}")
            .prop_map(|(t, h, p, a)| format!("{t};{h};{p};{a}").into_bytes()),
        (".{30,40}", ".{0,20}").prop_map(|(a, b)| format!("{a};{b};1;2").into_bytes()),
        Just(b"0123456789abcdef0123456789abcdef;hh\xc3\xa9;1;2".to_vec()),
        (prop::collection::vec(any::<u8>(), 30..40)).prop_map(|mut v| {
            v.extend_from_slice("é;1;2".as_bytes());
            v
        }),
    ]
}

/// Issue 30 (5): whatever a value under the prefix holds, `inspect`, `locks`, `jobs` and the
/// history reader answer without a panic, and no message quotes it. Against a real
/// redis-server; `DIBS_FUZZ_SERVER_CASES` cases (500 by default; `scripts/test.sh` runs 3,000).
#[test]
fn foreign_values_under_the_prefix_never_panic() {
    let server = common::RedisServer::start();
    let locker = Locker::new(ConnSpec::from_uri(&server.uri()).unwrap()).unwrap();
    let admin = std::cell::RefCell::new(server.admin());
    let cases = std::env::var("DIBS_FUZZ_SERVER_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new(config)
        .run(&(foreign_value(), foreign_value()), |(value, entry)| {
            let admin = &mut *admin.borrow_mut();
            let _: () = redis::cmd("SET")
                .arg("dibs:foreign")
                .arg(&value)
                .query(admin)
                .unwrap();
            let _: () = redis::cmd("DEL")
                .arg("dibs:\u{1f}{history}:foreign")
                .query(admin)
                .unwrap();
            let _: String = redis::cmd("XADD")
                .arg("dibs:\u{1f}{history}:foreign")
                .arg("*")
                .arg("run")
                .arg(&entry)
                .arg(&value)
                .arg(&entry)
                .query(admin)
                .unwrap();
            let quoted = |text: String| {
                let long = String::from_utf8_lossy(&value).chars().count() >= 12;
                !long || !text.contains(&*String::from_utf8_lossy(&value))
            };
            let state = locker.inspect("foreign").unwrap().expect("held");
            if let Some(holder) = &state.holder {
                // Only a value of dibs's own form has a holder: a token, then its fields.
                prop_assert!(value.len() > 36 && value[36] == b';', "{holder:?}");
            }
            let listed = locker.locks("*", 10, dibs::SCAN_BUDGET).unwrap();
            prop_assert!(listed.items.iter().any(|l| l.name == "foreign"));
            for lock in &listed.items {
                if let Some(token) = &lock.token {
                    prop_assert_eq!(token.len(), 36);
                }
            }
            match locker.history("foreign", 10) {
                Ok(history) => prop_assert!(history.runs.len() <= 1),
                Err(e) => prop_assert!(quoted(e.to_string()), "{e}"),
            }
            let jobs = locker.jobs(10, dibs::SCAN_BUDGET).unwrap();
            prop_assert!(jobs.complete);
            // A forced release of a foreign value never matches a token it does not hold.
            let token = "9b2f1f7e-3c1a-4a55-9f43-0d1f0e9b7a10";
            let forced = locker.force_release("foreign", token, "fuzz").unwrap();
            prop_assert!(
                forced != dibs::ForcedRelease::Released || value.starts_with(token.as_bytes())
            );
            Ok(())
        })
        .unwrap();
    report("foreign-values");
}
