//! [`Opener`]: how to open a connection for one spec, whatever its address (a server, a unix
//! socket, the master the Sentinels name, a cluster), and the handshake every new connection
//! goes through.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Instant;

use redis::cluster::ClusterClient;
use redis::{ConnectionAddr, ErrorKind, RedisError, RedisResult};

use super::cluster_node::{ClusterConn, Setup};
use super::connect::{connect_node, connect_tcp, connect_tls, plain_info, tcp_settings};
use super::sentinel::master_address;
#[cfg(unix)]
use super::wire::{Socket, Stream, Wire};
use super::Conn;
use crate::connspec::{Address, ServerSpec};
use crate::error::{redact, Error, Result};
use crate::inflight::InFlight;
use crate::tls::{TlsClient, TlsConfig};

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
    #[cfg(unix)]
    Unix {
        path: std::path::PathBuf,
        connecting: InFlight<(), std::os::unix::net::UnixStream>,
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
        client: AssertUnwindSafe<Box<ClusterClient>>,
        /// Its connect learns the slots: it runs on a helper thread, one at a time.
        connecting: InFlight<(), ClusterConn>,
        /// What opening a node takes, for the cluster client's node connections and for those
        /// dibs opens itself (to a node that an `ASK` names, to each master for a scan).
        setup: Arc<Setup>,
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
        match spec.address() {
            Address::Tcp { host, port } if spec.tls() => {
                let config = tls.as_ref().expect("made above for TLS");
                let client = TlsClient::new(config, host).map_err(|e| bad_spec("conn", e))?;
                Ok(Opener::Tls {
                    host: host.clone(),
                    port: *port,
                    client,
                })
            }
            Address::Tcp { host, port } => Ok(Opener::Tcp {
                host: host.clone(),
                port: *port,
            }),
            #[cfg(unix)]
            Address::Unix(path) => Ok(Opener::Unix {
                path: path.clone(),
                connecting: InFlight::new(),
            }),
            #[cfg(not(unix))]
            Address::Unix(path) => Err(Error::invalid(
                "conn",
                format!(
                    "{} is a unix socket, which this platform has not",
                    path.display()
                ),
            )),
            Address::Sentinel { sentinels, master } => Ok(Opener::Sentinel {
                sentinels: sentinels.clone(),
                master: master.clone(),
                last_good: AtomicUsize::new(0),
                tls,
            }),
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
                Ok(Opener::Cluster {
                    client: AssertUnwindSafe(Box::new(
                        builder.build().map_err(|e| bad_spec("conn", e))?,
                    )),
                    connecting: InFlight::new(),
                    setup: Arc::new(Setup {
                        spec: spec.clone(),
                        tls,
                    }),
                })
            }
        }
    }

    /// A ready connection (authenticated, db selected, command timeouts set), within the
    /// spec's connect timeout.
    pub(crate) fn open(&self, spec: &ServerSpec) -> RedisResult<Conn> {
        let deadline = Instant::now() + spec.connect_timeout();
        let conn = match self {
            Opener::Tcp { host, port } => connect_tcp(host, *port, spec, deadline)?,
            #[cfg(unix)]
            Opener::Unix { path, connecting } => {
                // A unix connect has no timeout, and waits as long as a frozen server's listen
                // backlog stays full.
                let path = path.clone();
                let connect = move || Ok(std::os::unix::net::UnixStream::connect(&path)?);
                let stream = connecting.run(&(), deadline, &connect)?;
                let socket = Socket::new(Stream::Unix(stream), deadline);
                Conn::Single(Box::new(Wire::plain(socket, spec.db())))
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
                client,
                connecting,
                setup,
            } => {
                // Its connect asks the seeds for the slots, node by node: bound it as a whole.
                let cluster = ClusterClient::clone(&client.0);
                let setup = setup.clone();
                let connect = move || ClusterConn::connect(&cluster, &setup, deadline);
                // A seed's timeout or refused credentials come back typed (`cluster_node`).
                return Ok(Conn::Cluster(Box::new(connecting.run(
                    &(),
                    deadline,
                    &connect,
                )?)));
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
            Opener::Cluster { setup, .. } => setup.tls.as_ref(),
            _ => None,
        }
    }
}

/// AUTH and SELECT, one command at a time, each bounded by what is left of the connect
/// timeout; then the command timeouts for the connection's life. (A TLS connection has done its
/// TLS handshake at connect.)
pub(super) fn handshake(mut conn: Conn, spec: &ServerSpec, deadline: Instant) -> RedisResult<Conn> {
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
    conn.set_timeouts(spec.read_timeout());
    Ok(conn)
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
