//! TLS: `rediss://` against a redis-server with a throwaway CA that `openssl` makes here.

use crate::common;

use std::path::Path;

use common::pki::Pki;
use common::RedisServer;
use dibs::{ConnSpec, Error, LockParams, Locker, Outcome, SpecValue};

fn tls_locker(server: &RedisServer, ca: Option<&Path>) -> Locker {
    tls_locker_with(server, ca, &[("timeout-ms", 2000)])
}

/// A locker for `server` over TLS, trusting `ca`, presenting the PKI's `client` certificate
/// (which lies beside `ca`), with these timeout keys.
fn tls_locker_with(server: &RedisServer, ca: Option<&Path>, timeouts: &[(&str, i128)]) -> Locker {
    let client = ca.map(|ca| ca.with_file_name("client"));
    locker_for(server.port, ca, client.as_deref(), timeouts)
}

/// A locker for `rediss://127.0.0.1:port`, trusting `ca`, presenting `client` (the path of its
/// `.pem` and `.key` without the extension) when given.
fn locker_for(
    port: u16,
    ca: Option<&Path>,
    client: Option<&Path>,
    timeouts: &[(&str, i128)],
) -> Locker {
    let mut entries = vec![(
        "uri".to_owned(),
        SpecValue::Str(format!("rediss://127.0.0.1:{port}")),
    )];
    let path = |p: &Path| SpecValue::Str(p.display().to_string());
    if let Some(ca) = ca {
        entries.push(("ca-cert".to_owned(), path(ca)));
    }
    if let Some(client) = client {
        entries.push((
            "client-cert".to_owned(),
            path(&client.with_extension("pem")),
        ));
        entries.push(("client-key".to_owned(), path(&client.with_extension("key"))));
    }
    for (key, ms) in timeouts {
        entries.push((key.to_string(), SpecValue::Int(*ms)));
    }
    Locker::new(ConnSpec::from_map(&entries).unwrap()).unwrap()
}

fn runs(locker: &Locker, name: &str) -> std::result::Result<bool, Error> {
    let params = LockParams::from_secs(name, 10, 0).unwrap();
    Ok(matches!(
        locker.execute(&params, || ())?,
        Outcome::Ran { .. }
    ))
}

#[test]
fn rediss_verifies_the_server_against_the_given_ca() {
    let pki = Pki::new();
    let server = RedisServer::start_tls(&pki);
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

    for ca in [pki.path("other-ca.pem"), pki.path("missing-ca.pem")] {
        let locker = if ca.exists() {
            locker_for(server.port, Some(&ca), Some(&pki.path("client")), &[])
        } else {
            // No CA named: the platform's trust store, which knows nothing of this one.
            locker_for(server.port, None, Some(&pki.path("client")), &[])
        };
        let err = locker.execute(&params, || ()).unwrap_err();
        assert!(matches!(err, Error::Connection(_)), "{err:?}");
        let message = err.to_string();
        assert!(message.to_lowercase().contains("certificate"), "{message}");
        assert!(
            message.contains(&format!("127.0.0.1:{}", server.port)),
            "{message}"
        );
    }
}

/// Redis's default, `tls-auth-clients yes`: the client certificate is required, checked against
/// the server's CA, and may come with its chain.
#[test]
fn a_server_that_requires_client_certificates_takes_one_and_says_when_it_is_missing() {
    let pki = Pki::new();
    let server = RedisServer::start_tls(&pki);
    let ca = pki.path("ca.pem");

    assert!(runs(
        &locker_for(server.port, Some(&ca), Some(&pki.path("client")), &[]),
        "mtls"
    )
    .unwrap());
    // Signed by an intermediate CA that the server does not know: the chain in the file links it.
    assert!(runs(
        &locker_for(server.port, Some(&ca), Some(&pki.path("chain-client")), &[]),
        "chain"
    )
    .unwrap());

    let err = runs(&locker_for(server.port, Some(&ca), None, &[]), "none").unwrap_err();
    assert!(matches!(err, Error::Connection(_)), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("requires a client certificate") && message.contains("'client-cert'"),
        "{message}"
    );
    assert!(
        message.contains(&format!("127.0.0.1:{}", server.port)),
        "{message}"
    );

    let err = runs(
        &locker_for(server.port, Some(&ca), Some(&pki.path("other-client")), &[]),
        "other",
    )
    .unwrap_err();
    assert!(matches!(err, Error::Connection(_)), "{err:?}");
    assert!(
        err.to_string().contains("refused the client certificate"),
        "{err}"
    );
}

#[test]
fn a_server_with_optional_client_certificates_takes_a_client_with_or_without_one() {
    let pki = Pki::new();
    let server = RedisServer::start_tls_with(&pki, &["--tls-auth-clients", "optional"]);
    let ca = pki.path("ca.pem");
    assert!(runs(&locker_for(server.port, Some(&ca), None, &[]), "without").unwrap());
    assert!(runs(
        &locker_for(server.port, Some(&ca), Some(&pki.path("client")), &[]),
        "with"
    )
    .unwrap());
    // Optional still means checked: a certificate from another CA is refused.
    let err = runs(
        &locker_for(server.port, Some(&ca), Some(&pki.path("other-client")), &[]),
        "other",
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("refused the client certificate"),
        "{err}"
    );
}

#[test]
fn client_certificate_files_are_checked_when_the_locker_is_made() {
    let pki = Pki::new();
    let spec = |cert: &Path, key: &Path| {
        ConnSpec::from_map(&[
            ("uri".into(), SpecValue::Str("rediss://127.0.0.1:1".into())),
            (
                "client-cert".into(),
                SpecValue::Str(cert.display().to_string()),
            ),
            (
                "client-key".into(),
                SpecValue::Str(key.display().to_string()),
            ),
        ])
        .unwrap()
    };
    let fails = |cert: &Path, key: &Path| Locker::new(spec(cert, key)).err().expect("must fail");
    let (cert, key) = (pki.path("client.pem"), pki.path("client.key"));

    // Each refused naming its key, with these words.
    let refused = |err: Error, arg: &str, words: &str| {
        assert!(
            matches!(&err, Error::InvalidArgument { arg: named, .. } if *named == arg),
            "{err:?}"
        );
        assert!(err.to_string().contains(words), "{err}");
        err
    };
    refused(
        fails(&pki.path("missing.pem"), &key),
        "client-cert",
        "missing.pem",
    );
    refused(
        fails(&cert, &pki.path("missing.key")),
        "client-key",
        "missing.key",
    );
    // A certificate where the key should be: no private key in it.
    refused(fails(&cert, &cert), "client-key", "no PEM private key");
    // The key of another certificate.
    let err = refused(
        fails(&cert, &pki.path("other-client.key")),
        "client-key",
        "does not fit",
    );
    // Never the key's bytes in a message.
    let pem = std::fs::read_to_string(&key).unwrap();
    let secret_line = pem.lines().nth(1).unwrap();
    assert!(!err.to_string().contains(secret_line));

    // One without the other, or without TLS: refused by the parser, naming what is missing.
    let only_cert = ConnSpec::from_map(&[
        ("uri".into(), SpecValue::Str("rediss://127.0.0.1:1".into())),
        (
            "client-cert".into(),
            SpecValue::Str(cert.display().to_string()),
        ),
    ])
    .unwrap_err();
    refused(only_cert, "client-key", "give 'client-key' too");
    let plain = ConnSpec::from_map(&[
        ("uri".into(), SpecValue::Str("redis://127.0.0.1:1".into())),
        (
            "client-cert".into(),
            SpecValue::Str(cert.display().to_string()),
        ),
        (
            "client-key".into(),
            SpecValue::Str(key.display().to_string()),
        ),
    ])
    .unwrap_err();
    refused(plain, "client-cert", "needs TLS");
}

/// Issue 30 (3): the `-pem` keys take the PEM texts in memory, in place of the files, so that a
/// caller that holds a key (a Spring SSL bundle) never writes it to disk. The same checks apply,
/// naming the `-pem` key, and no message quotes the text.
#[test]
fn pem_texts_in_memory_take_the_place_of_the_files() {
    let pki = Pki::new();
    let server = RedisServer::start_tls(&pki);
    let text = |name: &str| SpecValue::Str(std::fs::read_to_string(pki.path(name)).unwrap());
    let spec = |key: &str| {
        ConnSpec::from_map(&[
            (
                "uri".into(),
                SpecValue::Str(format!("rediss://127.0.0.1:{}", server.port)),
            ),
            ("ca-cert-pem".into(), text("ca.pem")),
            ("client-cert-pem".into(), text("client.pem")),
            ("client-key-pem".into(), text(key)),
        ])
    };
    let locker = Locker::new(spec("client.key").unwrap()).unwrap();
    assert!(
        runs(&locker, "inline").unwrap(),
        "ran over TLS with in-memory PEM"
    );
    assert!(!format!("{:?}", spec("client.key").unwrap()).contains("PRIVATE KEY"));

    let err = Locker::new(spec("other-client.key").unwrap())
        .err()
        .expect("another certificate's key");
    assert!(
        matches!(
            &err,
            Error::InvalidArgument {
                arg: "client-key",
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("'client-key-pem' does not fit"),
        "{message}"
    );
    let pem = std::fs::read_to_string(pki.path("other-client.key")).unwrap();
    assert!(!message.contains(pem.lines().nth(1).unwrap()), "{message}");

    // A path given to a -pem key, a text to a path key, or both forms of one: refused, unquoted.
    let key_path = pki.path("client.key").display().to_string();
    for (entries, words) in [
        (
            vec![("client-key-pem", SpecValue::Str(key_path.clone()))],
            "use 'client-key'",
        ),
        (
            vec![("client-key", text("client.key"))],
            "use 'client-key-pem'",
        ),
        (
            vec![
                ("client-key", SpecValue::Str(key_path.clone())),
                ("client-key-pem", text("client.key")),
            ],
            "two forms of one value",
        ),
    ] {
        let mut map = vec![(
            "uri".to_owned(),
            SpecValue::Str("rediss://127.0.0.1:1".into()),
        )];
        map.extend(entries.into_iter().map(|(k, v)| (k.to_owned(), v)));
        let err = ConnSpec::from_map(&map).unwrap_err();
        assert!(err.to_string().contains(words), "{err}");
        assert!(!err.to_string().contains("BEGIN PRIVATE"), "{err}");
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
    let server = RedisServer::start_tls(&pki);
    let locker = tls_locker_with(
        &server,
        Some(&pki.path("ca.pem")),
        &[("conn-timeout-ms", 300), ("read-timeout-ms", 3000)],
    );
    // The kernel still completes the TCP handshake of a frozen server; the TLS handshake then
    // gets no answer. It belongs to connecting: the connect timeout bounds it, not the read one.
    server.signal("-STOP");
    let started = std::time::Instant::now();
    let err = locker
        .execute(&LockParams::from_secs("frozen-tls", 10, 0).unwrap(), || ())
        .unwrap_err();
    let took = started.elapsed();
    server.signal("-CONT");
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
