//! A Redis Cluster whose nodes fail, against real servers the tests start (issue 43): nodes that
//! answer a byte at a time (every command's reply is bounded as a whole from its send: the nodes
//! announce proxies started by the test, `cluster-announce-port`, so that every connection goes
//! through one that can trickle), a frozen replica, a frozen first seed, the history's master down.

use crate::common;
use crate::common::cluster;
use crate::common::topology;

use std::time::{Duration, Instant};

use cluster::start_cluster;
use common::proxy::Proxy;
use dibs::{ConnSpec, Error, LockParams, Locker, Outcome, SpecValue};
use topology::wait_until;

#[test]
fn a_trickling_cluster_node_is_a_timeout_within_the_read_timeout_from_the_send() {
    let (nodes, _) = start_cluster(&[], None);
    let proxies: Vec<Proxy> = nodes.iter().map(|n| Proxy::start(n.port)).collect();
    for (node, proxy) in nodes.iter().zip(&proxies) {
        let mut admin = node.admin();
        let set = |key: &str, value: u16, admin: &mut redis::Connection| {
            let _: () = redis::cmd("CONFIG")
                .arg("SET")
                .arg(key)
                .arg(value)
                .query(admin)
                .unwrap();
        };
        set("cluster-announce-bus-port", node.port + 10000, &mut admin);
        set("cluster-announce-port", proxy.port, &mut admin);
    }
    let ports: Vec<String> = proxies.iter().map(|p| p.port.to_string()).collect();
    wait_until("every node to name the proxies in its slots", || {
        nodes.iter().all(|node| {
            let slots: redis::Value = redis::cmd("CLUSTER")
                .arg("SLOTS")
                .query(&mut node.admin())
                .unwrap();
            let text = format!("{slots:?}");
            nodes
                .iter()
                .all(|n| !text.contains(&format!("int({})", n.port)))
                && ports.iter().all(|p| text.contains(&format!("int({p})")))
        })
    });
    let spec = ConnSpec::from_map(&[
        (
            "uri".into(),
            SpecValue::Str(format!("redis+cluster://127.0.0.1:{}", proxies[0].port)),
        ),
        ("read-timeout-ms".into(), SpecValue::Int(300)),
        ("conn-timeout-ms".into(), SpecValue::Int(300)),
    ])
    .unwrap();
    let locker = Locker::new(spec).unwrap();
    let params = |name: &str| LockParams::from_millis(name, 60_000, 0).unwrap();
    for n in 0..6 {
        // A lock on each master, and the connections to all of them open.
        let warm = locker
            .execute(&params(&format!("warm-p{n}")), || ())
            .unwrap();
        assert!(matches!(warm, Outcome::Ran { .. }));
    }
    for proxy in &proxies {
        proxy.trickle_replies(Duration::from_millis(100));
    }
    let mut ran = false;
    let started = Instant::now();
    let err = locker
        .execute(&params("trickled-p1"), || ran = true)
        .unwrap_err();
    let took = started.elapsed();
    eprintln!(
        "a cluster trickling a byte per 100 ms, 300 ms timeouts: gave up after {took:?}: {err}"
    );
    assert!(!ran);
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    // The try (300 ms from its send), and the pool's retry: a new connection (300 ms) and its
    // command (300 ms); the rest is slack for a loaded machine.
    assert!(took < Duration::from_millis(1_800), "{took:?}");
}

/// Three masters with a replica each, made a cluster by `redis-cli --cluster create`, every
/// replica's link up and every node in the slot map.
fn cluster_with_replicas() -> Vec<common::RedisServer> {
    let nodes: Vec<common::RedisServer> = (0..6)
        .map(|_| {
            common::RedisServer::start_with(&[
                "--cluster-enabled",
                "yes",
                "--cluster-node-timeout",
                "30000",
            ])
        })
        .collect();
    let addrs: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let status = std::process::Command::new(common::redis_cli())
        .args(nodes[0].cli_args())
        .args(["--cluster", "create"])
        .args(&addrs)
        .args(["--cluster-replicas", "1", "--cluster-yes"])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    wait_until(
        "every replica's link up, and all 6 nodes in the slots",
        || {
            let slots: redis::Value = redis::cmd("CLUSTER")
                .arg("SLOTS")
                .query(&mut nodes[0].admin())
                .unwrap();
            let listed = format!("{slots:?}");
            nodes
                .iter()
                .all(|n| listed.contains(&format!("int({})", n.port)))
                && nodes.iter().all(|n| {
                    let info: String = redis::cmd("INFO")
                        .arg("replication")
                        .query(&mut n.admin())
                        .unwrap();
                    info.contains("role:master") || info.contains("master_link_status:up")
                })
        },
    );
    nodes
}

/// The attack on issue 43: the cluster client opens every node of its slot map, replicas too,
/// one after another, each with a PING; one frozen replica held every new cluster connection for
/// its read timeout, and with the connect timeout no longer (both 4 s by default) failed it, for
/// every slot, until the cluster marked the replica failed. dibs never reads from a replica: its
/// nodes are opened at their first command now, and a lock on any master is taken at once.
#[test]
fn a_frozen_replica_does_not_hold_a_new_cluster_connection() {
    let nodes = cluster_with_replicas();
    let replica = nodes
        .iter()
        .find(|n| {
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query(&mut n.admin())
                .unwrap();
            info.contains("role:slave")
        })
        .expect("a replica");
    replica.signal("-STOP");
    let spec = ConnSpec::from_map(&[
        (
            "uri".into(),
            SpecValue::Str(format!("redis+cluster://127.0.0.1:{}", nodes[0].port)),
        ),
        ("timeout-ms".into(), SpecValue::Int(1000)),
        // The lock may be on the frozen replica's master, whose WAIT cannot be answered: this
        // is about the connection.
        ("durable".into(), SpecValue::Str("off".into())),
    ])
    .unwrap();
    let started = Instant::now();
    let ran = Locker::new(spec).unwrap().execute(
        &LockParams::from_secs("beside-a-frozen-replica-p1", 10, 0).unwrap(),
        || (),
    );
    let took = started.elapsed();
    replica.signal("-CONT");
    eprintln!("a lock beside a frozen replica: {took:?}: {ran:?}");
    assert!(matches!(ran, Ok(Outcome::Ran { .. })), "{ran:?}");
    assert!(took < Duration::from_millis(900), "{took:?}");
}

/// The second attack on issue 43: the seeds are checked in turn until one answers, and a frozen
/// first seed took all of the connect's time, so the next seed was never tried: every call
/// failed while it stayed frozen. Each seed now gets its share of what is left.
#[test]
fn a_frozen_first_seed_leaves_the_next_seed_its_share() {
    let (nodes, addrs) = start_cluster(&[], None);
    // A lock on a master other than the frozen seed's.
    let name = (0..)
        .map(|n| format!("past-a-frozen-seed-p{n}"))
        .find(|name| cluster::owner_of(&nodes, nodes[0].keyslot(&format!("dibs:{name}"))) != 0)
        .unwrap();
    nodes[0].signal("-STOP");
    let spec = ConnSpec::from_map(&[
        (
            "uri".into(),
            SpecValue::Str(format!("redis+cluster://{},{}", addrs[0], addrs[1])),
        ),
        ("timeout-ms".into(), SpecValue::Int(1000)),
        // Counting replicas asks every master, the frozen one too: this is about the seeds.
        ("durable".into(), SpecValue::Str("off".into())),
    ])
    .unwrap();
    let started = Instant::now();
    let ran = Locker::new(spec)
        .unwrap()
        .execute(&LockParams::from_secs(&name, 10, 0).unwrap(), || ());
    let took = started.elapsed();
    nodes[0].signal("-CONT");
    eprintln!("a lock past a frozen first seed: {took:?}: {ran:?}");
    assert!(matches!(ran, Ok(Outcome::Ran { .. })), "{ran:?}");
}

/// The second attack on issue 43: with the history's master down, a run on another master ran,
/// and the warning blamed the server's ACL ("refused it ... +@stream"). It says the run was not
/// recorded, and why, now.
#[test]
fn a_run_whose_history_node_is_down_says_so_not_an_acl() {
    let (mut nodes, addrs) = start_cluster(&[], None);
    let history = cluster::owner_of(&nodes, nodes[0].keyslot("{history}"));
    let name = (0..)
        .map(|n| format!("history-down-p{n}"))
        .find(|name| {
            cluster::owner_of(&nodes, nodes[0].keyslot(&format!("dibs:{name}"))) != history
        })
        .unwrap();
    let seed = addrs[(history + 1) % addrs.len()].clone();
    nodes[history].kill();
    let spec = ConnSpec::from_map(&[
        (
            "uri".into(),
            SpecValue::Str(format!("redis+cluster://{seed}")),
        ),
        ("timeout-ms".into(), SpecValue::Int(1000)),
        ("durable".into(), SpecValue::Str("off".into())),
    ])
    .unwrap();
    let Outcome::Ran { ending, .. } = Locker::new(spec)
        .unwrap()
        .execute(&LockParams::from_secs(&name, 10, 0).unwrap(), || ())
        .unwrap()
    else {
        panic!("its master is up: it runs")
    };
    let warning = ending.warning().expect("said");
    eprintln!("{warning}");
    assert!(
        warning.contains("was not recorded in its job's history"),
        "{warning}"
    );
    assert!(!warning.contains("ACL"), "{warning}");
}
