//! Opening connections, for every kind of address, and the connection type the pool holds.
//!
//! - A single server (TCP, TLS or a unix socket): one `redis::Client`.
//! - Sentinel: the master's address is asked of the Sentinels (`SENTINEL
//!   get-master-addr-by-name`) for every new connection, so connections made after a failover
//!   reach the new master. A pooled connection to a demoted master fails with READONLY, and the
//!   pool replaces it.
//! - Cluster: the redis crate's cluster connection, which follows MOVED and ASK redirections.
//!
//! Every connect is bounded by the connect timeout, handshake included.

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use redis::cluster::{ClusterClient, ClusterConnection};
use redis::io::tcp::TcpSettings;
use redis::{
    Client, Cmd, Connection, ConnectionAddr, ConnectionInfo, ConnectionLike, ErrorKind,
    IntoConnectionInfo, RedisConnectionInfo, RedisError, RedisResult, Value,
};

use crate::error::{redact, Error, Result};
use crate::spec::{host_port, Address, ConnSpec};

/// A pooled connection.
pub(crate) enum Conn {
    Single(Connection),
    Cluster(Box<ClusterConnection>),
}

impl Conn {
    /// Writes a command without reading its reply, to run after whatever this connection sent
    /// before: Redis runs one connection's commands in order, even those that reach it after the
    /// client gave up (a frozen server that thaws). The connection is then fit only to be
    /// dropped. A cluster connection routes per command and offers no such write: nothing is
    /// sent there.
    pub(crate) fn queue(&mut self, packed: &[u8]) {
        if let Conn::Single(c) = self {
            let _ = c.send_packed_command(packed);
        }
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        match self {
            Conn::Single(c) => c.req_command(cmd),
            Conn::Cluster(c) => c.req_command(cmd),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }

    fn check_connection(&mut self) -> bool {
        match self {
            Conn::Single(c) => c.check_connection(),
            Conn::Cluster(c) => c.check_connection(),
        }
    }

    fn is_open(&self) -> bool {
        match self {
            Conn::Single(c) => c.is_open(),
            Conn::Cluster(c) => c.is_open(),
        }
    }
}

/// Knows how to open a connection for one spec. Building it does no I/O.
pub(crate) enum Opener {
    Direct(Client),
    Sentinel {
        sentinels: Vec<(String, u16)>,
        master: String,
    },
    /// Configuration only, so a panic elsewhere cannot leave it half-changed: this keeps
    /// `Locker` unwind-safe for callers who `catch_unwind` around it.
    Cluster(AssertUnwindSafe<ClusterClient>),
}

impl Opener {
    pub(crate) fn new(spec: &ConnSpec) -> Result<Opener> {
        // Building a client does no I/O, so its errors are about the spec itself.
        let bad_spec = |arg: &'static str, e: RedisError| {
            let why = redact(&e.to_string(), spec.password.as_deref());
            Error::invalid(
                arg,
                format!("{arg} for {} rejected: {why}", spec.endpoint()),
            )
        };
        let addr = match &spec.address {
            Address::Tcp { host, port } if spec.tls => ConnectionAddr::TcpTls {
                host: host.clone(),
                port: *port,
                insecure: false,
                tls_params: None,
            },
            Address::Tcp { host, port } => ConnectionAddr::Tcp(host.clone(), *port),
            Address::Unix(path) => ConnectionAddr::Unix(path.clone()),
            Address::Sentinel { sentinels, master } => {
                return Ok(Opener::Sentinel {
                    sentinels: sentinels.clone(),
                    master: master.clone(),
                })
            }
            Address::Cluster { nodes } => {
                let infos = nodes
                    .iter()
                    .map(|(h, p)| plain_info(ConnectionAddr::Tcp(h.clone(), *p)))
                    .collect::<RedisResult<Vec<_>>>()
                    .map_err(|e| bad_spec("conn", e))?;
                let mut builder = ClusterClient::builder(infos)
                    // No retries inside the cluster client: it would resend a timed-out command
                    // on the same socket (its late reply then answering the resend) and back off
                    // for minutes on CLUSTERDOWN. The pool retries MOVED and ASK once, on a fresh
                    // connection with a fresh slot map, and drops sockets that timed out.
                    .retries(0)
                    .connection_timeout(spec.connect_timeout)
                    .response_timeout(spec.read_timeout)
                    .tcp_settings(tcp_settings());
                if let Some(password) = &spec.password {
                    builder = builder.password(password.clone());
                }
                if let Some(user) = &spec.username {
                    builder = builder.username(user.clone());
                }
                return Ok(Opener::Cluster(AssertUnwindSafe(
                    builder.build().map_err(|e| bad_spec("conn", e))?,
                )));
            }
        };
        let info = plain_info(addr).map_err(|e| bad_spec("conn", e))?;
        let client = match &spec.ca_cert {
            Some(path) => {
                let pem = std::fs::read(path).map_err(|e| {
                    Error::invalid(
                        "ca-cert",
                        format!("cannot read 'ca-cert' {}: {e}", path.display()),
                    )
                })?;
                // An empty trust store would only fail later, at connect, with a vaguer message.
                if !pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
                    return Err(Error::invalid(
                        "ca-cert",
                        format!("'ca-cert' {} holds no PEM certificate", path.display()),
                    ));
                }
                let certs = redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(pem),
                };
                Client::build_with_tls(info, certs).map_err(|e| bad_spec("ca-cert", e))?
            }
            None => Client::open(info).map_err(|e| bad_spec("conn", e))?,
        };
        Ok(Opener::Direct(client))
    }

    /// A ready connection (authenticated, db selected, command timeouts set), within the
    /// spec's connect timeout.
    pub(crate) fn open(&self, spec: &ConnSpec) -> RedisResult<Conn> {
        let deadline = Instant::now() + spec.connect_timeout;
        let conn = match self {
            Opener::Direct(client) => client.get_connection_with_timeout(spec.connect_timeout)?,
            Opener::Sentinel { sentinels, master } => {
                let (host, port) = master_address(sentinels, master, deadline)?;
                let client = Client::open(plain_info(ConnectionAddr::Tcp(host, port))?)?;
                client.get_connection_with_timeout(left(deadline)?)?
            }
            Opener::Cluster(client) => {
                return Ok(Conn::Cluster(Box::new(client.get_connection()?)))
            }
        };
        handshake(conn, spec, deadline).map(Conn::Single)
    }
}

/// Connection info without handshake commands from the redis crate: it would pipeline AUTH,
/// CLIENT SETINFO and SELECT and wait out the read timeout once per reply, so a frozen server
/// would hold a new connection for several timeouts. [`handshake`] sends AUTH and SELECT itself.
fn plain_info(addr: ConnectionAddr) -> RedisResult<ConnectionInfo> {
    Ok(addr
        .into_connection_info()?
        .set_redis_settings(RedisConnectionInfo::default().set_skip_set_lib_name())
        .set_tcp_settings(tcp_settings()))
}

/// Nagle off: the redis crate leaves it on, which can double the latency of a small request.
/// TCP keepalive on: probes after 30 s idle keep NAT and load-balancer mappings alive, and find
/// a dead peer within 30 + 3 x 10 s even without a request.
fn tcp_settings() -> TcpSettings {
    use redis::io::tcp::socket2::TcpKeepalive;
    let keepalive = TcpKeepalive::new()
        .with_time(Duration::from_secs(30))
        .with_interval(Duration::from_secs(10));
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    let keepalive = keepalive.with_retries(3);
    TcpSettings::default()
        .set_nodelay(true)
        .set_keepalive(keepalive)
}

/// AUTH and SELECT, one command at a time, each bounded by what is left of the connect
/// timeout; then the command timeouts for the connection's life.
fn handshake(mut conn: Connection, spec: &ConnSpec, deadline: Instant) -> RedisResult<Connection> {
    let mut commands = Vec::new();
    if let Some(password) = &spec.password {
        let mut auth = redis::cmd("AUTH");
        if let Some(user) = &spec.username {
            auth.arg(user);
        }
        commands.push(auth.arg(password).to_owned());
    }
    if spec.db != 0 {
        commands.push(redis::cmd("SELECT").arg(spec.db).to_owned());
    }
    for command in commands {
        set_timeouts(&conn, left(deadline)?)?;
        command.query::<()>(&mut conn)?;
    }
    set_timeouts(&conn, spec.read_timeout)?;
    Ok(conn)
}

/// Asks each Sentinel in turn where the master is; the first that knows, wins.
fn master_address(
    sentinels: &[(String, u16)],
    master: &str,
    deadline: Instant,
) -> RedisResult<(String, u16)> {
    let mut last_error = None;
    for (host, port) in sentinels {
        let asked = (|| -> RedisResult<Option<(String, u16)>> {
            let client = Client::open(plain_info(ConnectionAddr::Tcp(host.clone(), *port))?)?;
            let mut conn = client.get_connection_with_timeout(left(deadline)?)?;
            set_timeouts(&conn, left(deadline)?)?;
            let reply: Option<(String, String)> = redis::cmd("SENTINEL")
                .arg("get-master-addr-by-name")
                .arg(master)
                .query(&mut conn)?;
            Ok(reply.and_then(|(h, p)| Some((h, p.parse().ok()?))))
        })();
        match asked {
            Ok(Some(address)) => return Ok(address),
            Ok(None) => {
                last_error = Some(RedisError::from((
                    ErrorKind::MasterNameNotFoundBySentinel,
                    "no Sentinel knows this master",
                    format!("{master} (asked {})", host_port(host, *port)),
                )))
            }
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| (ErrorKind::EmptySentinelList, "no Sentinels given").into()))
}

fn set_timeouts(conn: &Connection, timeout: Duration) -> RedisResult<()> {
    conn.set_read_timeout(Some(timeout))?;
    conn.set_write_timeout(Some(timeout))
}

/// What is left until `deadline`; a timeout error once nothing is.
fn left(deadline: Instant) -> RedisResult<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(std::io::Error::from(std::io::ErrorKind::TimedOut).into());
    }
    Ok(left)
}
