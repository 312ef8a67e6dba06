//! Connection specs: every form a caller may pass (a URI, a Carmine-style map, Carmine's
//! `{pool, spec}` conn map) parsed into one [`ConnSpec`]. This module is the only parser.
//!
//! URI forms:
//! - `redis://[user[:password]@][host][:port][/db]`, `rediss://` for TLS; `valkey://` and
//!   `valkeys://` are aliases. The user info ends at the *last* `@`, so a password may contain
//!   `:`, `@`, `/` or `#` as is; `%XX` escapes are decoded. A bare `user@` is a user name, as in
//!   the IANA registration of the scheme.
//! - `redis+unix:///path/to.sock` or `unix:///path/to.sock`, with optional query keys `db`,
//!   `user`/`username`, `pass`/`password`.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};

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
/// Connections per spec, at most; a caller beyond it waits for one up to the connect timeout.
pub const DEFAULT_MAX_TOTAL: usize = 64;

const MAX_TIMEOUT_MS: i128 = 86_400_000;
const MAX_POOL_SIZE: i128 = 10_000;
const MAX_KEY_PREFIX_BYTES: usize = 256;

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

/// The default port of a Sentinel.
pub const DEFAULT_SENTINEL_PORT: u16 = 26379;

/// Everything needed to reach one Redis server and name keys on it. Equal specs share one pool.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ConnSpec {
    pub address: Address,
    pub tls: bool,
    /// A PEM file of CA certificates that the server's certificate must chain to (TLS only);
    /// without it the platform's trust store is used.
    pub ca_cert: Option<PathBuf>,
    pub username: Option<String>,
    pub password: Option<String>,
    pub db: i64,
    pub connect_timeout: Duration,
    /// Read and write timeout of every command.
    pub read_timeout: Duration,
    pub key_prefix: String,
    /// Extend the lock while the task runs, so that it may outlive `atMost` (see `keepalive`).
    pub keep_alive: bool,
    pub max_total: usize,
    pub max_idle: usize,
    /// A pooled connection idle for longer is closed instead of reused: NATs, load balancers
    /// and firewalls silently drop idle flows (Azure's after 4 minutes).
    pub idle_timeout: Duration,
}

impl ConnSpec {
    /// Parses a URI (see the module docs).
    pub fn from_uri(uri: &str) -> Result<ConnSpec> {
        Fields::from_uri(uri)?.build()
    }

    /// Parses a map in Carmine's spec shape, or Carmine's `{pool, spec}` conn-map shape.
    pub fn from_map(entries: &[(String, SpecValue)]) -> Result<ConnSpec> {
        Fields::from_map(entries)?.build()
    }

    /// `host:port` or the socket path: what messages name. Never holds credentials.
    pub fn endpoint(&self) -> String {
        match &self.address {
            Address::Tcp { host, port } => host_port(host, *port),
            Address::Unix(path) => path.display().to_string(),
            Address::Sentinel { sentinels, master } => {
                format!("master '{master}' of sentinels {}", host_list(sentinels))
            }
            Address::Cluster { nodes } => format!("cluster {}", host_list(nodes)),
        }
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
        f.debug_struct("ConnSpec")
            .field("address", &self.address)
            .field("tls", &self.tls)
            .field("ca_cert", &self.ca_cert)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("db", &self.db)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("key_prefix", &self.key_prefix)
            .field("keep_alive", &self.keep_alive)
            .field("max_total", &self.max_total)
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

impl SpecValue {
    fn type_name(&self) -> &str {
        match self {
            SpecValue::Null => "null",
            SpecValue::Str(_) => "string",
            SpecValue::Int(_) => "integer",
            SpecValue::Bool(_) => "boolean",
            SpecValue::Map(_) => "map",
            SpecValue::Other(name) => name,
        }
    }
}

const SPEC_KEYS: &[&str] = &[
    "uri",
    "host",
    "port",
    "username",
    "password",
    "db",
    "timeout-ms",
    "conn-timeout-ms",
    "read-timeout-ms",
    "idle-timeout-ms",
    "ssl",
    "ca-cert",
    "key-prefix",
    "keep-alive",
    "sentinels",
    "master-name",
    "cluster-nodes",
];
const POOL_KEYS: &[&str] = &[
    "max-total",
    "max-total-per-key",
    "max-idle",
    "max-idle-per-key",
];
const CONN_MAP_KEYS: &[&str] = &["spec", "pool"];

/// The settings a source gave explicitly; `None` means "not said", so a URI and explicit keys
/// can be checked against each other before defaults apply.
#[derive(Default, Debug)]
struct Fields {
    tls: Option<bool>,
    host: Option<String>,
    port: Option<u16>,
    unix_path: Option<PathBuf>,
    username: Option<String>,
    password: Option<String>,
    db: Option<i64>,
    timeout_ms: Option<u64>,
    connect_timeout_ms: Option<u64>,
    read_timeout_ms: Option<u64>,
    idle_timeout_ms: Option<u64>,
    ca_cert: Option<PathBuf>,
    key_prefix: Option<String>,
    keep_alive: Option<bool>,
    sentinels: Option<Vec<(String, u16)>>,
    master_name: Option<String>,
    cluster_nodes: Option<Vec<(String, u16)>>,
    max_total: Option<usize>,
    max_idle: Option<usize>,
}

impl Fields {
    fn from_uri(uri: &str) -> Result<Fields> {
        let shown = redact_uri(uri);
        let bad = |why: String| Error::invalid("uri", format!("invalid conn URI '{shown}': {why}"));
        let (scheme, rest) = uri
            .split_once("://")
            .ok_or_else(|| bad("expected scheme://, e.g. redis://host:6379".into()))?;
        let (tls, unix) = match scheme.to_ascii_lowercase().as_str() {
            "redis" | "valkey" => (false, false),
            "rediss" | "valkeys" => (true, false),
            "redis+unix" | "unix" => (false, true),
            "redis+sentinel" | "valkey+sentinel" => return Fields::from_multi_node_uri(rest, true).map_err(bad),
            "redis+cluster" | "valkey+cluster" => return Fields::from_multi_node_uri(rest, false).map_err(bad),
            other => {
                return Err(bad(format!(
                    "unknown scheme '{other}'; expected redis, rediss, valkey, valkeys, redis+unix, unix, \
                     redis+sentinel or redis+cluster"
                )))
            }
        };
        let mut f = Fields {
            tls: Some(tls),
            ..Fields::default()
        };
        if unix {
            let (path, query) = match rest.split_once('?') {
                Some((p, q)) => (p, Some(q)),
                None => (rest, None),
            };
            let path = percent_decode(path, "uri").map_err(|e| bad(e.message().to_owned()))?;
            if !path.starts_with('/') {
                return Err(bad(
                    "a unix socket path must be absolute, e.g. unix:///run/redis.sock".into(),
                ));
            }
            f.unix_path = Some(PathBuf::from(path));
            for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                let v = percent_decode(v, "uri").map_err(|e| bad(e.message().to_owned()))?;
                match k {
                    "db" => f.db = Some(parse_db(&v).map_err(|e| bad(e.message().to_owned()))?),
                    "user" | "username" => f.username = Some(v),
                    "pass" | "password" => f.password = Some(v),
                    // Not echoed: a query may hold a password.
                    _ => {
                        return Err(bad(
                            "unknown query key; valid: db, user, username, pass, password".into(),
                        ))
                    }
                }
            }
            return Ok(f);
        }
        // The user info ends at the last '@': host, port and db never contain one.
        let (userinfo, hostpart) = match rest.rfind('@') {
            Some(i) => (Some(&rest[..i]), &rest[i + 1..]),
            None => (None, rest),
        };
        if let Some(userinfo) = userinfo {
            (f.username, f.password) = parse_userinfo(userinfo).map_err(bad)?;
        }
        if hostpart.contains(['?', '#']) {
            return Err(bad(
                "query parameters and fragments are not supported; use map keys".into(),
            ));
        }
        let (authority, path) = match hostpart.find('/') {
            Some(i) => (&hostpart[..i], &hostpart[i + 1..]),
            None => (hostpart, ""),
        };
        (f.host, f.port) = parse_authority(authority).map_err(bad)?;
        if !path.is_empty() {
            f.db = Some(parse_db(path).map_err(|e| bad(e.message().to_owned()))?);
        }
        Ok(f)
    }

    /// `redis+sentinel://[user[:password]@]h1:p1,h2:p2/master[/db]` or
    /// `redis+cluster://[user[:password]@]h1:p1,h2:p2`. Errors are the reason alone.
    fn from_multi_node_uri(rest: &str, sentinel: bool) -> std::result::Result<Fields, String> {
        let mut f = Fields {
            tls: Some(false),
            ..Fields::default()
        };
        let hostpart = match rest.rfind('@') {
            Some(i) => {
                (f.username, f.password) = parse_userinfo(&rest[..i])?;
                &rest[i + 1..]
            }
            None => rest,
        };
        if hostpart.contains(['?', '#']) {
            return Err("query parameters and fragments are not supported; use map keys".into());
        }
        let (nodes, path) = hostpart.split_once('/').unwrap_or((hostpart, ""));
        let default_port = if sentinel {
            DEFAULT_SENTINEL_PORT
        } else {
            DEFAULT_PORT
        };
        let nodes = parse_node_list(nodes, default_port)?;
        if sentinel {
            let (master, db) = path.split_once('/').unwrap_or((path, ""));
            if master.is_empty() {
                return Err(
                    "name the master after the sentinels: redis+sentinel://h1,h2,h3/mymaster"
                        .into(),
                );
            }
            f.master_name =
                Some(percent_decode(master, "uri").map_err(|e| e.message().to_owned())?);
            if !db.is_empty() {
                f.db = Some(parse_db(db).map_err(|e| e.message().to_owned())?);
            }
            f.sentinels = Some(nodes);
        } else {
            if !path.is_empty() {
                return Err("a cluster has no db or path: redis+cluster://h1:7000,h2:7001".into());
            }
            f.cluster_nodes = Some(nodes);
        }
        Ok(f)
    }

    fn from_map(entries: &[(String, SpecValue)]) -> Result<Fields> {
        let entries = normalize_keys(entries, "conn")?;
        if entries
            .iter()
            .any(|(k, _)| CONN_MAP_KEYS.contains(&k.as_str()))
        {
            // Carmine's conn map: {pool {...}, spec {...}}.
            reject_unknown(&entries, CONN_MAP_KEYS, "conn", &[SPEC_KEYS])?;
            let mut f = Fields::default();
            for (key, value) in &entries {
                let inner = match value {
                    SpecValue::Map(m) => m,
                    SpecValue::Null if key == "pool" => continue,
                    other => {
                        return Err(Error::invalid(
                            "conn",
                            format!("'{key}' must be a map, got {}", other.type_name()),
                        ))
                    }
                };
                let inner = normalize_keys(inner, key)?;
                if key == "spec" {
                    let pool = (f.max_total, f.max_idle);
                    f = Fields::from_spec_entries(&inner)?;
                    (f.max_total, f.max_idle) = pool;
                } else {
                    f.read_pool(&inner)?;
                }
            }
            Ok(f)
        } else {
            Fields::from_spec_entries(&entries)
        }
    }

    fn from_spec_entries(entries: &[(String, SpecValue)]) -> Result<Fields> {
        reject_unknown(entries, SPEC_KEYS, "spec", &[CONN_MAP_KEYS, POOL_KEYS])?;
        let mut f = Fields::default();
        let mut from_uri = None;
        for (key, v) in entries {
            match key.as_str() {
                "uri" => from_uri = get_str(key, v)?.map(|u| Fields::from_uri(&u)).transpose()?,
                "host" => f.host = get_str(key, v)?,
                "port" => f.port = get_int(key, v, 1, 65535)?.map(|p| p as u16),
                "username" => f.username = get_str(key, v)?,
                "password" => f.password = get_str(key, v)?,
                "db" => f.db = get_int(key, v, 0, i32::MAX as i128)?.map(|d| d as i64),
                "timeout-ms" => {
                    f.timeout_ms = get_int(key, v, 1, MAX_TIMEOUT_MS)?.map(|t| t as u64)
                }
                "conn-timeout-ms" => {
                    f.connect_timeout_ms = get_int(key, v, 1, MAX_TIMEOUT_MS)?.map(|t| t as u64)
                }
                "read-timeout-ms" => {
                    f.read_timeout_ms = get_int(key, v, 1, MAX_TIMEOUT_MS)?.map(|t| t as u64)
                }
                "idle-timeout-ms" => {
                    f.idle_timeout_ms = get_int(key, v, 1, MAX_TIMEOUT_MS)?.map(|t| t as u64)
                }
                "ssl" => f.tls = get_bool(key, v)?,
                "ca-cert" => f.ca_cert = get_str(key, v)?.map(PathBuf::from),
                "key-prefix" => f.key_prefix = get_str(key, v)?,
                "keep-alive" => f.keep_alive = get_bool(key, v)?,
                "sentinels" | "cluster-nodes" => {
                    let default_port = if key == "sentinels" {
                        DEFAULT_SENTINEL_PORT
                    } else {
                        DEFAULT_PORT
                    };
                    let nodes = get_str(key, v)?
                        .map(|list| parse_node_list(&list, default_port))
                        .transpose()
                        .map_err(|why| Error::invalid("conn", format!("'{key}': {why}")))?;
                    if key == "sentinels" {
                        f.sentinels = nodes;
                    } else {
                        f.cluster_nodes = nodes;
                    }
                }
                "master-name" => f.master_name = get_str(key, v)?,
                _ => unreachable!("reject_unknown let through '{key}'"),
            }
        }
        match from_uri {
            Some(u) => u.merge(f),
            None => Ok(f),
        }
    }

    fn read_pool(&mut self, entries: &[(String, SpecValue)]) -> Result<()> {
        reject_unknown(entries, POOL_KEYS, "pool", &[])?;
        for (key, v) in entries {
            let n = get_int(key, v, 0, MAX_POOL_SIZE)?.map(|n| n as usize);
            let slot = if key.starts_with("max-total") {
                &mut self.max_total
            } else {
                &mut self.max_idle
            };
            if slot.is_some() && n.is_some() && *slot != n {
                return Err(Error::invalid(
                    "pool",
                    format!("'{key}' contradicts its alias"),
                ));
            }
            *slot = slot.or(n);
        }
        Ok(())
    }

    /// Merges explicit keys into what the `uri` key said. A key that contradicts the URI is an
    /// error: picking one silently would connect somewhere the caller did not mean.
    fn merge(self, keys: Fields) -> Result<Fields> {
        fn pick<T: PartialEq + fmt::Debug>(
            name: &'static str,
            from_uri: Option<T>,
            from_key: Option<T>,
            secret: bool,
        ) -> Result<Option<T>> {
            match (from_uri, from_key) {
                (Some(a), Some(b)) if a != b => {
                    let detail = if secret {
                        String::new()
                    } else {
                        format!(": uri says {a:?}, key says {b:?}")
                    };
                    Err(Error::invalid(
                        "conn",
                        format!("'{name}' contradicts the 'uri' key{detail}; give it once"),
                    ))
                }
                (a, b) => Ok(a.or(b)),
            }
        }
        if self.unix_path.is_some() && (keys.host.is_some() || keys.port.is_some()) {
            return Err(Error::invalid(
                "conn",
                "'host'/'port' contradict a unix socket 'uri'; give one address",
            ));
        }
        Ok(Fields {
            tls: pick("ssl", self.tls.filter(|t| *t), keys.tls, false)?.or(self.tls),
            host: pick("host", self.host, keys.host, false)?,
            port: pick("port", self.port, keys.port, false)?,
            unix_path: self.unix_path,
            username: pick("username", self.username, keys.username, false)?,
            password: pick("password", self.password, keys.password, true)?,
            db: pick("db", self.db, keys.db, false)?,
            sentinels: pick("sentinels", self.sentinels, keys.sentinels, false)?,
            master_name: pick("master-name", self.master_name, keys.master_name, false)?,
            cluster_nodes: pick(
                "cluster-nodes",
                self.cluster_nodes,
                keys.cluster_nodes,
                false,
            )?,
            ..keys
        })
    }

    fn build(self) -> Result<ConnSpec> {
        let tls = self.tls.unwrap_or(false);
        let single = self.host.is_some() || self.port.is_some() || self.unix_path.is_some();
        let address = match (self.sentinels, self.cluster_nodes, self.master_name) {
            (Some(_), Some(_), _) => {
                return Err(Error::invalid("conn", "give 'sentinels' or 'cluster-nodes', not both"))
            }
            (Some(_), None, None) => {
                return Err(Error::invalid("master-name", "'sentinels' need a 'master-name'"))
            }
            (None, _, Some(_)) => {
                return Err(Error::invalid("master-name", "'master-name' needs 'sentinels'"))
            }
            (Some(_), _, _) | (_, Some(_), _) if single => {
                return Err(Error::invalid(
                    "conn",
                    "'host', 'port' or a socket contradict 'sentinels'/'cluster-nodes'; give one address",
                ))
            }
            (Some(_), _, _) | (_, Some(_), _) if tls => {
                return Err(Error::invalid(
                    "ssl",
                    "TLS with Sentinel or Cluster is not supported yet",
                ))
            }
            (Some(sentinels), None, Some(master)) => Address::Sentinel { sentinels, master },
            (None, Some(nodes), None) => {
                if self.db.unwrap_or(0) != 0 {
                    return Err(Error::invalid("db", "a cluster has only db 0"));
                }
                Address::Cluster { nodes }
            }
            (None, None, None) => match self.unix_path {
                Some(path) => Address::Unix(path),
                None => Address::Tcp {
                    host: self.host.unwrap_or_else(|| DEFAULT_HOST.to_owned()),
                    port: self.port.unwrap_or(DEFAULT_PORT),
                },
            },
        };
        if tls && matches!(address, Address::Unix(_)) {
            return Err(Error::invalid(
                "ssl",
                "TLS over a unix socket is not supported",
            ));
        }
        if self.ca_cert.is_some() && !tls {
            return Err(Error::invalid(
                "ca-cert",
                "'ca-cert' needs TLS: use a rediss:// URI or 'ssl' true",
            ));
        }
        let key_prefix = self
            .key_prefix
            .unwrap_or_else(|| DEFAULT_KEY_PREFIX.to_owned());
        if key_prefix.len() > MAX_KEY_PREFIX_BYTES || key_prefix.chars().any(char::is_control) {
            return Err(Error::invalid(
                "key-prefix",
                format!("'key-prefix' must be at most {MAX_KEY_PREFIX_BYTES} bytes without control characters"),
            ));
        }
        let max_total = self.max_total.unwrap_or(DEFAULT_MAX_TOTAL);
        if max_total == 0 {
            return Err(Error::invalid("pool", "'max-total' must be at least 1"));
        }
        let max_idle = self.max_idle.unwrap_or(max_total);
        if max_idle > max_total {
            return Err(Error::invalid(
                "pool",
                format!("'max-idle' ({max_idle}) must not exceed 'max-total' ({max_total})"),
            ));
        }
        let ms = |explicit: Option<u64>, default| {
            Duration::from_millis(explicit.or(self.timeout_ms).unwrap_or(default))
        };
        Ok(ConnSpec {
            address,
            tls,
            ca_cert: self.ca_cert,
            username: self.username,
            password: self.password,
            db: self.db.unwrap_or(0),
            connect_timeout: ms(self.connect_timeout_ms, DEFAULT_CONNECT_TIMEOUT_MS),
            read_timeout: ms(self.read_timeout_ms, DEFAULT_READ_TIMEOUT_MS),
            key_prefix,
            keep_alive: self.keep_alive.unwrap_or(false),
            max_total,
            max_idle,
            idle_timeout: Duration::from_millis(
                self.idle_timeout_ms.unwrap_or(DEFAULT_IDLE_TIMEOUT_MS),
            ),
        })
    }
}

/// Strips the `:` of Clojure keywords and rejects a key given twice (`host` and `:host`).
fn normalize_keys(entries: &[(String, SpecValue)], what: &str) -> Result<Vec<(String, SpecValue)>> {
    let mut out: Vec<(String, SpecValue)> = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        let key = key.strip_prefix(':').unwrap_or(key);
        if out.iter().any(|(k, _)| k == key) {
            return Err(Error::invalid(
                "conn",
                format!("key '{key}' appears twice in the {what} map"),
            ));
        }
        out.push((key.to_owned(), value.clone()));
    }
    Ok(out)
}

fn reject_unknown(
    entries: &[(String, SpecValue)],
    valid: &[&str],
    what: &str,
    misplaced: &[&[&str]],
) -> Result<()> {
    for (key, _) in entries {
        if valid.contains(&key.as_str()) {
            continue;
        }
        let hint = if misplaced.iter().any(|keys| keys.contains(&key.as_str())) {
            " (it belongs in another part of the conn map)"
        } else {
            ""
        };
        return Err(Error::invalid(
            "conn",
            format!(
                "unknown key '{key}' in the {what} map{hint}; valid keys: {}",
                valid.join(", ")
            ),
        ));
    }
    Ok(())
}

fn get_str(key: &str, v: &SpecValue) -> Result<Option<String>> {
    match v {
        SpecValue::Null => Ok(None),
        SpecValue::Str(s) => Ok(Some(s.clone())),
        other => Err(wrong_type(key, "a string", other)),
    }
}

fn get_int(key: &str, v: &SpecValue, min: i128, max: i128) -> Result<Option<i128>> {
    let n = match v {
        SpecValue::Null => return Ok(None),
        SpecValue::Int(n) => *n,
        SpecValue::Str(s) => s.trim().parse::<i128>().map_err(|_| {
            // The text is not echoed: it may be a secret given under the wrong key.
            Error::invalid(
                "conn",
                format!("'{key}' must be an integer, got a non-numeric string"),
            )
        })?,
        other => return Err(wrong_type(key, "an integer", other)),
    };
    if n < min || n > max {
        return Err(Error::invalid(
            "conn",
            format!("'{key}' must be between {min} and {max}, got {n}"),
        ));
    }
    Ok(Some(n))
}

fn get_bool(key: &str, v: &SpecValue) -> Result<Option<bool>> {
    match v {
        SpecValue::Null => Ok(None),
        SpecValue::Bool(b) => Ok(Some(*b)),
        SpecValue::Str(s) if s == "true" || s == "false" => Ok(Some(s == "true")),
        other => Err(wrong_type(key, "a boolean", other)),
    }
}

fn wrong_type(key: &str, expected: &str, got: &SpecValue) -> Error {
    Error::invalid(
        "conn",
        format!("'{key}' must be {expected}, got {}", got.type_name()),
    )
}

/// `user[:password]`, both %-decoded; empty parts are absent. Errors never echo the text.
fn parse_userinfo(userinfo: &str) -> std::result::Result<(Option<String>, Option<String>), String> {
    let (user, pass) = match userinfo.split_once(':') {
        Some((u, p)) => (u, Some(p)),
        None => (userinfo, None),
    };
    let user = percent_decode(user, "username").map_err(|e| e.message().to_owned())?;
    let pass = pass
        .map(|p| percent_decode(p, "password"))
        .transpose()
        .map_err(|_| "the password has an invalid %-escape".to_owned())?;
    Ok((
        Some(user).filter(|u| !u.is_empty()),
        pass.filter(|p| !p.is_empty()),
    ))
}

/// `host[:port]` or `[v6][:port]`; either part may be absent.
fn parse_authority(authority: &str) -> std::result::Result<(Option<String>, Option<u16>), String> {
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or("unclosed '[' in an IPv6 host")?;
        match after {
            "" => (host, None),
            p => (
                host,
                Some(
                    p.strip_prefix(':')
                        .ok_or("unexpected text after the IPv6 host")?,
                ),
            ),
        }
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let host = match host {
        "" => None,
        h => Some(percent_decode(h, "host").map_err(|e| e.message().to_owned())?),
    };
    let port = port
        .map(parse_port_text)
        .transpose()
        .map_err(|e| e.message().to_owned())?;
    Ok((host, port))
}

/// `h1[:p1],h2[:p2],...`: at least one node, each with a host.
fn parse_node_list(
    list: &str,
    default_port: u16,
) -> std::result::Result<Vec<(String, u16)>, String> {
    let mut nodes = Vec::new();
    for item in list.split(',').map(str::trim) {
        let (host, port) = parse_authority(item)?;
        let host = host.ok_or("every node needs a host, as in h1:26379,h2:26379")?;
        nodes.push((host, port.unwrap_or(default_port)));
    }
    Ok(nodes)
}

fn parse_port_text(text: &str) -> Result<u16> {
    match text.parse::<u32>() {
        Ok(p) if (1..=65535).contains(&p) => Ok(p as u16),
        _ => Err(Error::invalid(
            "port",
            "port must be a number between 1 and 65535".to_owned(),
        )),
    }
}

fn parse_db(text: &str) -> Result<i64> {
    match text.parse::<i64>() {
        Ok(db) if (0..=i32::MAX as i64).contains(&db) => Ok(db),
        _ => Err(Error::invalid(
            "db",
            "db must be a non-negative integer".to_owned(),
        )),
    }
}

fn percent_decode(text: &str, arg: &'static str) -> Result<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| Error::invalid(arg, format!("invalid %-escape in the {arg}")))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| Error::invalid(arg, format!("the {arg} is not UTF-8 once %-decoded")))
}

/// A URI fit for a message. The user info and the query, which may hold a password, become
/// `***`; so do a port or db that is not one, since that is where a password lands when the `@`
/// was forgotten (`redis://:secret`).
pub(crate) fn redact_uri(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://") else {
        return "***".to_owned();
    };
    let (user, rest) = match rest.rfind('@') {
        Some(i) => ("***@", &rest[i + 1..]),
        None => ("", rest),
    };
    let (rest, query) = match rest.split_once(['?', '#']) {
        Some((before, _)) => (before, "?***"),
        None => (rest, ""),
    };
    if scheme.ends_with("unix") {
        return format!("{scheme}://{user}{rest}{query}");
    }
    let (authority, path) = match rest.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (rest, None),
    };
    let port_at = if authority.starts_with('[') {
        authority.find("]:").map(|i| i + 1)
    } else {
        authority.find(':')
    };
    let authority = match port_at {
        Some(i) if parse_port_text(&authority[i + 1..]).is_err() => {
            format!("{}:***", &authority[..i])
        }
        _ => authority.to_owned(),
    };
    let path = match path {
        Some(p) if !p.is_empty() && parse_db(p).is_err() => "/***".to_owned(),
        Some(p) => format!("/{p}"),
        None => String::new(),
    };
    format!("{scheme}://{user}{authority}{path}{query}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(spec: &ConnSpec) -> (&str, u16) {
        match &spec.address {
            Address::Tcp { host, port } => (host, *port),
            other => panic!("expected tcp, got {other:?}"),
        }
    }

    fn s(v: &str) -> SpecValue {
        SpecValue::Str(v.into())
    }

    fn map(entries: &[(&str, SpecValue)]) -> Vec<(String, SpecValue)> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn invalid_message(result: Result<ConnSpec>) -> String {
        match result {
            Err(Error::InvalidArgument { message, .. }) => message,
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    #[test]
    fn uri_defaults() {
        let spec = ConnSpec::from_uri("redis://").unwrap();
        assert_eq!(tcp(&spec), ("127.0.0.1", 6379));
        assert_eq!(spec.db, 0);
        assert!(!spec.tls);
        assert_eq!(spec.connect_timeout, Duration::from_millis(4000));
        assert_eq!(spec.read_timeout, Duration::from_millis(4000));
        assert_eq!(spec.key_prefix, "dibs:");
    }

    #[test]
    fn uri_full_with_awkward_password() {
        let spec = ConnSpec::from_uri("rediss://app:p@ss:w/rd#1@cache.local:6380/3").unwrap();
        assert_eq!(tcp(&spec), ("cache.local", 6380));
        assert!(spec.tls);
        assert_eq!(spec.username.as_deref(), Some("app"));
        assert_eq!(spec.password.as_deref(), Some("p@ss:w/rd#1"));
        assert_eq!(spec.db, 3);
    }

    #[test]
    fn uri_percent_decoding_and_aliases() {
        let spec = ConnSpec::from_uri("valkeys://us%65r:p%40%3A@h").unwrap();
        assert!(spec.tls);
        assert_eq!(spec.username.as_deref(), Some("user"));
        assert_eq!(spec.password.as_deref(), Some("p@:"));
        let spec = ConnSpec::from_uri("valkey://:secret@[::1]:7000").unwrap();
        assert_eq!(tcp(&spec), ("::1", 7000));
        assert_eq!(spec.username, None);
        assert_eq!(spec.password.as_deref(), Some("secret"));
        assert_eq!(spec.endpoint(), "[::1]:7000");
    }

    #[test]
    fn uri_unix_socket() {
        let spec =
            ConnSpec::from_uri("redis+unix:///run/redis/redis.sock?db=2&pass=x%26y").unwrap();
        assert_eq!(spec.address, Address::Unix("/run/redis/redis.sock".into()));
        assert_eq!(spec.db, 2);
        assert_eq!(spec.password.as_deref(), Some("x&y"));
        let spec = ConnSpec::from_uri("unix:///tmp/r.sock").unwrap();
        assert_eq!(spec.address, Address::Unix("/tmp/r.sock".into()));
    }

    #[test]
    fn uri_errors_name_the_problem_and_hide_the_password() {
        for (uri, fragment) in [
            ("localhost:6379", "expected scheme://"),
            ("http://h", "unknown scheme 'http'"),
            ("redis://h:0", "between 1 and 65535"),
            ("redis://h:70000", "between 1 and 65535"),
            ("redis://h:port", "between 1 and 65535"),
            ("redis://h/abc", "db must be a non-negative integer"),
            ("redis://h/-1", "db must be a non-negative integer"),
            ("redis://h/0?x=1", "query parameters"),
            ("redis://[::1", "unclosed"),
            ("unix://relative.sock", "absolute"),
            ("redis://u:%zz@h", "invalid %-escape"),
        ] {
            let message = invalid_message(ConnSpec::from_uri(uri));
            assert!(message.contains(fragment), "{uri}: {message}");
        }
        let message = invalid_message(ConnSpec::from_uri("redis://u:hunter2@h:99999"));
        assert!(!message.contains("hunter2"), "{message}");
    }

    #[test]
    fn map_spec_shape() {
        let spec = ConnSpec::from_map(&map(&[
            ("host", s("h")),
            ("port", SpecValue::Int(6380)),
            ("db", s("2")),
            ("password", s("pw")),
            ("timeout-ms", SpecValue::Int(500)),
            ("read-timeout-ms", SpecValue::Int(250)),
            ("key-prefix", s("app:locks:")),
        ]))
        .unwrap();
        assert_eq!(tcp(&spec), ("h", 6380));
        assert_eq!(spec.db, 2);
        assert_eq!(spec.connect_timeout, Duration::from_millis(500));
        assert_eq!(spec.read_timeout, Duration::from_millis(250));
        assert_eq!(spec.key_prefix, "app:locks:");
    }

    #[test]
    fn map_keyword_keys_and_conn_map_shape() {
        let spec = ConnSpec::from_map(&map(&[
            (
                ":pool",
                SpecValue::Map(map(&[(":max-total-per-key", SpecValue::Int(8))])),
            ),
            (
                ":spec",
                SpecValue::Map(map(&[(":uri", s("redis://h:7000/1"))])),
            ),
        ]))
        .unwrap();
        assert_eq!(tcp(&spec), ("h", 7000));
        assert_eq!(spec.db, 1);
        assert_eq!((spec.max_total, spec.max_idle), (8, 8));
    }

    #[test]
    fn map_uri_and_agreeing_keys_merge() {
        let spec = ConnSpec::from_map(&map(&[
            ("uri", s("redis://h:7000")),
            ("port", SpecValue::Int(7000)),
            ("db", SpecValue::Int(4)),
        ]))
        .unwrap();
        assert_eq!(tcp(&spec), ("h", 7000));
        assert_eq!(spec.db, 4);
    }

    #[test]
    fn map_errors() {
        let cases: Vec<(Vec<(String, SpecValue)>, &str)> = vec![
            (map(&[("hots", s("h"))]), "unknown key 'hots'"),
            (
                map(&[("port", SpecValue::Other("java.lang.Double".into()))]),
                "'port' must be an integer, got java.lang.Double",
            ),
            (map(&[("port", s("abc"))]), "'port' must be an integer"),
            (
                map(&[("port", SpecValue::Int(70000))]),
                "between 1 and 65535",
            ),
            (
                map(&[("host", SpecValue::Int(1))]),
                "'host' must be a string",
            ),
            (map(&[("ssl", s("yes"))]), "'ssl' must be a boolean"),
            (
                map(&[("uri", s("redis://h:7000")), ("port", SpecValue::Int(7001))]),
                "'port' contradicts the 'uri' key",
            ),
            (
                map(&[("uri", s("redis://h")), ("host", s("other"))]),
                "'host' contradicts",
            ),
            (
                map(&[("uri", s("rediss://h")), ("ssl", SpecValue::Bool(false))]),
                "'ssl' contradicts",
            ),
            (map(&[("host", s("h")), (":host", s("h"))]), "appears twice"),
            (
                map(&[("spec", SpecValue::Map(vec![])), ("host", s("h"))]),
                "unknown key 'host' in the conn map",
            ),
            (map(&[("spec", s("redis://h"))]), "'spec' must be a map"),
            (
                map(&[(
                    "pool",
                    SpecValue::Map(map(&[("max-wait", SpecValue::Int(1))])),
                )]),
                "unknown key 'max-wait' in the pool map",
            ),
            (map(&[("ca-cert", s("/ca.pem"))]), "needs TLS"),
            (
                map(&[("timeout-ms", SpecValue::Int(0))]),
                "'timeout-ms' must be between 1",
            ),
        ];
        for (entries, fragment) in cases {
            let message = invalid_message(ConnSpec::from_map(&entries));
            assert!(message.contains(fragment), "{entries:?}: {message}");
        }
        let message = invalid_message(ConnSpec::from_map(&map(&[
            ("uri", s("redis://:one@h")),
            ("password", s("two")),
        ])));
        assert!(
            !message.contains("one") && !message.contains("two"),
            "{message}"
        );
    }

    #[test]
    fn debug_never_shows_the_password() {
        let spec = ConnSpec::from_uri("redis://u:hunter2@h").unwrap();
        assert!(!format!("{spec:?}").contains("hunter2"));
        assert_eq!(redact_uri("redis://u:hunter2@h:1/0"), "redis://***@h:1/0");
        assert_eq!(redact_uri("unix:///s?pass=hunter2"), "unix:///s?***");
        // A forgotten '@' puts the password where the port or db would be.
        assert_eq!(redact_uri("redis://:hunter2"), "redis://:***");
        assert_eq!(redact_uri("redis://h:6379/hunter2"), "redis://h:6379/***");
        assert_eq!(redact_uri("redis://[::1]:hunter2"), "redis://[::1]:***");
        assert_eq!(redact_uri("hunter2"), "***");
    }
}
