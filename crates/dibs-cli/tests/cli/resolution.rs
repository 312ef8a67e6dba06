//! Name resolution within the connect timeout: a silent DNS server, and a host name whose first
//! address is blackholed, for plain TCP and for TLS.
//!
//! Each case runs `dibs run` in a private mount namespace (`unshare -m`, as root) whose
//! `/etc/hosts` and `/etc/resolv.conf` are this test's own: the names resolve through the
//! system resolver as in production, and nothing outside the test sees them. Where namespaces are
//! not allowed, the tests say so and pass, unless `DIBS_REQUIRE_NAMESPACES=1` (the test command
//! sets it) makes that a failure.

// The core's test fixtures (a redis-server of the test's own, a throwaway PKI), shared.
use crate::common;

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::pki::Pki;
use common::RedisServer;
use redis::io::tcp::socket2::{Domain, Socket, Type};

/// A private `/etc/hosts` and `/etc/resolv.conf`, written to a temporary folder.
struct Names {
    dir: PathBuf,
}

impl Names {
    fn new(hosts: &str, resolv: &str) -> Names {
        let dir = std::env::temp_dir().join(format!("dibs-names-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("hosts"), hosts).unwrap();
        std::fs::write(dir.join("resolv.conf"), resolv).unwrap();
        Names { dir }
    }

    /// Runs `program args` where these files are the system's; `None` where namespaces are
    /// not allowed here.
    fn run(&self, program: &str, args: &[&str]) -> Option<(Output, Duration)> {
        let script = r#"mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf && shift 2 && exec "$@""#;
        let started = Instant::now();
        let out = Command::new("unshare")
            .args(["-m", "--", "sh", "-c", script, "sh"])
            .arg(self.dir.join("hosts"))
            .arg(self.dir.join("resolv.conf"))
            .arg(program)
            .args(args)
            .output()
            .expect("run unshare");
        let took = started.elapsed();
        if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("unshare failed")
        {
            assert!(
                std::env::var("DIBS_REQUIRE_NAMESPACES").as_deref() != Ok("1"),
                "DIBS_REQUIRE_NAMESPACES=1, but no mount namespace could be made: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            eprintln!("skipped: no mount namespace here (run as root to test name resolution)");
            return None;
        }
        Some((out, took))
    }

    /// `dibs run` on `uri` with `timeout-ms` and more conn keys; the command prints "ran".
    fn dibs(&self, uri: &str, timeout_ms: u64, opts: &[String]) -> Option<(Output, Duration)> {
        let timeout = format!("timeout-ms={timeout_ms}");
        let mut args = vec!["run", "--redis", uri, "--redis-opt", &timeout];
        for opt in opts {
            args.extend(["--redis-opt", opt]);
        }
        args.extend([
            "--lock",
            "resolution",
            "--at-most",
            "10s",
            "--",
            "echo",
            "ran",
        ]);
        self.run(env!("CARGO_BIN_EXE_dibs"), &args)
    }
}

impl Drop for Names {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A DNS server that reads queries and never answers, on 127.0.0.77:53 (port 53 needs root;
/// without it, the namespace could not be made either). `None` when the port cannot be had.
fn silent_dns() -> Option<UdpSocket> {
    UdpSocket::bind("127.0.0.77:53").ok()
}

/// A TCP listener on `addr` whose accept queue is full, so that a connect to it hangs without an
/// answer, as to a blackholed address. The connections that fill it are kept with it.
struct Blackhole {
    _listener: Socket,
    _filled: Vec<TcpStream>,
}

fn blackhole(addr: SocketAddr) -> Blackhole {
    let listener = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    listener.set_reuse_address(true).unwrap();
    listener.bind(&addr.into()).unwrap();
    listener.listen(0).unwrap();
    let mut filled = Vec::new();
    while let Ok(stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
        filled.push(stream);
        assert!(filled.len() < 64, "the accept queue of {addr} never filled");
    }
    Blackhole {
        _listener: listener,
        _filled: filled,
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The CA to trust and the client certificate to present, as `--conn-opt`s would give them.
fn ca_opt(pki: &Pki) -> Vec<String> {
    pki.conn_keys("client")
        .into_iter()
        .map(|(key, path)| format!("{key}={path}"))
        .collect()
}

fn tls_server(pki: &Pki, extra: &[&str]) -> RedisServer {
    RedisServer::start_tls_with(pki, extra)
}

#[test]
fn a_silent_dns_server_costs_the_connect_timeout_not_the_resolvers() {
    let Some(_dns) = silent_dns() else {
        eprintln!("skipped: port 53 needs root");
        return;
    };
    // The resolver's own wait: 2 tries of 5 s each, per query.
    let names = Names::new(
        "127.0.0.1 localhost\n",
        "nameserver 127.0.0.77\noptions timeout:5 attempts:2\n",
    );
    // The fault is real: the system resolver itself waits.
    let Some((out, took)) = names.run("timeout", &["2", "getent", "hosts", "dibs-silent.test"])
    else {
        return;
    };
    assert_eq!(
        out.status.code(),
        Some(124),
        "getent should hang: {}",
        text(&out.stderr)
    );
    assert!(took >= Duration::from_secs(2), "{took:?}");

    let pki = Pki::new();
    let plain = "redis://dibs-silent.test:6379".to_owned();
    let tls = "rediss://dibs-silent.test:6379".to_owned();
    for (uri, opts) in [(plain, Vec::new()), (tls, ca_opt(&pki))] {
        let (out, took) = names.dibs(&uri, 500, &opts).unwrap();
        eprintln!("silent DNS, {uri}, timeout-ms 500: dibs gave up after {took:?}");
        assert_eq!(out.status.code(), Some(69), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "", "nothing ran");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("dibs-silent.test") && stderr.contains("no answer within 500 ms"),
            "{stderr}"
        );
        // 500 ms to connect, and the start of a process in a namespace.
        assert!(took < Duration::from_millis(1500), "{uri}: waited {took:?}");
    }
}

#[test]
fn a_blackholed_first_address_leaves_the_others_their_share() {
    let pki = Pki::new();
    // Redis on 127.0.0.77; a blackhole on 127.0.0.1 at the same port, which the resolver lists
    // first (the longer prefix match with the source address, RFC 6724 rule 9).
    let plain = RedisServer::start_with(&["--bind", "127.0.0.77"]);
    let tls = tls_server(&pki, &["--bind", "127.0.0.77"]);
    let names = Names::new(
        "127.0.0.77 dibs-multi.test\n127.0.0.1 dibs-multi.test\n",
        "nameserver 127.0.0.77\n",
    );
    let Some((order, _)) = names.run("getent", &["ahostsv4", "dibs-multi.test"]) else {
        return;
    };
    let order = text(&order.stdout);
    assert!(
        order.starts_with("127.0.0.1 "),
        "the test needs the blackholed address first; the resolver gives:\n{order}"
    );
    // TLS too: dibs connects to each address itself and checks the certificate against the
    // name, which the server's certificate holds.
    for (server, scheme, opts) in [
        (&plain, "redis", Vec::new()),
        (&tls, "rediss", ca_opt(&pki)),
    ] {
        let port = server.port;
        let _hole = blackhole(SocketAddr::from(([127, 0, 0, 1], port)));
        let uri = format!("{scheme}://dibs-multi.test:{port}");
        let (out, took) = names.dibs(&uri, 1000, &opts).unwrap();
        eprintln!("{uri}, first address blackholed, timeout-ms 1000: the lock cycle took {took:?}");
        assert_eq!(out.status.code(), Some(0), "{uri}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "ran\n");
        // Half of the connect timeout on the blackhole, then the second address.
        assert!(
            took >= Duration::from_millis(500) && took < Duration::from_millis(1500),
            "{uri}: {took:?}"
        );
    }
}

#[test]
fn a_first_address_that_accepts_but_never_speaks_tls_leaves_the_next_its_share() {
    let pki = Pki::new();
    // TLS Redis on 127.0.0.77; on 127.0.0.1 at the same port, which the resolver lists first, a
    // listener that completes TCP connects and never says a word: the TLS handshake gets no
    // answer there.
    let tls = tls_server(&pki, &["--bind", "127.0.0.77"]);
    let port = tls.port;
    let silent = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let names = Names::new(
        "127.0.0.77 dibs-multi.test\n127.0.0.1 dibs-multi.test\n",
        "nameserver 127.0.0.77\n",
    );
    let Some((order, _)) = names.run("getent", &["ahostsv4", "dibs-multi.test"]) else {
        return;
    };
    let order = text(&order.stdout);
    assert!(
        order.starts_with("127.0.0.1 "),
        "the test needs the silent address first; the resolver gives:\n{order}"
    );
    let uri = format!("rediss://dibs-multi.test:{port}");
    let (out, took) = names.dibs(&uri, 1000, &ca_opt(&pki)).unwrap();
    eprintln!(
        "{uri}, first address silent after TCP, timeout-ms 1000: the lock cycle took {took:?}"
    );
    assert_eq!(out.status.code(), Some(0), "{uri}: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "ran\n");
    // Half of the connect timeout on the silent address, then the second one.
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_millis(1500),
        "{uri}: {took:?}"
    );
    drop(silent);
}
