//! A Redis Cluster whose nodes answer a byte at a time: every command's reply is bounded as a
//! whole from its send, as on a single server (issue 43). The nodes announce proxies started by
//! the test (`cluster-announce-port`), so that every connection, the seeds' and the slots', goes
//! through one that can trickle.

#[path = "common/cluster.rs"]
mod cluster;
mod common;
#[path = "common/topology.rs"]
mod topology;

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
