//! Connection specs: every form a caller may pass (a URI, a Carmine-style map, Carmine's
//! `{pool, spec}` conn map) parsed into one [`ConnSpec`]. This module is the only parser: the
//! fields of a spec are private, so no spec exists that did not pass `Fields::build`.
//!
//! - `uri`: the URI forms (see there).
//! - `map`: the map forms, whose `uri` key goes through the URI parser.
//! - `fields`: what both parsers fill in, and `Fields::build`, which checks it and makes the spec.
//! - `parse_error`: what they report.
//! - `keys`: the one list of conn keys a map may set.
//!
//! Both parsers report a `ParseError`, turned into [`crate::Error::InvalidArgument`] once, by
//! [`ConnSpec::from_uri`] and [`ConnSpec::from_map`].

mod fields;
mod keys;
mod map;
mod parse_error;
mod pem;
mod uri;

pub use keys::{ConnKey, CONN_KEYS, CONN_MAP_KEYS, POOL_KEYS};
pub use pem::Pem;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::Result;
use fields::Fields;

pub const DEFAULT_HOST: &str = "127.0.0.1";
pub const DEFAULT_PORT: u16 = 6379;
/// Carmine's default connect timeout.
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 4000;
/// Reads and writes are bounded too, so that a frozen server never hangs a scheduler thread.
pub const DEFAULT_READ_TIMEOUT_MS: u64 = 4000;
/// Pooled connections idle this long are not reused: well inside the idle timeouts of cloud NATs
/// and load balancers (Azure's 4 minutes is the shortest common one).
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 60_000;
/// Every lock key starts with this, so that an ACL can confine dibs to `~dibs:*`.
pub const DEFAULT_KEY_PREFIX: &str = "dibs:";
/// Connections per server, at most; a caller beyond it waits for one up to the connect timeout.
pub const DEFAULT_MAX_TOTAL: usize = 64;

const MAX_TIMEOUT_MS: i128 = 86_400_000;
const MAX_POOL_SIZE: i128 = 10_000;
const MAX_KEY_PREFIX_BYTES: usize = 256;
/// The longest `instance-id`, in UTF-8 bytes.
const MAX_INSTANCE_ID_BYTES: usize = crate::history::MAX_LABEL_BYTES;

/// Where the server listens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Address {
    Tcp {
        host: String,
        port: u16,
    },
    Unix(PathBuf),
    /// The master that these Sentinels name `master`, found anew after every failover.
    Sentinel {
        sentinels: Vec<(String, u16)>,
        master: String,
    },
    /// A Redis Cluster, reached through any of these seed nodes.
    Cluster {
        nodes: Vec<(String, u16)>,
    },
}

/// How an acquire makes sure that a failover cannot lose the lock it took: the `SET` is followed,
/// in the same round trip, by `WAIT` (or `WAITAOF`), and the lock counts as taken only once the
/// replicas acknowledged it (see `lock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Durable {
    /// The default: wait for 1 replica always behind Sentinel (a master that reports none may
    /// be a stale one), and on a server or cluster whose masters report connected replicas
    /// (`INFO replication`, asked once per new connection). A server that refuses `WAIT` is
    /// warned about once, then used without it. A lone server pays nothing.
    Auto,
    /// Never wait: a failover may lose a lock just taken.
    Off,
    /// Wait for this many replicas; a server that refuses `WAIT` fails the call.
    Replicas(u32),
    /// `WAITAOF 1 n`: the master's own AOF fsync and this many replicas' (Redis 7.2 and later);
    /// a server that refuses it fails the call.
    Aof(u32),
}

/// A client certificate for mutual TLS: two PEM files, read when a locker is made, or their
/// texts, given in memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientCert {
    /// The certificate, optionally followed by the intermediates that chain it to a CA.
    pub cert: Pem,
    /// Its private key (PKCS#8, PKCS#1 or SEC1).
    pub key: Pem,
}

/// The credentials that the Sentinels themselves ask for.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct SentinelAuth {
    pub(crate) username: Option<String>,
    pub(crate) password: String,
}

/// The default port of a Sentinel.
pub const DEFAULT_SENTINEL_PORT: u16 = 26379;

/// Everything needed to reach one Redis server and name keys on it. Made only by the parsers
/// ([`ConnSpec::from_uri`], [`ConnSpec::from_map`]), so every spec is a valid one.
///
/// The connection part (everything but the key prefix and keep-alive) is what a pool is made for: specs that differ only in
/// `key-prefix` or `keep-alive` share the pool of [`Locker::shared`](crate::Locker::shared).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ConnSpec {
    server: ServerSpec,
    key_prefix: String,
    /// Extend the lock while the task runs, so that it may outlive `atMost` (see `keepalive`).
    keep_alive: bool,
    durable: Durable,
    /// Record each run in the job's history (`history`), on by default.
    history: bool,
    /// Names this instance in the history (`instance-id`), beside its host and pid.
    instance_id: Option<String>,
    /// A tick whose task failed lets go of its done-mark, so that a later fire may run it
    /// (`retry-failed-ticks`); off by default: a tick is run once, however it ended.
    retry_failed_ticks: bool,
    /// Catch-up runs again a tick whose run started but whose end was never recorded (its
    /// holder died, or its release failed) (`retry-unended-ticks`); off by default: a tick that
    /// started is run at most once.
    retry_unended_ticks: bool,
}

/// The connection part of a spec: all that a pool needs, and all that tells two pools apart.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct ServerSpec {
    address: Address,
    tls: bool,
    /// PEM CA certificates (a file, or the text) that the server's certificate must chain to
    /// (TLS only); without them the platform's trust store is used.
    ca_cert: Option<Pem>,
    /// The client's own certificate (PEM, optionally followed by its chain) and its private key
    /// (PEM), presented on every TLS connection: for servers with `tls-auth-clients yes`.
    client_cert: Option<ClientCert>,
    username: Option<String>,
    password: Option<String>,
    /// AUTH for the Sentinels, which keep credentials of their own (`requirepass` and ACL users
    /// on the Sentinel), apart from the master's.
    sentinel_auth: Option<SentinelAuth>,
    db: i64,
    connect_timeout: Duration,
    /// Read and write timeout of every command.
    read_timeout: Duration,
    max_total: usize,
    max_idle: usize,
    /// A pooled connection idle for longer is closed instead of reused: NATs, load balancers
    /// and firewalls silently drop idle flows (Azure's after 4 minutes).
    idle_timeout: Duration,
}

impl ConnSpec {
    /// Parses a URI (see the module docs of `uri`).
    pub fn from_uri(uri: &str) -> Result<ConnSpec> {
        Ok(Fields::from_uri(uri).and_then(Fields::build)?)
    }

    /// Parses a map in Carmine's spec shape, or Carmine's `{pool, spec}` conn-map shape.
    pub fn from_map(entries: &[(String, SpecValue)]) -> Result<ConnSpec> {
        Ok(Fields::from_map(entries).and_then(Fields::build)?)
    }

    /// The connection part, which names the pool.
    pub(crate) fn server(&self) -> &ServerSpec {
        &self.server
    }

    pub fn address(&self) -> &Address {
        &self.server.address
    }

    pub fn tls(&self) -> bool {
        self.server.tls
    }

    /// PEM CA certificates (a file, or the text) that the server's certificate must chain to
    /// (TLS only); without them the platform's trust store is used.
    pub fn ca_cert(&self) -> Option<&Pem> {
        self.server.ca_cert()
    }

    /// The certificate presented on every TLS connection, if any.
    pub fn client_cert(&self) -> Option<&ClientCert> {
        self.server.client_cert()
    }

    pub fn username(&self) -> Option<&str> {
        self.server.username()
    }

    /// The user name given for the Sentinels (`sentinel-username`), if any.
    pub fn sentinel_username(&self) -> Option<&str> {
        self.server.sentinel_auth.as_ref()?.username.as_deref()
    }

    /// Whether a password is given for the Sentinels (`sentinel-password`); never the password.
    pub fn has_sentinel_password(&self) -> bool {
        self.server.sentinel_auth.is_some()
    }

    pub fn password(&self) -> Option<&str> {
        self.server.password()
    }

    pub fn db(&self) -> i64 {
        self.server.db
    }

    pub fn connect_timeout(&self) -> Duration {
        self.server.connect_timeout
    }

    /// Read and write timeout of every command.
    pub fn read_timeout(&self) -> Duration {
        self.server.read_timeout
    }

    /// A pooled connection idle for longer is closed instead of reused.
    pub fn idle_timeout(&self) -> Duration {
        self.server.idle_timeout
    }

    /// What every lock key starts with.
    pub fn key_prefix(&self) -> &str {
        &self.key_prefix
    }

    /// Whether a held lock is extended while its task runs, so that it may outlive `atMost`.
    pub fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// How an acquire is made durable (the map key `durable`).
    pub fn durable(&self) -> Durable {
        self.durable
    }

    /// Whether each release records its run in the job's history (the map key `history`).
    pub fn history(&self) -> bool {
        self.history
    }

    /// What names this instance in the history, beside its host and pid (`instance-id`).
    pub fn instance_id(&self) -> Option<&str> {
        self.instance_id.as_deref()
    }

    /// Whether the lock of a tick whose task failed is deleted at release, not kept as the
    /// tick's done-mark (`retry-failed-ticks`), so that another instance's later fire of the same
    /// tick runs it.
    pub fn retry_failed_ticks(&self) -> bool {
        self.retry_failed_ticks
    }

    /// Whether catch-up runs again a missed tick whose run started but never recorded its end
    /// (`retry-unended-ticks`): its holder died mid-run, or its release failed. Off by default,
    /// since that run may have done its work.
    pub fn retry_unended_ticks(&self) -> bool {
        self.retry_unended_ticks
    }

    /// Connections to the server, at most.
    pub fn max_total(&self) -> usize {
        self.server.max_total
    }

    /// Idle connections kept for reuse, at most.
    pub fn max_idle(&self) -> usize {
        self.server.max_idle
    }

    /// `host:port` or the socket path: what messages name. Never holds credentials.
    pub fn endpoint(&self) -> String {
        self.server.endpoint()
    }
}

impl ServerSpec {
    pub(crate) fn address(&self) -> &Address {
        &self.address
    }

    pub(crate) fn tls(&self) -> bool {
        self.tls
    }

    pub(crate) fn ca_cert(&self) -> Option<&Pem> {
        self.ca_cert.as_ref()
    }

    pub(crate) fn client_cert(&self) -> Option<&ClientCert> {
        self.client_cert.as_ref()
    }

    pub(crate) fn username(&self) -> Option<&str> {
        self.username.as_deref()
    }

    pub(crate) fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    pub(crate) fn sentinel_auth(&self) -> Option<&SentinelAuth> {
        self.sentinel_auth.as_ref()
    }

    /// Every secret of the spec, for taking them out of messages.
    pub(crate) fn secrets(&self) -> [Option<&str>; 2] {
        [
            self.password(),
            self.sentinel_auth.as_ref().map(|a| a.password.as_str()),
        ]
    }

    pub(crate) fn db(&self) -> i64 {
        self.db
    }

    pub(crate) fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    pub(crate) fn read_timeout(&self) -> Duration {
        self.read_timeout
    }

    pub(crate) fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    pub(crate) fn max_total(&self) -> usize {
        self.max_total
    }

    pub(crate) fn max_idle(&self) -> usize {
        self.max_idle
    }

    /// `host:port` or the socket path: what messages name. Never holds credentials.
    pub(crate) fn endpoint(&self) -> String {
        match &self.address {
            Address::Tcp { host, port } => host_port(host, *port),
            Address::Unix(path) => path.display().to_string(),
            Address::Sentinel { sentinels, master } => {
                format!("master '{master}' of sentinels {}", host_list(sentinels))
            }
            Address::Cluster { nodes } => format!("cluster {}", host_list(nodes)),
        }
    }

    /// The fields of a debug view, the password redacted.
    fn debug_fields(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("address", &self.address)
            .field("tls", &self.tls)
            .field("ca_cert", &self.ca_cert)
            .field("client_cert", &self.client_cert)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field(
                "sentinel_username",
                &self.sentinel_auth.as_ref().map(|a| &a.username),
            )
            .field(
                "sentinel_password",
                &self.sentinel_auth.as_ref().map(|_| "***"),
            )
            .field("db", &self.db)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout);
    }
}

/// `host:port`, with brackets around an IPv6 host.
pub(crate) fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

fn host_list(nodes: &[(String, u16)]) -> String {
    nodes
        .iter()
        .map(|(h, p)| host_port(h, *p))
        .collect::<Vec<_>>()
        .join(",")
}

impl fmt::Debug for ConnSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ConnSpec");
        self.server.debug_fields(&mut d);
        d.field("key_prefix", &self.key_prefix)
            .field("keep_alive", &self.keep_alive)
            .field("durable", &self.durable)
            .field("history", &self.history)
            .field("instance_id", &self.instance_id)
            .field("retry_failed_ticks", &self.retry_failed_ticks)
            .field("retry_unended_ticks", &self.retry_unended_ticks)
            .field("max_total", &self.server.max_total)
            .field("max_idle", &self.server.max_idle)
            .field("idle_timeout", &self.server.idle_timeout)
            .finish()
    }
}

impl fmt::Debug for ServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ServerSpec");
        self.debug_fields(&mut d);
        d.field("max_total", &self.max_total)
            .field("max_idle", &self.max_idle)
            .field("idle_timeout", &self.idle_timeout)
            .finish()
    }
}

/// A value of a conn map as it arrives from another language (the JNI glue builds these).
#[derive(Clone, Debug, PartialEq)]
pub enum SpecValue {
    Null,
    Str(String),
    Int(i128),
    Bool(bool),
    Map(Vec<(String, SpecValue)>),
    /// A value of a type no key accepts; holds the type's name for the message.
    Other(String),
}

#[cfg(test)]
mod tests {
    use super::uri::redact_uri;
    use super::*;
    use crate::error::Error;

    /// The `(host, port)` of a TCP spec.
    pub(super) fn tcp(spec: &ConnSpec) -> (&str, u16) {
        match spec.address() {
            Address::Tcp { host, port } => (host, *port),
            other => panic!("expected tcp, got {other:?}"),
        }
    }

    pub(super) fn invalid_message(result: Result<ConnSpec>) -> String {
        match result {
            Err(Error::InvalidArgument { message, .. }) => message,
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    #[test]
    fn debug_never_shows_the_password() {
        let spec = ConnSpec::from_uri("redis://u:hunter2@h").unwrap();
        assert!(!format!("{spec:?}").contains("hunter2"));
        assert!(!format!("{:?}", spec.server()).contains("hunter2"));
        assert_eq!(redact_uri("redis://u:hunter2@h:1/0"), "redis://***@h:1/0");
        assert_eq!(redact_uri("unix:///s?pass=hunter2"), "unix:///s?***");
        // A forgotten '@' puts the password where the port or db would be.
        assert_eq!(redact_uri("redis://:hunter2"), "redis://:***");
        assert_eq!(redact_uri("redis://h:6379/hunter2"), "redis://h:6379/***");
        assert_eq!(redact_uri("redis://[::1]:hunter2"), "redis://[::1]:***");
        assert_eq!(redact_uri("hunter2"), "***");
        assert_eq!(
            redact_uri("redis+sentinel://u:pw@s1/m?sentinel-password=hun@ter2"),
            "redis+sentinel://***"
        );
    }

    #[test]
    fn specs_that_differ_in_prefix_or_keep_alive_name_one_server() {
        let a = ConnSpec::from_uri("redis://h:7000/1").unwrap();
        let b = ConnSpec::from_map(&[
            ("uri".into(), SpecValue::Str("redis://h:7000/1".into())),
            ("key-prefix".into(), SpecValue::Str("other:".into())),
            ("keep-alive".into(), SpecValue::Bool(true)),
        ])
        .unwrap();
        assert_ne!(a, b);
        assert_eq!(a.server(), b.server());
        let c = ConnSpec::from_uri("redis://h:7000/2").unwrap();
        assert_ne!(a.server(), c.server());
    }
}
