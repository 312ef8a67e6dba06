//! Durable acquire and fencing tokens against real servers: what the default does on a lone
//! server and on one with a replica, a replica cut off, a server that refuses WAIT, and tokens
//! that only go up (many acquisitions, and a restart with AOF on).

use crate::common;
use crate::common::replication;

use std::thread::sleep;
use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::RedisServer;
use dibs::{Acquire, ConnSpec, Error, LockParams, Locker, SpecValue};
use replication::{replica_of, synced, wait_for_replicas};

fn locker(server_uri: &str, durable: Option<SpecValue>, read_timeout_ms: i128) -> Locker {
    locker_with(server_uri, durable, read_timeout_ms, &[])
}

/// [`locker`] with more conn keys (TLS files).
fn locker_with(
    server_uri: &str,
    durable: Option<SpecValue>,
    read_timeout_ms: i128,
    more: &[(&str, String)],
) -> Locker {
    let mut entries = vec![
        ("uri".to_owned(), SpecValue::Str(server_uri.to_owned())),
        (
            "read-timeout-ms".to_owned(),
            SpecValue::Int(read_timeout_ms),
        ),
    ];
    if let Some(d) = durable {
        entries.push(("durable".to_owned(), d));
    }
    for (key, value) in more {
        entries.push((key.to_string(), SpecValue::Str(value.clone())));
    }
    Locker::new(ConnSpec::from_map(&entries).unwrap()).unwrap()
}

fn ms(name: &str, at_most: i64) -> LockParams {
    LockParams::from_millis(name, at_most, 0).unwrap()
}

#[test]
fn a_lone_server_pays_nothing_and_every_lock_gets_a_token() {
    let server = RedisServer::start();
    let locker = locker(&server.uri(), None, 4000);
    let info_before = server.calls("info"); // counts this INFO too, once read
    for _ in 0..3 {
        let lease = locker
            .acquire(&ms("lone", 10_000))
            .unwrap()
            .won()
            .expect("won");
        assert!(lease.fence() > 0);
        let _ = lease.release();
    }
    let info_after = server.calls("info");
    assert_eq!(server.calls("wait"), 0, "no WAIT without a replica");
    assert_eq!(
        info_after - info_before,
        2,
        "the reading before, and one count of the replicas, on the one new connection"
    );
}

#[test]
fn the_default_waits_for_the_replica_a_master_reports() {
    let master = RedisServer::start();
    let replica = replica_of(master.port, None);
    wait_for_replicas(&master, "1");
    let locker = locker(&master.uri(), None, 4000);
    // The first call sends the script whole (EVAL), with one WAIT: after a NOSCRIPT, a
    // pipelined WAIT would have waited for nothing.
    let _ = locker
        .acquire(&ms("warm", 10_000))
        .unwrap()
        .won()
        .expect("won")
        .release();
    let waits = master.calls("wait");
    assert_eq!(waits, 1);
    assert_eq!(
        master.calls("evalsha"),
        1,
        "the release's, which found no script"
    );
    let lease = locker
        .acquire(&ms("replicated", 10_000))
        .unwrap()
        .won()
        .expect("won");
    assert_eq!(
        master.calls("wait") - waits,
        1,
        "one WAIT went with the SET"
    );
    let mut on_replica = replica.admin();
    let held: Option<String> = redis::cmd("GET")
        .arg("dibs:replicated")
        .query(&mut on_replica)
        .unwrap();
    assert_eq!(held.as_deref(), Some(lease.value()), "the replica has it");
    let _ = lease.release();

    // Off: no WAIT, whatever the replicas.
    let off = locker_off(&master);
    let lease = off
        .acquire(&ms("unreplicated", 10_000))
        .unwrap()
        .won()
        .expect("won");
    let _ = lease.release();
    assert_eq!(master.calls("wait") - waits, 1);
}

fn locker_off(master: &RedisServer) -> Locker {
    locker(&master.uri(), Some(SpecValue::Str("off".into())), 4000)
}

/// A frozen master (SIGSTOP): the acquire's script and `WAIT` are one pipeline, and its call gives
/// up after one read timeout per try (the reused connection's, then a fresh one's), not one per
/// command and try (the redis crate reads on after a timeout, each read waiting it again).
#[test]
fn a_frozen_master_bounds_a_durable_acquire_by_one_read_timeout_per_try() {
    let master = RedisServer::start();
    let _replica = replica_of(master.port, None);
    wait_for_replicas(&master, "1");
    let spec = ConnSpec::from_map(&[
        ("uri".into(), SpecValue::Str(master.uri())),
        ("read-timeout-ms".into(), SpecValue::Int(600)),
        ("conn-timeout-ms".into(), SpecValue::Int(200)),
    ])
    .unwrap();
    let locker = Locker::new(spec).unwrap();
    for _ in 0..2 {
        // Warm: the scripts ran, and the pool holds a connection that counted the replica.
        let lease = locker
            .acquire(&ms("warm", 10_000))
            .unwrap()
            .won()
            .expect("won");
        let _ = lease.release();
    }
    master.signal("-STOP");
    let started = Instant::now();
    let frozen = locker.acquire(&ms("frozen", 10_000));
    let took = started.elapsed();
    master.signal("-CONT");
    assert!(matches!(frozen, Err(Error::Timeout(_))), "{frozen:?}");
    eprintln!("the frozen master's call gave up after {took:?}");
    // Two tries of 600 ms (1.2 s); reading on after a timeout took 1.8 s.
    assert!(
        took >= Duration::from_millis(1150) && took < Duration::from_millis(1600),
        "{took:?}"
    );
    // Thawed, the stuck SET runs; the sweeper deletes it (a delete queued behind the WAIT
    // would be dropped with the closed connection, and the lock held for atMost).
    let thawed = Instant::now();
    while master.exists("dibs:frozen") {
        assert!(
            thawed.elapsed() < Duration::from_millis(1500),
            "a lock left with nothing running: PTTL {} ms",
            master.pttl("dibs:frozen")
        );
        sleep(Duration::from_millis(20));
    }
    eprintln!("no lock left {:?} after the thaw", thawed.elapsed());
}

#[test]
fn a_lock_no_replica_acknowledged_is_given_back_within_half_the_read_timeout() {
    let master = RedisServer::start();
    let proxy = Proxy::start(master.port);
    let replica = replica_of(master.port, Some(proxy.port));
    wait_for_replicas(&master, "1");
    let locker = locker(&master.uri(), None, 1000);
    // Warm, confirmed once: a replica just synced may ack its first WAIT late on a loaded
    // machine (seen with the test programs run 3 at a time), which is not this test's subject.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match locker.acquire(&ms("warm", 10_000)) {
            Ok(Acquire::Won(lease)) => break drop(lease.release()),
            Ok(Acquire::Unconfirmed(_)) if Instant::now() < deadline => {}
            other => panic!("the warm-up: {other:?}"),
        }
    }

    // The replication stream is cut: what the master sends its replica is dropped on the way.
    proxy.mute_open_connections();
    let started = Instant::now();
    let refused = locker.acquire(&ms("cut-off", 60_000));
    let waited = started.elapsed();
    let Ok(Acquire::Unconfirmed(message)) = refused else {
        panic!("expected Unconfirmed, got {refused:?}")
    };
    eprintln!("unconfirmed after {waited:?}: {message}");
    assert!(
        message.contains("0 of 1 replicas acknowledged it within 500 ms"),
        "{message}"
    );
    assert!(
        waited >= Duration::from_millis(480) && waited < Duration::from_millis(1000),
        "the budget is half the read timeout: {waited:?}"
    );
    assert!(!master.exists("dibs:cut-off"), "the lock was given back");
    let mut on_replica = replica.admin();
    let on_replica: bool = redis::cmd("EXISTS")
        .arg("dibs:cut-off")
        .query(&mut on_replica)
        .unwrap();
    assert!(
        !on_replica,
        "the method holds: the replica never got the SET"
    );
    // The next caller may take it at once: nothing stays held with nothing running.
    let lease = locker_off(&master)
        .acquire(&ms("cut-off", 60_000))
        .unwrap()
        .won()
        .expect("free again");
    let _ = lease.release();
}

#[test]
fn a_server_that_refuses_wait_is_warned_about_once_by_default_and_fails_an_explicit_setting() {
    let master = RedisServer::start_with(&["--rename-command", "WAIT", "\"\""]);
    let _replica = replica_of(master.port, None);
    wait_for_replicas(&master, "1");
    refused_wait(&master.uri(), &[], |key| master.exists(key));
}

/// The same over TLS, whose connection read a pipeline's error replies as the call's error: the
/// refused WAIT failed every call, with the lock left held for atMost.
#[test]
fn a_tls_server_that_refuses_wait_is_warned_about_once_by_default_and_fails_an_explicit_setting() {
    let pki = common::pki::Pki::new();
    let args = [
        "--tls-replication",
        "yes",
        "--rename-command",
        "WAIT",
        "\"\"",
    ];
    let master = RedisServer::start_tls_with(&pki, &args);
    let port = master.port.to_string();
    let mut replica_args = args.to_vec();
    replica_args.extend(["--replicaof", "127.0.0.1", &port]);
    let _replica = synced(RedisServer::start_tls_with(&pki, &replica_args));
    wait_for_replicas(&master, "1");
    let uri = format!("rediss://127.0.0.1:{}", master.port);
    refused_wait(&uri, &pki.conn_keys("client"), |key| master.exists(key));
}

/// The same on a Cluster with a replica per master, whose client folds one reply's error into
/// the whole pipeline's: the refused WAIT hid whether the script won, failed every call and
/// left the lock held for atMost.
#[test]
fn a_cluster_that_refuses_wait_is_warned_about_once_by_default_and_fails_an_explicit_setting() {
    let nodes =
        replication::start_cluster_with_replicas_and(2000, &["--rename-command", "WAIT", "\"\""]);
    let seeds: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let uri = format!("redis+cluster://{}", seeds.join(","));
    let cluster = redis::cluster::ClusterClient::new(
        seeds
            .iter()
            .map(|s| format!("redis://{s}"))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    refused_wait(&uri, &[], |key| {
        redis::cmd("EXISTS")
            .arg(key)
            .query(&mut cluster.get_connection().unwrap())
            .unwrap()
    });
}

/// A server with a replica that refuses `WAIT`: the default warns once and locks without it; an
/// explicit `durable` fails the call, naming it, and leaves no lock behind.
fn refused_wait(uri: &str, more: &[(&str, String)], exists: impl Fn(&str) -> bool) {
    let default = locker_with(uri, None, 4000, more);
    let mut first = default
        .acquire(&ms("refused", 10_000))
        .unwrap()
        .won()
        .expect("won");
    assert!(first.fence() > 0, "with its fencing token");
    let warning = first.take_warning().expect("a warning");
    assert!(
        warning.contains("refused WAIT") && warning.contains("durable"),
        "{warning}"
    );
    let _ = first.release();
    let mut second = default
        .acquire(&ms("refused", 10_000))
        .unwrap()
        .won()
        .expect("won");
    assert_eq!(second.take_warning(), None, "warned once");
    let _ = second.release();
    assert!(!exists("dibs:refused"), "released");

    let explicit = locker_with(uri, Some(SpecValue::Int(1)), 4000, more);
    match explicit.acquire(&ms("insisted", 10_000)) {
        Err(Error::Server(message)) => {
            assert!(
                message.contains("refused WAIT") && message.contains("'durable'"),
                "{message}"
            )
        }
        other => panic!("expected a loud failure, got {other:?}"),
    }
    assert!(!exists("dibs:insisted"), "the lock was given back");
}

#[test]
fn waitaof_where_the_server_lacks_it_fails_loudly_and_gives_the_lock_back() {
    // Debian's 7.0 has no WAITAOF (7.2 and later).
    let server = RedisServer::start_with(&["--appendonly", "yes"]);
    let version = {
        let text: String = redis::cmd("INFO")
            .arg("server")
            .query(&mut server.admin())
            .unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("redis_version:"))
            .unwrap()
            .trim()
            .to_owned()
    };
    let aof = locker(&server.uri(), Some(SpecValue::Str("aof".into())), 4000);
    let result = aof.acquire(&ms("aof", 10_000));
    if version.as_str() < "7.2" {
        match result {
            Err(Error::Server(message)) => {
                assert!(message.contains("refused WAITAOF"), "{message}")
            }
            other => panic!("expected a loud failure on {version}, got {other:?}"),
        }
        assert!(!server.exists("dibs:aof"));
    } else {
        let _ = result.unwrap().won().expect("fsynced").release();
    }
}

#[test]
fn tokens_only_go_up_over_ten_thousand_acquisitions_and_a_restart_with_aof() {
    let mut server = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let locker = locker(&server.uri(), None, 4000);
    let mut last = 0;
    for i in 0..10_000 {
        let lease = locker
            .acquire(&ms("fenced", 10_000))
            .unwrap()
            .won()
            .expect("won");
        assert!(
            lease.fence() > last,
            "acquisition {i}: {} after {last}",
            lease.fence()
        );
        last = lease.fence();
        let _ = lease.release();
    }
    // A lock held across the restart: AOF brings it back, and the next holder's token is higher.
    let held = locker
        .acquire(&ms("fenced", 1_500))
        .unwrap()
        .won()
        .expect("won");
    let before = held.fence();
    std::mem::forget(held);
    server.restart();
    assert!(server.exists("dibs:fenced"), "AOF kept the lock");
    sleep(Duration::from_millis(1_600));
    let after = locker
        .acquire(&ms("fenced", 10_000))
        .unwrap()
        .won()
        .expect("won after expiry");
    assert!(after.fence() > before, "{} after {before}", after.fence());
    eprintln!(
        "10,000 tokens in order; across the restart {before} -> {}",
        after.fence()
    );
    let _ = after.release();
}

#[test]
fn an_acl_without_info_is_warned_about_once_and_the_lock_taken_without_wait() {
    let master = RedisServer::start();
    let _replica = replica_of(master.port, None);
    wait_for_replicas(&master, "1");
    let _: () = redis::cmd("ACL")
        .arg(&[
            "SETUSER",
            "old-acl",
            "on",
            ">pw",
            "resetkeys",
            "~dibs:*",
            "-@all",
            "+set",
            "+get",
            "+evalsha",
            "+eval",
            "+pexpire",
            "+del",
            "+ping",
            "+hello",
            "+select",
        ])
        .query(&mut master.admin())
        .unwrap();
    let uri = format!("redis://old-acl:pw@127.0.0.1:{}", master.port);
    let locker = locker(&uri, None, 4000);
    let mut first = locker
        .acquire(&ms("no-info", 10_000))
        .unwrap()
        .won()
        .expect("won");
    let warning = first.take_warning().expect("a warning");
    assert!(
        warning.contains("refused INFO") && warning.contains("+info"),
        "{warning}"
    );
    assert!(!warning.contains("pw@"), "{warning}");
    assert_eq!(first.fence(), 0, "TIME refused too: no token");
    assert!(warning.contains("refused TIME"), "{warning}");
    let _ = first.release();
    let mut second = locker
        .acquire(&ms("no-info", 10_000))
        .unwrap()
        .won()
        .expect("won");
    assert_eq!(second.take_warning(), None, "warned once");
    let _ = second.release();
    assert_eq!(master.calls("wait"), 0);
}

/// Managed offerings rename or refuse admin commands. dibs needs none of `SCRIPT`, `CONFIG` and
/// `CLIENT`; without `INFO` it cannot count replicas and says so once, without `WAIT` it
/// cannot wait for one (the default then carries on): the lock works, its token too. A server
/// without a command the lock itself needs (`EVALSHA`) fails the first call, naming it.
#[test]
fn a_server_without_script_config_client_info_and_wait_still_locks() {
    let commands = ["SCRIPT", "CONFIG", "CLIENT", "INFO", "WAIT"];
    // Each alone, then all together: renamed out of reach (each to a name of its own, as two
    // cannot share one).
    let mut cases: Vec<Vec<&str>> = commands.iter().map(|c| vec![*c]).collect();
    cases.push(commands.to_vec());
    for renamed in cases {
        let names: Vec<[String; 3]> = renamed
            .iter()
            .map(|c| {
                [
                    "--rename-command".into(),
                    c.to_string(),
                    format!("hidden-{c}"),
                ]
            })
            .collect();
        let args: Vec<&str> = names.iter().flatten().map(String::as_str).collect();
        let server = RedisServer::start_with(&args);
        let locker = locker(&server.uri(), None, 4000);
        for round in 0..2 {
            let mut lease = locker
                .acquire(&ms("managed", 10_000))
                .unwrap()
                .won()
                .expect("won");
            assert!(
                lease.fence() > 0,
                "{renamed:?}: TIME is there, a fencing token"
            );
            let warning = lease.take_warning();
            if round == 0 && renamed.contains(&"INFO") {
                let warning = warning.expect("INFO refused: said once");
                assert!(warning.contains("INFO"), "{warning}");
            } else {
                assert_eq!(warning, None, "{renamed:?}, round {round}");
            }
            assert!(server.exists("dibs:managed"));
            assert_eq!(lease.release().ended, dibs::Ended::Released, "{renamed:?}");
            assert!(!server.exists("dibs:managed"));
        }
    }

    let server = RedisServer::start_with(&["--rename-command", "EVALSHA", "\"\""]);
    match locker_for(&server).acquire(&ms("no-evalsha", 10_000)) {
        Err(Error::Server(message)) => {
            assert!(message.to_lowercase().contains("evalsha"), "{message}")
        }
        other => panic!("expected the call to fail naming EVALSHA, got {other:?}"),
    }
    assert!(!server.exists("dibs:no-evalsha"));
}

fn locker_for(server: &RedisServer) -> Locker {
    locker(&server.uri(), None, 4000)
}

/// A durable acquire whose `WAIT` is cut (its connection killed while it waits, the replication
/// flow dropped by `tc`) is retried on a fresh connection, where the key already holds our value:
/// the retry writes (the same expiry again), so that its `WAIT` waits for the first `SET` too.
/// Before, it wrote nothing, and on Redis 7.2+ and Valkey 8 (which count a connection's own
/// writes) its `WAIT` answered at once: won, the lock on the master alone.
#[test]
fn an_acquire_retried_after_its_wait_was_cut_is_not_won_without_its_replica() {
    if !replication::tc_available() {
        eprintln!("SKIPPED: `tc` (iproute2) is needed to stall the replication flow");
        return;
    }
    let master = RedisServer::start();
    let replica = synced(replica_of(master.port, None));
    let l = locker(&master.uri(), Some(SpecValue::Int(1)), 2_000);
    let warm = LockParams::from_secs("retry-warm", 60, 0).unwrap();
    drop(l.acquire(&warm).unwrap().won().unwrap().release());
    let _stall = replication::LoopbackStall::drop_segments(
        master.port,
        replication::replica_link_port(master.port),
    );
    let p = LockParams::from_secs("retry-cut", 60, 0).unwrap();
    let outcome = std::thread::scope(|s| {
        let acquire = s.spawn(|| l.acquire(&p));
        assert!(
            replication::kill_client_in(master.port, "wait").is_some(),
            "a WAIT to cut"
        );
        acquire.join().unwrap()
    });
    assert!(
        matches!(outcome, Ok(Acquire::Unconfirmed(_))),
        "{:?}",
        outcome.map(|o| matches!(o, Acquire::Won(_)))
    );
    assert!(!master.exists("dibs:retry-cut"), "given back");
    assert!(!replication::exists_on(
        replica.port,
        "dibs:retry-cut",
        false
    ));
}
