//! Redis Sentinel (1 master, 1 replica, 3 Sentinels), all on loopback, started by the test:
//! failover, TLS with client certificates, the Sentinels' own credentials, a silent Sentinel.

use crate::common;
use crate::common::replication;
use crate::common::topology;

use std::time::{Duration, Instant};

use common::pki::Pki;
use common::RedisServer;
use dibs::{ConnSpec, Ended, Error, LockParams, Locker, Outcome, SpecValue};
use replication::{Secured, Sentinel};
use topology::{spec_with, wait_until};

fn info(server: &RedisServer, field: &str) -> String {
    let info: String = redis::cmd("INFO").query(&mut server.admin()).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or("")
        .trim()
        .to_owned()
}

#[test]
fn sentinel_calls_succeed_against_the_new_master_after_a_failover() {
    sentinel_failover(None, None);
}

/// The same failover with everything secured: master, replica and Sentinels speak TLS only and
/// require client certificates, the master and replica a password, and the Sentinels another
/// one of their own.
#[test]
fn sentinel_over_tls_with_client_certificates_and_sentinel_auth_fails_over_too() {
    let pki = Pki::new();
    sentinel_failover(Some(&pki), Some("sentinel-pw"));
}

/// A server of the failover: over TLS with `pki`, with these arguments.
fn server(pki: Option<&Pki>, args: &[String]) -> RedisServer {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match pki {
        Some(pki) => RedisServer::start_tls_with(pki, &args),
        None => RedisServer::start_with(&args),
    }
}

/// 1 master, 1 replica, 3 Sentinels; over TLS when `pki` is given, and then with passwords: the
/// master's (`master-pw`) and, when given, the Sentinels' own.
fn sentinel_failover(pki: Option<&Pki>, sentinel_password: Option<&str>) {
    let mut master_args: Vec<String> = Vec::new();
    let mut userinfo = "";
    let mut sentinel_conf = String::new();
    if pki.is_some() {
        master_args = [
            "--requirepass",
            "master-pw",
            "--masterauth",
            "master-pw",
            "--tls-replication",
            "yes",
        ]
        .map(String::from)
        .to_vec();
        userinfo = ":master-pw@";
        sentinel_conf = "sentinel auth-pass mymaster master-pw\n".into();
    }
    let mut master = server(pki, &master_args);
    let mut replica_args = master_args.clone();
    replica_args.extend([
        "--replicaof".into(),
        "127.0.0.1".into(),
        master.port.to_string(),
    ]);
    let replica = server(pki, &replica_args);
    wait_until("the replica to sync", || {
        info(&replica, "master_link_status") == "up"
    });
    let secured = Secured {
        pki,
        password: sentinel_password,
        conf: &sentinel_conf,
    };
    let sentinels: Vec<Sentinel> = (0..3)
        .map(|_| Sentinel::start_secured(master.port, 1000, 5000, &secured))
        .collect();
    wait_until("the sentinels to see the replica and each other", || {
        sentinels.iter().all(|s| s.known() == (1, 2))
    });

    let list: Vec<String> = sentinels
        .iter()
        .map(|s| format!("127.0.0.1:{}", s.port))
        .collect();
    let scheme = if pki.is_some() {
        "rediss+sentinel"
    } else {
        "redis+sentinel"
    };
    let uri = format!("{scheme}://{userinfo}{}/mymaster", list.join(","));
    let auth: Vec<(&str, &str)> = sentinel_password
        .map(|pw| vec![("sentinel-password", pw)])
        .unwrap_or_default();
    let locker = Locker::new(spec_with(&uri, pki, &auth)).unwrap();
    let params = LockParams::from_secs("failover", 60, 30).unwrap();
    assert!(matches!(
        locker.execute(&params, || ()).unwrap(),
        Outcome::Ran { .. }
    ));
    assert!(master.exists("dibs:failover"), "the lock is on the master");
    if sentinel_password.is_some() {
        // The Sentinels' password is theirs: without it they refuse to name the master, and the
        // error says which setting is missing.
        let err = Locker::new(spec_with(&uri, pki, &[]))
            .unwrap()
            .execute(&params, || ())
            .unwrap_err();
        assert!(matches!(err, Error::Authentication(_)), "{err:?}");
        assert!(err.message().contains("give 'sentinel-password'"), "{err}");
        let err = Locker::new(spec_with(&uri, pki, &[("sentinel-password", "wrong-pw")]))
            .unwrap()
            .execute(&params, || ())
            .unwrap_err();
        assert!(matches!(err, Error::Authentication(_)), "{err:?}");
        assert!(
            err.message().contains("refused the Sentinel credentials"),
            "{err}"
        );
        assert!(
            !err.message().contains("wrong-pw") && !err.message().contains("master-pw"),
            "{err}"
        );
    }

    master.kill();
    wait_until("a failover to the replica", || {
        sentinels[0].master_port() == Some(replica.port)
    });

    // Durable acquire confirmed it on the replica before the failover: it survived.
    assert!(
        replica.exists("dibs:failover"),
        "the lock from before the failover is held on the new master"
    );

    // The new master has no replica now: the default will not trust a lock only it holds
    // (behind Sentinel, a master that reports none may be a stale one), so the call does not
    // run until a replica is back; with durable acquire off, it runs.
    let after = LockParams::from_secs("after-failover", 60, 0).unwrap();
    match locker.execute(&after, || panic!("ran unconfirmed")) {
        Ok(dibs::Outcome::Unconfirmed(message)) => assert!(message.contains("0 of 1"), "{message}"),
        other => panic!("expected Unconfirmed, got {other:?}"),
    }
    let mut off_keys = auth.clone();
    off_keys.push(("durable", "off"));
    let off = Locker::new(spec_with(&uri, pki, &off_keys)).unwrap();
    let outcome = off.execute(&after, || "ran on the new master").unwrap();
    let Outcome::Ran { value, ending } = outcome else {
        panic!("should run after the failover")
    };
    assert_eq!(value, "ran on the new master");
    assert_eq!(ending.ended, Ended::Released);
}

/// Sentinels with ACL users: the URI names the Sentinels' user and password in its query (an
/// `@` in it %-encoded), apart from the master's credentials.
#[test]
fn sentinel_auth_with_an_acl_user_from_a_uri() {
    let master = RedisServer::start();
    let sentinel = Sentinel::start_secured(
        master.port,
        1000,
        5000,
        &Secured {
            conf:
                "user default off\nuser watcher on >w@tch -@all +sentinel|get-master-addr-by-name\n",
            ..Secured::default()
        },
    );
    let base = format!("redis+sentinel://127.0.0.1:{}/mymaster", sentinel.port);
    let params = LockParams::from_secs("acl-sentinel", 10, 0).unwrap();
    // No replica here: durable acquire off, to test the Sentinels' auth alone.
    let run = |uri: &str| {
        Locker::new(spec_with(uri, None, &[("durable", "off")]))
            .unwrap()
            .execute(&params, || ())
    };
    let outcome = run(&format!(
        "{base}?sentinel-username=watcher&sentinel-password=w%40tch"
    ))
    .unwrap();
    assert!(matches!(outcome, Outcome::Ran { .. }), "{outcome:?}");

    let err = run(&base).unwrap_err();
    assert!(matches!(err, Error::Authentication(_)), "{err:?}");
    let err = run(&format!(
        "{base}?sentinel-username=watcher&sentinel-password=nope"
    ))
    .unwrap_err();
    assert!(matches!(err, Error::Authentication(_)), "{err:?}");
    assert!(!err.message().contains("nope"), "{err}");
    // The Sentinel keys belong to Sentinel specs only.
    let err = ConnSpec::from_map(&[
        ("uri".into(), SpecValue::Str("redis://127.0.0.1:1".into())),
        ("sentinel-password".into(), SpecValue::Str("pw".into())),
    ])
    .unwrap_err();
    assert!(err.to_string().contains("need 'sentinels'"), "{err}");
}

#[test]
fn sentinel_specs_from_maps_and_errors() {
    let spec = ConnSpec::from_map(&[
        (
            "sentinels".into(),
            dibs::SpecValue::Str("10.0.0.1,10.0.0.2:26380".into()),
        ),
        ("master-name".into(), dibs::SpecValue::Str("cache".into())),
        ("password".into(), dibs::SpecValue::Str("pw".into())),
        ("db".into(), dibs::SpecValue::Int(2)),
    ])
    .unwrap();
    assert_eq!(
        spec.address(),
        &dibs::Address::Sentinel {
            sentinels: vec![("10.0.0.1".into(), 26379), ("10.0.0.2".into(), 26380)],
            master: "cache".into()
        }
    );
    assert_eq!(spec.db(), 2);
    for (uri, fragment) in [
        ("redis+sentinel://h1,h2", "name the master"),
        ("redis+sentinel://h1,:1/m", "every node needs a host"),
        ("redis+cluster://h1:7000/2", "a cluster has no db"),
        ("redis+cluster://h1:0", "between 1 and 65535"),
    ] {
        let err = ConnSpec::from_uri(uri).unwrap_err();
        assert!(err.to_string().contains(fragment), "{uri}: {err}");
    }
    let err = ConnSpec::from_map(&[
        ("sentinels".into(), dibs::SpecValue::Str("h1".into())),
        ("host".into(), dibs::SpecValue::Str("h2".into())),
        ("master-name".into(), dibs::SpecValue::Str("m".into())),
    ])
    .unwrap_err();
    assert!(err.to_string().contains("give one address"), "{err}");
}

/// A TCP port that accepts connections and never answers: a blackholed peer, on loopback.
fn silent_port() -> (u16, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let holder = std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().take(8) {
            held.push(stream); // kept open, never read or written
        }
        std::thread::sleep(Duration::from_secs(30));
    });
    (port, holder)
}

#[test]
fn a_silent_sentinel_gets_its_share_of_the_budget_and_the_next_one_answers() {
    let master = RedisServer::start();
    let sentinel = Sentinel::start(master.port, 1000, 5000);
    let (silent, _holder) = silent_port();
    let spec = ConnSpec::from_map(&[
        (
            "uri".into(),
            dibs::SpecValue::Str(format!(
                "redis+sentinel://127.0.0.1:{silent},127.0.0.1:{}/mymaster",
                sentinel.port
            )),
        ),
        ("timeout-ms".into(), dibs::SpecValue::Int(1000)),
        // A master without replicas: the default's WAIT could never be answered.
        ("durable".into(), dibs::SpecValue::Str("off".into())),
    ])
    .unwrap();
    let locker = Locker::new(spec).unwrap();
    let started = Instant::now();
    let outcome = locker
        .execute(
            &LockParams::from_secs("via-sentinel", 10, 0).unwrap(),
            || (),
        )
        .unwrap();
    let first = started.elapsed();
    assert!(matches!(outcome, Outcome::Ran { .. }));
    // The silent one had half of the 1000 ms connect budget; the other answered in the rest.
    assert!(
        first >= Duration::from_millis(450) && first < Duration::from_millis(1000),
        "{first:?}"
    );
    // The Sentinel that answered is asked first from now on: a new connection costs no wait.
    let _: () = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("normal")
        .query(&mut master.admin())
        .unwrap();
    let again = Instant::now();
    locker
        .execute(
            &LockParams::from_secs("via-sentinel", 10, 0).unwrap(),
            || (),
        )
        .unwrap();
    assert!(
        again.elapsed() < Duration::from_millis(300),
        "{:?}",
        again.elapsed()
    );
}
