//! [`Fields`]: what a source (a URI, a map) said, before defaults; and [`Fields::build`], which
//! checks it as a whole and makes the [`ConnSpec`]. The parsers fill it in (`uri`, `map`).

use std::path::PathBuf;
use std::time::Duration;

use super::parse_error::{ParseError, Parsed};
use super::{
    Address, ClientCert, ConnSpec, Durable, Pem, SentinelAuth, ServerSpec,
    DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_HOST, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_KEY_PREFIX,
    DEFAULT_MAX_TOTAL, DEFAULT_PORT, DEFAULT_READ_TIMEOUT_MS, MAX_INSTANCE_ID_BYTES,
    MAX_KEY_PREFIX_BYTES,
};

/// The settings a source gave explicitly; `None` means "not said", so a URI and explicit keys
/// can be checked against each other before defaults apply.
// No Debug: it holds the passwords in the clear.
#[derive(Default)]
pub(super) struct Fields {
    pub(super) tls: Option<bool>,
    pub(super) host: Option<String>,
    pub(super) port: Option<u16>,
    pub(super) unix_path: Option<PathBuf>,
    pub(super) username: Option<String>,
    pub(super) password: Option<String>,
    pub(super) db: Option<i64>,
    pub(super) timeout_ms: Option<u64>,
    pub(super) connect_timeout_ms: Option<u64>,
    pub(super) read_timeout_ms: Option<u64>,
    pub(super) idle_timeout_ms: Option<u64>,
    pub(super) ca_cert: Option<Pem>,
    pub(super) client_cert: Option<Pem>,
    pub(super) client_key: Option<Pem>,
    pub(super) sentinel_username: Option<String>,
    pub(super) sentinel_password: Option<String>,
    pub(super) key_prefix: Option<String>,
    pub(super) keep_alive: Option<bool>,
    pub(super) durable: Option<Durable>,
    pub(super) history: Option<bool>,
    pub(super) instance_id: Option<String>,
    pub(super) retry_failed_ticks: Option<bool>,
    pub(super) retry_unended_ticks: Option<bool>,
    pub(super) sentinels: Option<Vec<(String, u16)>>,
    pub(super) master_name: Option<String>,
    pub(super) cluster_nodes: Option<Vec<(String, u16)>>,
    pub(super) max_total: Option<usize>,
    pub(super) max_idle: Option<usize>,
}

impl Fields {
    /// Checks what the parsers found as a whole and applies the defaults: the one way to a
    /// [`ConnSpec`].
    pub(super) fn build(self) -> Parsed<ConnSpec> {
        let tls = self.tls.unwrap_or(false);
        let single = self.host.is_some() || self.port.is_some() || self.unix_path.is_some();
        let multi_node_key = if self.sentinels.is_some() {
            "sentinels"
        } else {
            "cluster-nodes"
        };
        let address = match (self.sentinels, self.cluster_nodes, self.master_name) {
            (Some(_), Some(_), _) => {
                return Err(ParseError::invalid(
                    "cluster-nodes",
                    "give 'sentinels' or 'cluster-nodes', not both",
                ))
            }
            (Some(_), None, None) => {
                return Err(ParseError::invalid("master-name", "'sentinels' need a 'master-name'"))
            }
            (None, _, Some(_)) => {
                return Err(ParseError::invalid("sentinels", "'master-name' needs 'sentinels'"))
            }
            (Some(_), _, _) | (_, Some(_), _) if single => {
                return Err(ParseError::invalid(
                    multi_node_key,
                    "'host', 'port' or a socket contradict 'sentinels'/'cluster-nodes'; give one address",
                ))
            }
            (Some(sentinels), None, Some(master)) => Address::Sentinel { sentinels, master },
            (None, Some(nodes), None) => {
                if self.db.unwrap_or(0) != 0 {
                    return Err(ParseError::invalid("db", "a cluster has only db 0"));
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
            return Err(ParseError::invalid(
                "ssl",
                "TLS over a unix socket is not supported",
            ));
        }
        for (arg, given) in [
            ("ca-cert", self.ca_cert.is_some()),
            ("client-cert", self.client_cert.is_some()),
            ("client-key", self.client_key.is_some()),
        ] {
            if given && !tls {
                return Err(ParseError::invalid(
                    arg,
                    format!("'{arg}' needs TLS: use a rediss:// URI or 'ssl' true"),
                ));
            }
        }
        let client_cert = match (self.client_cert, self.client_key) {
            (Some(cert), Some(key)) => Some(ClientCert { cert, key }),
            (None, None) => None,
            (Some(_), None) => return Err(ParseError::invalid(
                "client-key",
                "'client-cert' needs its private key: give 'client-key' too (or 'client-key-pem')",
            )),
            (None, Some(_)) => return Err(ParseError::invalid(
                "client-cert",
                "'client-key' needs its certificate: give 'client-cert' too (or 'client-cert-pem')",
            )),
        };
        // An empty value is no value (as Spring's `${SENTINEL_PASSWORD:}` gives it).
        let given = |v: Option<String>| v.filter(|v| !v.is_empty());
        let sentinel_auth = match (given(self.sentinel_username), given(self.sentinel_password)) {
            (None, None) => None,
            _ if !matches!(address, Address::Sentinel { .. }) => {
                return Err(ParseError::invalid(
                    "sentinels",
                    "'sentinel-username' and 'sentinel-password' need 'sentinels'",
                ))
            }
            (username, Some(password)) => Some(SentinelAuth { username, password }),
            (Some(_), None) => {
                return Err(ParseError::invalid(
                    "sentinel-password",
                    "'sentinel-username' needs 'sentinel-password'",
                ))
            }
        };
        let key_prefix = self
            .key_prefix
            .unwrap_or_else(|| DEFAULT_KEY_PREFIX.to_owned());
        if key_prefix.len() > MAX_KEY_PREFIX_BYTES || key_prefix.chars().any(char::is_control) {
            return Err(ParseError::invalid(
                "key-prefix",
                format!("'key-prefix' must be at most {MAX_KEY_PREFIX_BYTES} bytes without control characters"),
            ));
        }
        if let Some(id) = &self.instance_id {
            // A `;` would split the run's record (`history::record`) into other fields: refused,
            // so that a record always reads back as written.
            if !crate::history::is_label(id, MAX_INSTANCE_ID_BYTES) {
                return Err(ParseError::invalid(
                    "instance-id",
                    format!("'instance-id' must be 1 to {MAX_INSTANCE_ID_BYTES} bytes without ';' or control characters"),
                ));
            }
        }
        let max_total = self.max_total.unwrap_or(DEFAULT_MAX_TOTAL);
        if max_total == 0 {
            return Err(ParseError::invalid(
                "pool",
                "'max-total' must be at least 1",
            ));
        }
        let max_idle = self.max_idle.unwrap_or(max_total);
        if max_idle > max_total {
            return Err(ParseError::invalid(
                "pool",
                format!("'max-idle' ({max_idle}) must not exceed 'max-total' ({max_total})"),
            ));
        }
        let ms = |explicit: Option<u64>, default| {
            Duration::from_millis(explicit.or(self.timeout_ms).unwrap_or(default))
        };
        Ok(ConnSpec {
            server: ServerSpec {
                address,
                tls,
                ca_cert: self.ca_cert,
                client_cert,
                username: self.username,
                password: self.password,
                sentinel_auth,
                db: self.db.unwrap_or(0),
                connect_timeout: ms(self.connect_timeout_ms, DEFAULT_CONNECT_TIMEOUT_MS),
                read_timeout: ms(self.read_timeout_ms, DEFAULT_READ_TIMEOUT_MS),
                max_total,
                max_idle,
                idle_timeout: Duration::from_millis(
                    self.idle_timeout_ms.unwrap_or(DEFAULT_IDLE_TIMEOUT_MS),
                ),
            },
            key_prefix,
            keep_alive: self.keep_alive.unwrap_or(false),
            durable: self.durable.unwrap_or(Durable::Auto),
            history: self.history.unwrap_or(true),
            instance_id: self.instance_id,
            retry_failed_ticks: self.retry_failed_ticks.unwrap_or(false),
            retry_unended_ticks: self.retry_unended_ticks.unwrap_or(false),
        })
    }
}
