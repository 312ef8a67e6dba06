//! Replicated topologies for failover tests, all on loopback and started by the test: a replica
//! of one master, Sentinels, a cluster with one replica per master, and a `tc` filter that stalls
//! one replication flow (see /work/shared/faults/README.md for why a frozen replica would not do).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::common::pki::Pki;
use crate::common::{connect_to, free_port, AdminTls, RedisServer};

/// Waits for `done`, at most `limit`; panics with `what` when it runs out.
pub fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        sleep(Duration::from_millis(50));
    }
    started.elapsed()
}

/// A direct connection to a loopback port, without a password.
pub fn connect(port: u16) -> Option<redis::Connection> {
    redis::Client::open(format!("redis://127.0.0.1:{port}"))
        .ok()?
        .get_connection_with_timeout(Duration::from_secs(1))
        .ok()
}

/// One field of `INFO` on the server at `port` ("" when absent or unreachable).
pub fn info_field(port: u16, field: &str) -> String {
    let Some(mut conn) = connect(port) else {
        return String::new();
    };
    let info: String = redis::cmd("INFO").query(&mut conn).unwrap_or_default();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or("")
        .trim()
        .to_owned()
}

/// A numeric `INFO` field (panics when absent).
pub fn info_number(port: u16, field: &str) -> i64 {
    let text = info_field(port, field);
    text.parse()
        .unwrap_or_else(|_| panic!("INFO {field} on {port}: {text:?}"))
}

/// Whether `key` exists on the server at `port`, read with `READONLY` first so that a cluster
/// replica answers for its master's slots instead of redirecting.
pub fn exists_on(port: u16, key: &str, cluster: bool) -> bool {
    let mut conn = connect(port).expect("connect");
    if cluster {
        let _: () = redis::cmd("READONLY").query(&mut conn).unwrap();
    }
    redis::cmd("EXISTS").arg(key).query(&mut conn).unwrap()
}

/// One field of `INFO replication` on `server`, through its admin connection (over TLS too).
fn info(server: &RedisServer, field: &str) -> String {
    let text: String = redis::cmd("INFO")
        .arg("replication")
        .query(&mut server.admin())
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// A replica of `master` (directly, or through `via`'s port), in sync.
pub fn replica_of(master_port: u16, via: Option<u16>) -> RedisServer {
    let port = via.unwrap_or(master_port).to_string();
    synced(RedisServer::start_with(&[
        "--replicaof",
        "127.0.0.1",
        &port,
    ]))
}

/// `replica`, once it has synced with its master.
pub fn synced(replica: RedisServer) -> RedisServer {
    let deadline = Instant::now() + Duration::from_secs(10);
    while info(&replica, "master_link_status") != "up" {
        assert!(Instant::now() < deadline, "the replica never synced");
        sleep(Duration::from_millis(50));
    }
    replica
}

/// Waits until `master` counts `n` connected replicas.
pub fn wait_for_replicas(master: &RedisServer, n: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while info(master, "connected_slaves") != n {
        assert!(
            Instant::now() < deadline,
            "the master never saw {n} replicas"
        );
        sleep(Duration::from_millis(50));
    }
}

/// A `redis-server --sentinel` watching `mymaster` at `127.0.0.1:master_port`.
pub struct Sentinel {
    pub port: u16,
    dir: PathBuf,
    child: Child,
    tls: Option<AdminTls>,
    /// The password of its default user (`requirepass`), for the helpers here.
    password: Option<String>,
}

/// How a Sentinel is secured, beyond a plain one.
#[derive(Default)]
pub struct Secured<'a> {
    /// TLS only, to clients and to the servers it watches, with the PKI's server certificate,
    /// client certificates required.
    pub pki: Option<&'a Pki>,
    /// `requirepass` for its default user, also used between Sentinels.
    pub password: Option<&'a str>,
    /// More `sentinel.conf` lines (ACL users, `sentinel auth-pass`).
    pub conf: &'a str,
}

impl Sentinel {
    pub fn start(master_port: u16, down_after_ms: u64, failover_timeout_ms: u64) -> Sentinel {
        Sentinel::start_secured(
            master_port,
            down_after_ms,
            failover_timeout_ms,
            &Secured::default(),
        )
    }

    pub fn start_secured(
        master_port: u16,
        down_after_ms: u64,
        failover_timeout_ms: u64,
        secured: &Secured,
    ) -> Sentinel {
        let port = free_port();
        let mut conf_extra = String::new();
        match secured.pki {
            None => conf_extra.push_str(&format!("port {port}\n")),
            Some(pki) => conf_extra.push_str(&format!(
                "port 0\ntls-port {port}\ntls-cert-file {}\ntls-key-file {}\n\
                 tls-ca-cert-file {}\ntls-replication yes\n",
                pki.path("server.pem").display(),
                pki.path("server.key").display(),
                pki.path("ca.pem").display()
            )),
        }
        if let Some(password) = secured.password {
            conf_extra.push_str(&format!(
                "requirepass {password}\nsentinel sentinel-pass {password}\n"
            ));
        }
        let dir = std::env::temp_dir().join(format!("dibs-sentinel-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("sentinel.conf");
        std::fs::write(
            &conf,
            format!(
                "{conf_extra}bind 127.0.0.1\ndir {}\nlogfile {}\n\
                 sentinel monitor mymaster 127.0.0.1 {master_port} 2\n\
                 sentinel down-after-milliseconds mymaster {down_after_ms}\n\
                 sentinel failover-timeout mymaster {failover_timeout_ms}\n\
                 sentinel parallel-syncs mymaster 1\n{}",
                dir.display(),
                dir.join("sentinel.log").display(),
                secured.conf
            ),
        )
        .unwrap();
        let child = Command::new(crate::common::redis_server())
            .arg(&conf)
            .arg("--sentinel")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server --sentinel");
        wait_for("the sentinel to listen", Duration::from_secs(10), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Sentinel {
            port,
            dir,
            child,
            tls: secured.pki.map(AdminTls::of),
            password: secured.password.map(str::to_owned),
        }
    }

    /// A connection to this Sentinel, over TLS and authenticated as it needs.
    fn conn(&self) -> Option<redis::Connection> {
        let auth = self.password.as_deref().map(|p| (None, p));
        connect_to(self.port, self.tls.as_ref(), auth).ok()
    }

    /// The master's port this Sentinel names now.
    pub fn master_port(&self) -> Option<u16> {
        let mut conn = self.conn()?;
        let reply: Option<(String, String)> = redis::cmd("SENTINEL")
            .arg(&["get-master-addr-by-name", "mymaster"])
            .query(&mut conn)
            .ok()?;
        reply?.1.parse().ok()
    }

    /// How many replicas and other Sentinels this one knows of.
    pub fn known(&self) -> (usize, usize) {
        let Some(mut conn) = self.conn() else {
            return (0, 0);
        };
        let replicas: Vec<redis::Value> = redis::cmd("SENTINEL")
            .arg(&["replicas", "mymaster"])
            .query(&mut conn)
            .unwrap_or_default();
        let others: Vec<redis::Value> = redis::cmd("SENTINEL")
            .arg(&["sentinels", "mymaster"])
            .query(&mut conn)
            .unwrap_or_default();
        (replicas.len(), others.len())
    }

    /// This Sentinel's log, for a failure message.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("sentinel.log")).unwrap_or_default()
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One line of `CLUSTER NODES`.
#[derive(Debug, Clone)]
pub struct NodeLine {
    pub id: String,
    pub port: u16,
    pub flags: String,
    /// The master's id for a replica, "-" for a master.
    pub master: String,
    pub slots: Vec<(u16, u16)>,
}

impl NodeLine {
    pub fn is_master(&self) -> bool {
        self.flags.split(',').any(|f| f == "master")
    }

    pub fn failing(&self) -> bool {
        self.flags
            .split(',')
            .any(|f| matches!(f, "fail" | "fail?" | "handshake" | "noaddr"))
    }

    pub fn serves(&self, slot: u16) -> bool {
        self.slots.iter().any(|&(lo, hi)| (lo..=hi).contains(&slot))
    }
}

/// `CLUSTER NODES` as seen by the node at `port` (empty when it does not answer).
pub fn cluster_nodes(port: u16) -> Vec<NodeLine> {
    let Some(mut conn) = connect(port) else {
        return Vec::new();
    };
    let Ok(text) = redis::cmd("CLUSTER")
        .arg("NODES")
        .query::<String>(&mut conn)
    else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let port = fields[1].split(['@', ':']).nth(1).unwrap().parse().unwrap();
            let slots = fields[8..]
                .iter()
                .filter(|r| !r.starts_with('['))
                .map(|r| {
                    let (lo, hi) = r.split_once('-').unwrap_or((r, r));
                    (lo.parse().unwrap(), hi.parse().unwrap())
                })
                .collect();
            NodeLine {
                id: fields[0].to_owned(),
                port,
                flags: fields[2].to_owned(),
                master: fields[3].to_owned(),
                slots,
            }
        })
        .collect()
}

/// Whether `CLUSTER INFO` on `port` says `cluster_state:ok`.
pub fn cluster_ok(port: u16) -> bool {
    let Some(mut conn) = connect(port) else {
        return false;
    };
    redis::cmd("CLUSTER")
        .arg("INFO")
        .query::<String>(&mut conn)
        .is_ok_and(|info| info.contains("cluster_state:ok"))
}

/// Three masters with one replica each (`redis-cli --cluster create --cluster-replicas 1`),
/// back once every node sees 3 healthy masters and 3 healthy replicas, and every replica is
/// in sync.
pub fn start_cluster_with_replicas(node_timeout_ms: u64) -> Vec<RedisServer> {
    start_cluster_with_replicas_and(node_timeout_ms, &[])
}

/// The same, with `extra` arguments to every node.
pub fn start_cluster_with_replicas_and(node_timeout_ms: u64, extra: &[&str]) -> Vec<RedisServer> {
    let timeout = node_timeout_ms.to_string();
    let mut args = vec![
        "--cluster-enabled",
        "yes",
        "--cluster-node-timeout",
        &timeout,
    ];
    args.extend_from_slice(extra);
    let nodes: Vec<RedisServer> = (0..6).map(|_| RedisServer::start_with(&args)).collect();
    let addrs: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let status = Command::new(crate::common::redis_cli())
        .args(["--cluster", "create"])
        .args(&addrs)
        .args(["--cluster-replicas", "1", "--cluster-yes"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("redis-cli (apt-get install redis-tools)");
    assert!(status.success(), "redis-cli --cluster create failed");
    wait_for("the cluster to settle", Duration::from_secs(20), || {
        nodes.iter().all(|n| {
            let lines = cluster_nodes(n.port);
            let masters = lines
                .iter()
                .filter(|l| l.is_master() && !l.failing())
                .count();
            let replicas = lines
                .iter()
                .filter(|l| !l.is_master() && !l.failing() && l.master != "-")
                .count();
            let synced = lines.iter().any(|l| l.port == n.port && l.is_master())
                || info_field(n.port, "master_link_status") == "up";
            masters == 3 && replicas == 3 && synced && cluster_ok(n.port)
        })
    });
    nodes
}

/// The local port of the replica's end of its replication link to the master on `master_port`,
/// as the master sees it (`CLIENT LIST TYPE replica`): what a `LoopbackStall` drops segments to.
pub fn replica_link_port(master_port: u16) -> u16 {
    let replicas: String = redis::cmd("CLIENT")
        .arg(&["LIST", "TYPE", "replica"])
        .query(&mut connect(master_port).unwrap())
        .unwrap();
    let ports: Vec<u16> = replicas
        .lines()
        .filter_map(|l| l.split_whitespace().find_map(|f| f.strip_prefix("addr=")))
        .map(|addr| addr.rsplit(':').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ports.len(), 1, "one replica link: {replicas}");
    ports[0]
}

/// Waits (up to 5 s) for a client of the server on `port` to be blocked in `cmd` (as `CLIENT
/// LIST` says), and kills that connection: a reply lost while a command waits. Its id, or None
/// when no such client came.
pub fn kill_client_in(port: u16, cmd: &str) -> Option<String> {
    let mut admin = connect(port).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let marker = format!(" cmd={cmd} ");
    while Instant::now() < deadline {
        let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut admin).unwrap();
        if let Some(line) = list.lines().find(|l| l.contains(&marker)) {
            let id = line
                .split_whitespace()
                .find_map(|f| f.strip_prefix("id="))
                .unwrap()
                .to_owned();
            let _: i64 = redis::cmd("CLIENT")
                .arg(&["KILL", "ID", &id])
                .query(&mut admin)
                .unwrap();
            return Some(id);
        }
        sleep(Duration::from_millis(5));
    }
    None
}

/// Whether `tc` can be run at all.
pub fn tc_available() -> bool {
    Command::new("tc")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// A classic-BPF filter on `lo` egress that drops the IPv4 TCP segments from port `from` to
/// port `to`, and nothing else; removed on drop (with the `clsact` qdisc, when this guard added
/// it), so that a failing test leaves no filter behind.
pub struct LoopbackStall {
    added_qdisc: bool,
    /// Held while the filter is in place: the tests of the compatibility matrix run one server's
    /// suites beside another's, and a stall of one must not remove the other's (the qdisc goes
    /// with its last filter). Unlocked when dropped, after the filter is gone.
    _one_at_a_time: std::fs::File,
}

/// The filter's priority: one of its own, so that removing it touches no other filter.
const STALL_PRIO: &str = "4917";

impl LoopbackStall {
    pub fn drop_segments(from: u16, to: u16) -> LoopbackStall {
        let one_at_a_time = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(std::env::temp_dir().join("dibs-tests-loopback-stall.lock"))
            .expect("the stall's lock file");
        // SAFETY: flock(2) on a descriptor this function owns; released when the file closes.
        let locked = unsafe {
            libc::flock(
                std::os::fd::AsRawFd::as_raw_fd(&one_at_a_time),
                libc::LOCK_EX,
            )
        };
        assert_eq!(
            locked,
            0,
            "the stall's lock: {}",
            std::io::Error::last_os_error()
        );
        let qdisc = Command::new("tc")
            .args(["qdisc", "add", "dev", "lo", "clsact"])
            .output()
            .expect("tc");
        let stderr = String::from_utf8_lossy(&qdisc.stderr);
        let added_qdisc = qdisc.status.success();
        assert!(
            added_qdisc || stderr.contains("File exists") || stderr.contains("Exclusivity flag"),
            "tc qdisc add dev lo clsact (needs root): {stderr}"
        );
        if !added_qdisc {
            eprintln!("note: lo already had a clsact qdisc; only this test's filter is removed");
        }
        // The guard exists before the filter does: a failed add still cleans up the qdisc.
        let guard = LoopbackStall {
            added_qdisc,
            _one_at_a_time: one_at_a_time,
        };
        let bytecode = format!(
            "13,40 0 0 12,21 0 10 2048,48 0 0 23,21 0 8 6,40 0 0 20,69 6 0 8191,177 0 0 14,\
             72 0 0 14,21 0 3 {from},72 0 0 16,21 0 1 {to},6 0 0 2,6 0 0 0"
        );
        let filter = Command::new("tc")
            .args(["filter", "add", "dev", "lo", "egress", "protocol", "ip"])
            .args(["prio", STALL_PRIO, "bpf", "da", "bytecode", &bytecode])
            .output()
            .expect("tc");
        assert!(
            filter.status.success(),
            "tc filter add (bpf da): {}",
            String::from_utf8_lossy(&filter.stderr)
        );
        guard
    }
}

impl Drop for LoopbackStall {
    fn drop(&mut self) {
        let args: &[&str] = if self.added_qdisc {
            &["qdisc", "del", "dev", "lo", "clsact"]
        } else {
            &["filter", "del", "dev", "lo", "egress", "prio", STALL_PRIO]
        };
        let removed = Command::new("tc").args(args).status();
        if !removed.is_ok_and(|s| s.success()) {
            eprintln!("WARNING: `tc {}` failed: remove it by hand", args.join(" "));
        }
    }
}
