//! Opening connections, for every kind of address, and the connection type the pool holds.
//!
//! - A single server: plain TCP and unix sockets through the redis crate; TLS through dibs's own
//!   connection ([`crate::tls`]), so that each address of a name gets its share of the timeout.
//! - Sentinel: the master's address is asked of the Sentinels (`SENTINEL
//!   get-master-addr-by-name`) for every new connection, so connections made after a failover
//!   reach the new master. A pooled connection to a demoted master fails with READONLY, and the
//!   pool replaces it.
//! - Cluster: the redis crate's cluster connection, which follows MOVED and ASK redirections.
//!
//! Every connect is bounded by the connect timeout, handshake included.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use redis::cluster::{ClusterClient, ClusterConnection};
use redis::io::tcp::TcpSettings;
use redis::{
    Client, Cmd, Connection, ConnectionAddr, ConnectionInfo, ConnectionLike, ErrorKind,
    IntoConnectionInfo, RedisConnectionInfo, RedisError, RedisResult, Value,
};

use crate::connspec::{host_port, Address, ServerSpec};
use crate::error::{first_line, redact, Error, Result};
use crate::inflight::InFlight;
use crate::resp::read_replies;
use crate::tls::{TlsClient, TlsConfig, TlsConn};

/// A pooled connection.
pub(crate) enum Conn {
    Single(Connection),
    Cluster(Box<ClusterConnection>),
    /// A one-off connection (plain or TLS) to the target of an `ASK`: every command goes after
    /// an `ASKING`, which admits only the one command that follows it.
    Asking(Box<Conn>),
    /// TLS, opened by dibs itself (see [`crate::tls`]).
    Tls(Box<TlsConn>),
}

/// `ASKING`, packed once.
fn asking() -> &'static [u8] {
    static PACKED: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    PACKED.get_or_init(|| redis::cmd("ASKING").get_packed_command())
}

impl Conn {
    /// Writes a command without reading its reply, to run after whatever this connection sent
    /// before: Redis runs one connection's commands in order, even those that reach it after the
    /// client gave up (a frozen server that thaws). The connection is then fit only to be
    /// dropped. A cluster connection routes per command and offers no such write: nothing is
    /// sent there, and false says so (the caller then has `sweeper` do it).
    pub(crate) fn queue(&mut self, packed: &[u8]) -> bool {
        match self {
            Conn::Single(c) => {
                let _ = c.send_packed_command(packed);
                true
            }
            Conn::Tls(c) => {
                let _ = c.send(packed);
                true
            }
            // The delete is keyed: without its own ASKING the importing node would redirect it.
            Conn::Asking(c) => c.queue(&[asking(), packed].concat()),
            Conn::Cluster(_) => false,
        }
    }

    /// Whether a pipeline's replies come back each on its own, a server's error reply in its
    /// place beside the others (see [`read_replies`]). A cluster connection folds any error reply
    /// into the whole pipeline's error.
    pub(crate) fn keeps_each_reply(&self) -> bool {
        match self {
            Conn::Single(_) | Conn::Tls(_) => true,
            Conn::Asking(c) => c.keeps_each_reply(),
            Conn::Cluster(_) => false,
        }
    }

    /// Bounds the next commands by `deadline`: over TLS every read and write by what is left of
    /// it, else each command's timeouts.
    fn set_deadline(&mut self, deadline: Instant) -> RedisResult<()> {
        match self {
            Conn::Tls(c) => {
                c.set_deadline(deadline);
                Ok(())
            }
            Conn::Asking(c) => c.set_deadline(deadline),
            _ => self.set_timeouts(left(deadline)?),
        }
    }

    /// Read and write timeouts for the commands to come.
    fn set_timeouts(&mut self, timeout: Duration) -> RedisResult<()> {
        match self {
            Conn::Single(c) => {
                c.set_read_timeout(Some(timeout))?;
                c.set_write_timeout(Some(timeout))
            }
            Conn::Tls(c) => c.set_timeouts(timeout),
            Conn::Asking(c) => c.set_timeouts(timeout),
            Conn::Cluster(_) => Ok(()), // the cluster client keeps its own
        }
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
            Conn::Tls(c) => c.req_packed_command(cmd),
            Conn::Asking(c) => {
                let both = [asking(), cmd].concat();
                let mut replies = c.req_packed_commands(&both, 1, 1)?;
                replies
                    .pop()
                    .ok_or_else(|| (ErrorKind::Client, "no reply after ASKING").into())
            }
        }
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        match self {
            Conn::Single(c) => {
                c.send_packed_command(cmd)?;
                read_replies(offset, count, || c.recv_response())
            }
            Conn::Cluster(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Tls(c) => c.req_packed_commands(cmd, offset, count),
            // One ASKING admits only the next command: the acquire's pipeline puts its one keyed
            // command first (WAIT has no key). A later keyed command (inspect's PTTL) gets its
            // own ASK error back, which fails the call, never wrongly.
            Conn::Asking(c) => {
                let both = [asking(), cmd].concat();
                c.req_packed_commands(&both, offset + 1, count)
            }
        }
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        match self {
            Conn::Single(c) => c.req_command(cmd),
            Conn::Cluster(c) => c.req_command(cmd),
            Conn::Tls(c) => c.req_command(cmd),
            Conn::Asking(_) => self.req_packed_command(&cmd.get_packed_command()),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Asking(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
            Conn::Tls(c) => c.get_db(),
        }
    }

    fn check_connection(&mut self) -> bool {
        match self {
            Conn::Single(c) => c.check_connection(),
            Conn::Asking(c) => c.check_connection(),
            Conn::Cluster(c) => c.check_connection(),
            Conn::Tls(c) => c.check_connection(),
        }
    }

    fn is_open(&self) -> bool {
        match self {
            Conn::Single(c) => c.is_open(),
            Conn::Asking(c) => c.is_open(),
            Conn::Cluster(c) => c.is_open(),
            Conn::Tls(c) => c.is_open(),
        }
    }
}

/// Knows how to open a connection for one spec. Building it does no I/O.
pub(crate) enum Opener {
    /// Plain TCP: the host is resolved, and each address tried, within the connect timeout.
    Tcp { host: String, port: u16 },
    /// TLS: the host is resolved, and each address tried, within the connect timeout, the
    /// certificate checked against the name as given.
    Tls {
        host: String,
        port: u16,
        client: TlsClient,
    },
    /// A unix socket. Its connect has no timeout: it runs on a helper thread, one at a time.
    Unix {
        client: Client,
        connecting: InFlight<(), Connection>,
    },
    /// Each Sentinel over TLS when `tls` is set, and the master it names too (its certificate
    /// checked against the address the Sentinel gives).
    Sentinel {
        sentinels: Vec<(String, u16)>,
        master: String,
        /// The Sentinel that answered last, asked first next time.
        last_good: AtomicUsize,
        tls: Option<TlsConfig>,
    },
    Cluster {
        /// Configuration only, so a panic elsewhere cannot leave it half-changed: this keeps
        /// `Locker` unwind-safe for callers who `catch_unwind` around it.
        client: AssertUnwindSafe<ClusterClient>,
        /// Its connect PINGs with no read timeout: it runs on a helper thread, one at a time.
        connecting: InFlight<(), ClusterConnection>,
        /// For the connections dibs opens itself, to a node that an `ASK` names.
        tls: Option<TlsConfig>,
    },
}

impl Opener {
    pub(crate) fn new(spec: &ServerSpec) -> Result<Opener> {
        // Building a client does no I/O, so its errors are about the spec itself.
        let bad_spec = |arg: &'static str, e: RedisError| {
            let why = redact(&e.to_string(), &spec.secrets());
            Error::invalid(
                arg,
                format!("{arg} for {} rejected: {why}", spec.endpoint()),
            )
        };
        let tls = if spec.tls() {
            Some(TlsConfig::new(spec.ca_cert(), spec.client_cert())?)
        } else {
            None
        };
        let path = match spec.address() {
            Address::Tcp { host, port } if spec.tls() => {
                let config = tls.as_ref().expect("made above for TLS");
                let client = TlsClient::new(config, host).map_err(|e| bad_spec("conn", e))?;
                return Ok(Opener::Tls {
                    host: host.clone(),
                    port: *port,
                    client,
                });
            }
            Address::Tcp { host, port } => {
                return Ok(Opener::Tcp {
                    host: host.clone(),
                    port: *port,
                })
            }
            Address::Unix(path) => path.clone(),
            Address::Sentinel { sentinels, master } => {
                return Ok(Opener::Sentinel {
                    sentinels: sentinels.clone(),
                    master: master.clone(),
                    last_good: AtomicUsize::new(0),
                    tls,
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
                    .connection_timeout(spec.connect_timeout())
                    .response_timeout(spec.read_timeout())
                    .tcp_settings(tcp_settings());
                if let Some(password) = spec.password() {
                    builder = builder.password(password);
                }
                if let Some(user) = spec.username() {
                    builder = builder.username(user);
                }
                if spec.tls() {
                    // The cluster client opens its own TLS connections, to the seeds and to
                    // every node the slot map or a MOVED names, with the same roots and client
                    // certificate (read here once more as the bytes it takes).
                    builder = builder.certs(cluster_certificates(spec)?);
                }
                return Ok(Opener::Cluster {
                    client: AssertUnwindSafe(builder.build().map_err(|e| bad_spec("conn", e))?),
                    connecting: InFlight::new(),
                    tls,
                });
            }
        };
        let info = plain_info(ConnectionAddr::Unix(path)).map_err(|e| bad_spec("conn", e))?;
        Ok(Opener::Unix {
            client: Client::open(info).map_err(|e| bad_spec("conn", e))?,
            connecting: InFlight::new(),
        })
    }

    /// A ready connection (authenticated, db selected, command timeouts set), within the
    /// spec's connect timeout.
    pub(crate) fn open(&self, spec: &ServerSpec) -> RedisResult<Conn> {
        let deadline = Instant::now() + spec.connect_timeout();
        let conn = match self {
            Opener::Tcp { host, port } => Conn::Single(connect_tcp(host, *port, deadline)?),
            Opener::Unix { client, connecting } => {
                // A unix connect has no timeout, and waits as long as a frozen server's listen
                // backlog stays full. (The redis crate cannot take a stream connected by us with
                // a timeout.)
                let client = client.clone();
                let connect = move || client.get_connection();
                Conn::Single(connecting.run(&(), deadline, &connect)?)
            }
            Opener::Tls { host, port, client } => connect_tls(client, host, *port, spec, deadline)?,
            Opener::Sentinel {
                sentinels,
                master,
                last_good,
                tls,
            } => {
                let (host, port) =
                    master_address(sentinels, master, last_good, tls.as_ref(), spec, deadline)?;
                connect_node(&host, port, tls.as_ref(), spec, deadline)?
            }
            Opener::Cluster {
                client, connecting, ..
            } => {
                // The cluster client's own connect runs a PING with no read timeout: bound it.
                let cluster = client.0.clone();
                let connect = move || cluster.get_connection();
                return match connecting.run(&(), deadline, &connect) {
                    Ok(conn) => Ok(Conn::Cluster(Box::new(conn))),
                    Err(e) => Err(self.typed_cluster_error(e, spec)),
                };
            }
        };
        handshake(conn, spec, deadline)
    }

    /// A direct connection to one node of a cluster, `host:port` as a redirection names it,
    /// authenticated like the cluster's, that sends `ASKING` before every command: for following
    /// an `ASK`.
    pub(crate) fn open_node(&self, spec: &ServerSpec, node: &str) -> RedisResult<Conn> {
        let deadline = Instant::now() + spec.connect_timeout();
        let (host, port) = node
            .rsplit_once(':')
            .and_then(|(h, p)| Some((h.trim_matches(['[', ']']), p.parse().ok()?)))
            .ok_or_else(|| {
                RedisError::from((
                    ErrorKind::Client,
                    "a redirection without host:port",
                    node.to_owned(),
                ))
            })?;
        let tls = self.node_tls();
        // AUTH and SELECT first, plainly: an ASKING before AUTH would be refused (NOAUTH).
        let conn = handshake(
            connect_node(host, port, tls, spec, deadline)?,
            spec,
            deadline,
        )?;
        Ok(Conn::Asking(Box::new(conn)))
    }

    /// A direct connection to one master of a cluster, authenticated like the cluster's: for
    /// what runs per node (`SCAN`).
    pub(crate) fn open_master(
        &self,
        spec: &ServerSpec,
        host: &str,
        port: u16,
    ) -> RedisResult<Conn> {
        let deadline = Instant::now() + spec.connect_timeout();
        handshake(
            connect_node(host, port, self.node_tls(), spec, deadline)?,
            spec,
            deadline,
        )
    }

    /// The TLS configuration of the connections dibs opens itself to one cluster node.
    fn node_tls(&self) -> Option<&TlsConfig> {
        match self {
            Opener::Cluster { tls, .. } => tls.as_ref(),
            _ => None,
        }
    }

    /// The cluster client folds a seed's AUTH failure into a generic connection error; asked
    /// directly, the first seed says what it is (WRONGPASS, NOAUTH), so that it is typed.
    fn typed_cluster_error(&self, error: RedisError, spec: &ServerSpec) -> RedisError {
        let Address::Cluster { nodes } = spec.address() else {
            return error;
        };
        let Some((host, port)) = nodes.first() else {
            return error;
        };
        let tls = self.node_tls();
        let deadline = Instant::now() + spec.connect_timeout();
        match connect_node(host, *port, tls, spec, deadline)
            .and_then(|c| handshake(c, spec, deadline))
        {
            Err(auth)
                if auth.kind() == ErrorKind::AuthenticationFailed
                    || matches!(auth.code(), Some("WRONGPASS" | "NOAUTH")) =>
            {
                auth
            }
            _ => error,
        }
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

const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
#[cfg(any(target_os = "linux", target_os = "macos"))]
const KEEPALIVE_PROBES: u32 = 3;

/// Nagle off: the redis crate leaves it on, which can double the latency of a small request.
/// TCP keepalive on: probes after 30 s idle keep NAT and load-balancer mappings alive, and find
/// a dead peer within 30 + 3 x 10 s even without a request.
fn tcp_settings() -> TcpSettings {
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

/// AUTH and SELECT, one command at a time, each bounded by what is left of the connect
/// timeout; then the command timeouts for the connection's life. (A TLS connection has done its
/// TLS handshake at connect.)
fn handshake(mut conn: Conn, spec: &ServerSpec, deadline: Instant) -> RedisResult<Conn> {
    let mut commands = Vec::new();
    if let Some(password) = spec.password() {
        let mut auth = redis::cmd("AUTH");
        if let Some(user) = spec.username() {
            auth.arg(user);
        }
        commands.push(auth.arg(password).to_owned());
    }
    if spec.db() != 0 {
        commands.push(redis::cmd("SELECT").arg(spec.db()).to_owned());
    }
    for command in commands {
        conn.set_deadline(deadline)?;
        command.query::<()>(&mut conn)?;
    }
    conn.set_timeouts(spec.read_timeout())?;
    Ok(conn)
}

/// Asks each Sentinel in turn where the master is; the first that knows, wins. The one that
/// answered last is asked first, and each gets an equal share of what is left of the budget, so
/// that one blackholed Sentinel cannot use up the time of the others. Each is reached over TLS
/// when `tls` is set, and authenticated with the spec's Sentinel credentials when it has some.
fn master_address(
    sentinels: &[(String, u16)],
    master: &str,
    last_good: &AtomicUsize,
    tls: Option<&TlsConfig>,
    spec: &ServerSpec,
    deadline: Instant,
) -> RedisResult<(String, u16)> {
    let first = last_good.load(Ordering::Relaxed) % sentinels.len().max(1);
    let mut last_error = None;
    for i in 0..sentinels.len() {
        let index = (first + i) % sentinels.len();
        let (host, port) = &sentinels[index];
        let share = left(deadline)? / (sentinels.len() - i) as u32;
        let asked = (|| -> RedisResult<Option<(String, u16)>> {
            let until = Instant::now() + share;
            let mut conn = connect_node(host, *port, tls, spec, until)?;
            if let Some(auth) = spec.sentinel_auth() {
                conn.set_deadline(until)?;
                let mut command = redis::cmd("AUTH");
                if let Some(user) = &auth.username {
                    command.arg(user);
                }
                command.arg(&auth.password).query::<()>(&mut conn)?;
            }
            conn.set_deadline(until)?;
            let reply: Option<(String, String)> = redis::cmd("SENTINEL")
                .arg("get-master-addr-by-name")
                .arg(master)
                .query(&mut conn)?;
            Ok(reply.and_then(|(h, p)| Some((h, p.parse().ok()?))))
        })();
        let error = match asked {
            Ok(Some(address)) => {
                last_good.store(index, Ordering::Relaxed);
                return Ok(address);
            }
            Ok(None) => RedisError::from((
                ErrorKind::MasterNameNotFoundBySentinel,
                "no Sentinel knows this master",
                format!("{master} (asked {})", host_port(host, *port)),
            )),
            Err(e) => sentinel_refusal(e, host, *port, spec.sentinel_auth().is_some()),
        };
        // A refused credential says more than a Sentinel that was down: it is kept over one.
        if !last_error.as_ref().is_some_and(is_refusal) || is_refusal(&error) {
            last_error = Some(error);
        }
    }
    Err(last_error.unwrap_or_else(|| (ErrorKind::EmptySentinelList, "no Sentinels given").into()))
}

/// Whether a Sentinel refused us (credentials or permissions), not merely failed to answer.
fn is_refusal(e: &RedisError) -> bool {
    e.kind() == ErrorKind::AuthenticationFailed || matches!(e.code(), Some("NOPERM"))
}

/// A Sentinel's AUTH refusal, said as the Sentinel's, not the master's: its own address, and
/// which setting to look at.
fn sentinel_refusal(e: RedisError, host: &str, port: u16, authenticated: bool) -> RedisError {
    let code = e.code().map(str::to_owned);
    match code.as_deref() {
        Some("WRONGPASS") | Some("NOAUTH") => RedisError::from((
            ErrorKind::AuthenticationFailed,
            "a Sentinel refused dibs",
            if authenticated {
                format!(
                    "Sentinel {} refused the Sentinel credentials ('sentinel-username', 'sentinel-password'): {}",
                    host_port(host, port),
                    first_line(&e)
                )
            } else {
                format!(
                    "Sentinel {} requires AUTH of its own: give 'sentinel-password' (and 'sentinel-username' for an ACL user): {}",
                    host_port(host, port),
                    first_line(&e)
                )
            },
        )),
        _ => e,
    }
}

/// A connection to `host:port` by `deadline`, over TLS when `tls` is set (the certificate checked
/// against `host`), without AUTH or SELECT.
fn connect_node(
    host: &str,
    port: u16,
    tls: Option<&TlsConfig>,
    spec: &ServerSpec,
    deadline: Instant,
) -> RedisResult<Conn> {
    match tls {
        Some(config) => connect_tls(&TlsClient::new(config, host)?, host, port, spec, deadline),
        None => Ok(Conn::Single(connect_tcp(host, port, deadline)?)),
    }
}

/// The roots and client certificate of `spec` as the cluster client takes them: PEM bytes.
fn cluster_certificates(spec: &ServerSpec) -> Result<redis::TlsCertificates> {
    let client_tls = match spec.client_cert() {
        Some(client) => Some(redis::ClientTlsConfig {
            client_cert: client.cert.bytes("client-cert")?.into_owned(),
            client_key: client.key.bytes("client-key")?.into_owned(),
        }),
        None => None,
    };
    let root_cert = spec
        .ca_cert()
        .map(|pem| pem.bytes("ca-cert").map(|b| b.into_owned()))
        .transpose()?;
    Ok(redis::TlsCertificates {
        client_tls,
        root_cert,
    })
}

/// A plain TCP connection to `host:port` by `deadline`: the name is resolved within it, then
/// each address is tried with an equal share of what is left, so a blackholed first address
/// (dual stack, several A records) cannot use up the time of the others.
fn connect_tcp(host: &str, port: u16, deadline: Instant) -> RedisResult<Connection> {
    let addrs = resolve(host, port, deadline)?;
    let mut last_error = None;
    for (i, addr) in addrs.iter().enumerate() {
        let share = left(deadline)? / (addrs.len() - i) as u32;
        let info = plain_info(ConnectionAddr::Tcp(addr.ip().to_string(), addr.port()))?;
        match Client::open(info)?.get_connection_with_timeout(share) {
            Ok(conn) => return Ok(conn),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.expect("at least one address was tried"))
}

/// A TLS connection to `host:port` by `deadline`, as [`connect_tcp`] makes a plain one: each
/// address with an equal share of what is left, for its TCP connect and its TLS handshake, the
/// certificate checked against `host`.
fn connect_tls(
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
        match TlsConn::connect(client, addr, until, apply_tcp_settings, spec.db()) {
            Ok(conn) => return Ok(Conn::Tls(Box::new(conn))),
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
fn left(deadline: Instant) -> RedisResult<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(std::io::Error::from(std::io::ErrorKind::TimedOut).into());
    }
    Ok(left)
}
