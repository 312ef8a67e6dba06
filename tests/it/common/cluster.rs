//! A Redis Cluster of 3 masters for the tests (`tests/it/cluster.rs`): started, and what a test asks
//! of it.
#![allow(dead_code)]

use std::process::{Command, Stdio};

use crate::common::pki::Pki;
use crate::common::topology::{spec_with, wait_until};
use crate::common::RedisServer;
use dibs::Locker;

pub fn cluster_ok(node: &RedisServer) -> bool {
    let info: String = redis::cmd("CLUSTER")
        .arg("INFO")
        .query(&mut node.admin())
        .unwrap();
    info.contains("cluster_state:ok")
}

/// Three masters made into a cluster by `redis-cli --cluster create`; `extra` goes to each node.
pub fn start_cluster(extra: &[&str], auth: Option<&str>) -> (Vec<RedisServer>, Vec<String>) {
    start_cluster_over(None, extra, auth)
}

/// The same, over TLS when `pki` is given: to clients, on the cluster bus and for replication,
/// client certificates required.
pub fn start_cluster_over(
    pki: Option<&Pki>,
    extra: &[&str],
    auth: Option<&str>,
) -> (Vec<RedisServer>, Vec<String>) {
    let mut args = vec!["--cluster-enabled", "yes", "--cluster-node-timeout", "5000"];
    args.extend_from_slice(extra);
    let nodes: Vec<RedisServer> = (0..3)
        .map(|_| match pki {
            Some(pki) => {
                let mut args = args.clone();
                args.extend(["--tls-cluster", "yes", "--tls-replication", "yes"]);
                RedisServer::start_tls_with(pki, &args)
            }
            None => RedisServer::start_with(&args),
        })
        .collect();
    let addrs: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let mut create = Command::new(crate::common::redis_cli());
    create.args(nodes[0].cli_args());
    if let Some(pw) = auth {
        create.args(["-a", pw, "--no-auth-warning"]);
    }
    let status = create
        .args(["--cluster", "create"])
        .args(&addrs)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .stdout(Stdio::null())
        .status()
        .expect("redis-cli (apt-get install redis-tools)");
    assert!(status.success());
    // With a password too: `admin` signs in with the node's `--requirepass`.
    wait_until("the cluster to be ok", || nodes.iter().all(cluster_ok));
    (nodes, addrs)
}

/// A locker for the cluster through its first seed, over TLS with `pki`'s keys when given.
pub fn cluster_locker(addrs: &[String], pki: Option<&Pki>) -> Locker {
    let scheme = if pki.is_some() {
        "rediss+cluster"
    } else {
        "redis+cluster"
    };
    Locker::new(spec_with(&format!("{scheme}://{}", addrs[0]), pki, &[])).unwrap()
}

/// The node (index into `nodes`) that serves `slot`, read from `CLUSTER NODES`.
pub fn owner_of(nodes: &[RedisServer], slot: u16) -> usize {
    let text: String = redis::cmd("CLUSTER")
        .arg("NODES")
        .query(&mut nodes[0].admin())
        .unwrap();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let port: u16 = fields[1].split(['@', ':']).nth(1).unwrap().parse().unwrap();
        for range in &fields[8..] {
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            if let (Ok(lo), Ok(hi)) = (lo.parse::<u16>(), hi.parse::<u16>()) {
                if (lo..=hi).contains(&slot) {
                    return nodes.iter().position(|n| n.port == port).unwrap();
                }
            }
        }
    }
    panic!("no node serves slot {slot}")
}
