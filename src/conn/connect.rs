//! A connection to one `host:port` by a deadline, plain or TLS: the name resolved within it
//! (the system resolver has no timeout of its own), each address tried with its share of what
//! is left, Nagle off and TCP keepalive on.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use redis::io::tcp::TcpSettings;
use redis::{
    ConnectionAddr, ConnectionInfo, ErrorKind, IntoConnectionInfo, RedisConnectionInfo, RedisError,
    RedisResult,
};

use super::wire::{Socket, Stream, Wire};
use super::Conn;
use crate::connspec::ServerSpec;
use crate::inflight::InFlight;
use crate::tls::{self, TlsClient, TlsConfig};

/// Connection info without handshake commands from the redis crate: it would pipeline AUTH,
/// CLIENT SETINFO and SELECT and wait out the read timeout once per reply, so a frozen server
/// would hold a new connection for several timeouts. [`handshake`](super::open::handshake) sends
/// AUTH and SELECT itself.
pub(super) fn plain_info(addr: ConnectionAddr) -> RedisResult<ConnectionInfo> {
    Ok(addr
        .into_connection_info()?
        .set_redis_settings(RedisConnectionInfo::default().set_skip_set_lib_name())
        .set_tcp_settings(tcp_settings()))
}

const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
#[cfg(any(target_os = "linux", target_os = "macos"))]
const KEEPALIVE_PROBES: u32 = 3;

/// Nagle off: the redis crate leaves it on, which can double the latency of a small request.
/// TCP keepalive on: probes after 30 s idle keep NAT and load-balancer mappings alive, and find
/// a dead peer within 30 + 3 x 10 s even without a request.
pub(super) fn tcp_settings() -> TcpSettings {
    use redis::io::tcp::socket2::TcpKeepalive;
    let keepalive = TcpKeepalive::new()
        .with_time(KEEPALIVE_IDLE)
        .with_interval(KEEPALIVE_INTERVAL);
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    let keepalive = keepalive.with_retries(KEEPALIVE_PROBES);
    TcpSettings::default()
        .set_nodelay(true)
        .set_keepalive(keepalive)
}

/// A connection to `host:port` by `deadline`, over TLS when `tls` is set (the certificate checked
/// against `host`), without AUTH or SELECT.
pub(super) fn connect_node(
    host: &str,
    port: u16,
    tls: Option<&TlsConfig>,
    spec: &ServerSpec,
    deadline: Instant,
) -> RedisResult<Conn> {
    match tls {
        Some(config) => connect_tls(&TlsClient::new(config, host)?, host, port, spec, deadline),
        None => connect_tcp(host, port, spec, deadline),
    }
}

/// A plain TCP connection to `host:port` by `deadline`: the name is resolved within it, then
/// each address is tried with an equal share of what is left, so a blackholed first address
/// (dual stack, several A records) cannot use up the time of the others.
pub(super) fn connect_tcp(
    host: &str,
    port: u16,
    spec: &ServerSpec,
    deadline: Instant,
) -> RedisResult<Conn> {
    let addrs = resolve(host, port, deadline)?;
    let mut last_error = None;
    for (i, addr) in addrs.iter().enumerate() {
        let share = left(deadline)? / (addrs.len() - i) as u32;
        match tcp_socket(addr, Instant::now() + share) {
            Ok(socket) => return Ok(Conn::Single(Box::new(Wire::plain(socket, spec.db())))),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.expect("at least one address was tried").into())
}

/// A TCP connection to `addr` by `until`, set up as [`tcp_settings`] says.
fn tcp_socket(addr: &SocketAddr, until: Instant) -> std::io::Result<Socket> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(std::io::ErrorKind::TimedOut.into());
    }
    let tcp = std::net::TcpStream::connect_timeout(addr, left)?;
    apply_tcp_settings(&tcp)?;
    Ok(Socket::new(Stream::Tcp(tcp), until))
}

/// A TLS connection to `host:port` by `deadline`, as [`connect_tcp`] makes a plain one: each
/// address with an equal share of what is left, for its TCP connect and its TLS handshake, the
/// certificate checked against `host`.
pub(super) fn connect_tls(
    client: &TlsClient,
    host: &str,
    port: u16,
    spec: &ServerSpec,
    deadline: Instant,
) -> RedisResult<Conn> {
    let addrs = resolve(host, port, deadline)?;
    let mut last_error = None;
    for (i, addr) in addrs.iter().enumerate() {
        let share = left(deadline)? / (addrs.len() - i) as u32;
        let until = Instant::now() + share;
        let stream = tcp_socket(addr, until)
            .map_err(RedisError::from)
            .and_then(|socket| tls::handshake(client, socket));
        match stream {
            Ok(stream) => {
                let wire = Wire::tls(stream, client.presents_cert(), spec.db());
                return Ok(Conn::Single(Box::new(wire)));
            }
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.expect("at least one address was tried"))
}

/// What [`tcp_settings`] sets, on a socket dibs opened itself.
fn apply_tcp_settings(socket: &std::net::TcpStream) -> std::io::Result<()> {
    use redis::io::tcp::socket2::{SockRef, TcpKeepalive};
    socket.set_nodelay(true)?;
    let keepalive = TcpKeepalive::new()
        .with_time(KEEPALIVE_IDLE)
        .with_interval(KEEPALIVE_INTERVAL);
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    let keepalive = keepalive.with_retries(KEEPALIVE_PROBES);
    SockRef::from(socket).set_tcp_keepalive(&keepalive)
}

/// The addresses of `host:port` (at least one), by `deadline`: the system resolver has no timeout
/// of its own, so it runs on a helper thread, one lookup per name at a time in the process.
fn resolve(host: &str, port: u16, deadline: Instant) -> RedisResult<Vec<SocketAddr>> {
    static RESOLVING: LazyLock<InFlight<(String, u16), Vec<SocketAddr>>> =
        LazyLock::new(InFlight::new);
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => {
            let name = (host.to_owned(), port);
            let lookup = {
                let name = name.clone();
                move || {
                    name.to_socket_addrs()
                        .map(Iterator::collect)
                        .map_err(RedisError::from)
                }
            };
            RESOLVING.run(&name, deadline, &lookup)?
        }
    };
    if addrs.is_empty() {
        return Err(RedisError::from((
            ErrorKind::Io,
            "the host name has no address",
            host.to_owned(),
        )));
    }
    Ok(addrs)
}

/// What is left until `deadline`; a timeout error once nothing is.
pub(super) fn left(deadline: Instant) -> RedisResult<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(std::io::Error::from(std::io::ErrorKind::TimedOut).into());
    }
    Ok(left)
}
