//! Connects to a frozen server give up within the connect timeout, and what they leave behind
//! (threads, sockets) stays bounded however many times they are retried.

use crate::common;

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::RedisServer;
use dibs::{ConnSpec, Error, LockParams, Locker, SpecValue};

/// The tests count this process's threads and file descriptors: one at a time, each alone in its
/// process (`common::alone`).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const ATTEMPTS: usize = 100;

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

fn fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// dibs's own threads (they are named `dibs-...`).
fn dibs_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter(|task| {
            let comm = task.as_ref().unwrap().path().join("comm");
            std::fs::read_to_string(comm).is_ok_and(|name| name.starts_with("dibs-"))
        })
        .count()
}

/// This process's open sockets connected to `port` on loopback (a client's side, not a
/// listener's or a proxy's accepted side).
fn sockets_to(port: u16) -> usize {
    let peer = format!(":{port:04X} ");
    let inodes: Vec<String> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|text| {
            text.lines()
                .skip(1)
                .filter_map(|line| {
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    // local, remote, ..., inode (the 10th field)
                    (format!("{} ", fields[2]).ends_with(&peer)).then(|| fields[9].to_owned())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.unwrap().path()).ok())
        .filter(|link| {
            let link = link.to_string_lossy();
            inodes
                .iter()
                .any(|inode| link == format!("socket:[{inode}]"))
        })
        .count()
}

fn locker(uri: &str) -> Locker {
    Locker::new(
        ConnSpec::from_map(&[
            ("uri".into(), SpecValue::Str(uri.to_owned())),
            ("timeout-ms".into(), SpecValue::Int(50)),
        ])
        .unwrap(),
    )
    .unwrap()
}

/// `ATTEMPTS` lock calls, each a timeout; returns the threads and fds they added.
fn retry_against_frozen(locker: &Locker, what: &str) -> (usize, usize) {
    let (threads_before, fds_before) = (threads(), fds());
    let params = LockParams::from_secs("frozen", 10, 0).unwrap();
    let started = Instant::now();
    for i in 0..ATTEMPTS {
        let err = locker.execute(&params, || ()).unwrap_err();
        assert!(matches!(err, Error::Timeout(_)), "attempt {i}: {err:?}");
    }
    let took = started.elapsed();
    // Lets the test proxy's threads for connections just closed end.
    std::thread::sleep(Duration::from_millis(200));
    let added = (
        threads().saturating_sub(threads_before),
        fds().saturating_sub(fds_before),
    );
    eprintln!(
        "{what}: {ATTEMPTS} connect attempts (timeout 50 ms) took {took:?} and left {} threads, {} fds",
        added.0, added.1
    );
    assert!(
        took < Duration::from_millis(ATTEMPTS as u64 * 50 + 2000),
        "{took:?}"
    );
    added
}

#[test]
fn retried_connects_to_a_frozen_unix_socket_server_leave_a_bounded_number_of_threads() {
    if !common::alone(
        "pileup::retried_connects_to_a_frozen_unix_socket_server_leave_a_bounded_number_of_threads",
    ) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    use redis::io::tcp::socket2::{Domain, SockAddr, Socket, Type};
    let dir = std::env::temp_dir().join(format!("dibs-pileup-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("redis.sock");
    let server = RedisServer::start_with(&["--unixsocket", sock.to_str().unwrap()]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !Path::new(&sock).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    // Frozen, with its listen backlog full: a unix connect then blocks until it thaws.
    server.signal("-STOP");
    let mut fillers = Vec::new();
    loop {
        let s = Socket::new(Domain::UNIX, Type::STREAM, None).unwrap();
        s.set_nonblocking(true).unwrap();
        match s.connect(&SockAddr::unix(&sock).unwrap()) {
            Ok(()) => fillers.push(s),
            Err(_) => break,
        }
        assert!(fillers.len() < 100_000, "the backlog never filled");
    }
    let (threads, fds) = retry_against_frozen(
        &locker(&format!("unix://{}", sock.display())),
        "frozen unix",
    );
    server.signal("-CONT");
    assert!(threads <= 2, "{threads} threads left behind");
    assert!(fds <= 2, "{fds} fds left behind");
    drop(fillers);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn retried_connects_to_a_frozen_cluster_node_leave_a_bounded_number_of_threads_and_sockets() {
    if !common::alone("pileup::retried_connects_to_a_frozen_cluster_node_leave_a_bounded_number_of_threads_and_sockets") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // One cluster-enabled node is enough: the cluster client's connect talks to the seed first.
    // (With the redis crate 1.8, its connection setup times out before the unbounded PING.)
    let server = RedisServer::start_with(&["--cluster-enabled", "yes"]);
    server.signal("-STOP");
    let (threads, fds) = retry_against_frozen(
        &locker(&format!("redis+cluster://127.0.0.1:{}", server.port)),
        "frozen cluster node",
    );
    server.signal("-CONT");
    assert!(threads <= 2, "{threads} threads left behind");
    assert!(fds <= 2, "{fds} fds left behind");
}

#[test]
fn retried_cluster_connects_whose_ping_gets_no_answer_leave_a_bounded_number_of_threads() {
    if !common::alone("pileup::retried_cluster_connects_whose_ping_gets_no_answer_leave_a_bounded_number_of_threads") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // The node answers each connection's first request (the cluster client's PING), then
    // nothing more: its request for the slots waits for an answer that never comes.
    let server = RedisServer::start_with(&["--cluster-enabled", "yes"]);
    let proxy = Proxy::start_answering_once(server.port);
    let threads_before = dibs_threads();
    let _ = retry_against_frozen(
        &locker(&format!("redis+cluster://127.0.0.1:{}", proxy.port)),
        "cluster node that answers the setup only",
    );
    // The proxy keeps each connection whose bytes it holds, with its threads: count dibs's own
    // threads, and dibs's sockets to the proxy.
    let threads = dibs_threads().saturating_sub(threads_before);
    let sockets = sockets_to(proxy.port);
    eprintln!("left: {threads} dibs threads, {sockets} sockets to the proxy");
    assert!(threads <= 2, "{threads} dibs threads left behind");
    assert!(sockets <= 2, "{sockets} sockets to the proxy left behind");
}
