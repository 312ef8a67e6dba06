//! TLS: `rediss://` against a redis-server with a throwaway CA that `openssl` makes here.

mod common;

use std::path::Path;
use std::process::Command;

use common::pki::Pki;
use common::RedisServer;
use dibs::{ConnSpec, Error, LockParams, Locker, Outcome, SpecValue};

fn tls_locker(server: &RedisServer, ca: Option<&Path>) -> Locker {
    tls_locker_with(server, ca, &[("timeout-ms", 2000)])
}

/// A locker for `server` over TLS, trusting `ca`, with these timeout keys.
fn tls_locker_with(server: &RedisServer, ca: Option<&Path>, timeouts: &[(&str, i128)]) -> Locker {
    let mut entries = vec![(
        "uri".to_owned(),
        SpecValue::Str(format!("rediss://127.0.0.1:{}", server.port)),
    )];
    if let Some(ca) = ca {
        entries.push((
            "ca-cert".to_owned(),
            SpecValue::Str(ca.display().to_string()),
        ));
    }
    for (key, ms) in timeouts {
        entries.push((key.to_string(), SpecValue::Int(*ms)));
    }
    Locker::new(ConnSpec::from_map(&entries).unwrap()).unwrap()
}

#[test]
fn rediss_verifies_the_server_against_the_given_ca() {
    let pki = Pki::new();
    let server = RedisServer::start_tls(
        &pki.path("server.pem"),
        &pki.path("server.key"),
        &pki.path("ca.pem"),
    );
    let params = LockParams::from_secs("tls", 10, 0).unwrap();

    let outcome = tls_locker(&server, Some(&pki.path("ca.pem")))
        .execute(&params, || "over tls")
        .unwrap();
    assert!(matches!(
        outcome,
        Outcome::Ran {
            value: "over tls",
            ..
        }
    ));

    for ca in [Some(pki.path("other-ca.pem")), None] {
        let err = tls_locker(&server, ca.as_deref())
            .execute(&params, || ())
            .unwrap_err();
        assert!(matches!(err, Error::Connection(_)), "{err:?}");
        let message = err.to_string();
        assert!(message.to_lowercase().contains("certificate"), "{message}");
        assert!(
            message.contains(&format!("127.0.0.1:{}", server.port)),
            "{message}"
        );
    }
}

#[test]
fn an_unreadable_ca_file_is_an_invalid_argument() {
    let spec = ConnSpec::from_map(&[
        ("uri".into(), SpecValue::Str("rediss://127.0.0.1:1".into())),
        (
            "ca-cert".into(),
            SpecValue::Str("/nonexistent/ca.pem".into()),
        ),
    ])
    .unwrap();
    let err = Locker::new(spec).err().expect("must fail");
    assert!(
        matches!(err, Error::InvalidArgument { arg: "ca-cert", .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");

    let garbage = std::env::temp_dir().join(format!("dibs-garbage-{}.pem", std::process::id()));
    std::fs::write(&garbage, "not a certificate").unwrap();
    let spec = ConnSpec::from_map(&[
        ("uri".into(), SpecValue::Str("rediss://127.0.0.1:1".into())),
        (
            "ca-cert".into(),
            SpecValue::Str(garbage.display().to_string()),
        ),
    ])
    .unwrap();
    let err = Locker::new(spec).err().expect("must fail");
    let _ = std::fs::remove_file(&garbage);
    assert!(
        matches!(err, Error::InvalidArgument { arg: "ca-cert", .. }),
        "{err:?}"
    );
}

#[test]
fn a_frozen_tls_server_is_given_up_within_the_connect_timeout_handshake_included() {
    let pki = Pki::new();
    let server = RedisServer::start_tls(
        &pki.path("server.pem"),
        &pki.path("server.key"),
        &pki.path("ca.pem"),
    );
    let locker = tls_locker_with(
        &server,
        Some(&pki.path("ca.pem")),
        &[("conn-timeout-ms", 300), ("read-timeout-ms", 3000)],
    );
    let pid = server.pid().to_string();
    let signal = |sig: &str| {
        assert!(Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
            .success())
    };
    // The kernel still completes the TCP handshake of a frozen server; the TLS handshake then
    // gets no answer. It belongs to connecting: the connect timeout bounds it, not the read one.
    signal("-STOP");
    let started = std::time::Instant::now();
    let err = locker
        .execute(&LockParams::from_secs("frozen-tls", 10, 0).unwrap(), || ())
        .unwrap_err();
    let took = started.elapsed();
    signal("-CONT");
    eprintln!("frozen TLS server, connect 300 ms, read 3000 ms: gave up after {took:?}");
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    assert!(err.to_string().contains("no answer within 300 ms"), "{err}");
    assert!(took < std::time::Duration::from_millis(1000), "{took:?}");
}

/// A server that accepts, then sends the start of a TLS record one byte every 200 ms: each read
/// gets a byte well within any read timeout, and the handshake never completes. Stops after 6 s.
fn trickling_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else {
            return;
        };
        // A handshake record of 16 KiB: the client waits for all of it.
        let record = [0x16u8, 0x03, 0x03, 0x40, 0x00]
            .into_iter()
            .chain(std::iter::repeat(0));
        for byte in record.take(30) {
            if std::io::Write::write_all(&mut stream, &[byte]).is_err() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    });
    port
}

#[test]
fn a_trickling_tls_server_is_given_up_within_the_connect_timeout() {
    let pki = Pki::new();
    let port = trickling_port();
    let spec = ConnSpec::from_map(&[
        (
            "uri".into(),
            SpecValue::Str(format!("rediss://127.0.0.1:{port}")),
        ),
        (
            "ca-cert".into(),
            SpecValue::Str(pki.path("ca.pem").display().to_string()),
        ),
        ("conn-timeout-ms".into(), SpecValue::Int(1000)),
        ("read-timeout-ms".into(), SpecValue::Int(1000)),
    ])
    .unwrap();
    let started = std::time::Instant::now();
    let err = Locker::new(spec)
        .unwrap()
        .execute(&LockParams::from_secs("trickle", 10, 0).unwrap(), || ())
        .unwrap_err();
    let took = started.elapsed();
    eprintln!(
        "TLS server trickling a byte per 200 ms, connect 1000 ms: gave up after {took:?}: {err}"
    );
    assert!(took < std::time::Duration::from_millis(1300), "{took:?}");
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
}
