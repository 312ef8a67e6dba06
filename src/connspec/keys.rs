//! The conn keys: the one list of what a spec map (and `DibsOptions`, the Spring starter, the
//! CLI's `--redis-opt`) may set. The map parser refuses any other key; `tests/it/conn_keys.rs`
//! fails when the Java side or the guide's table names a key this list does not, or leaves out
//! one it does.

/// One key of a spec map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnKey {
    /// The key, as a map gives it (`:key` and `"key"` alike).
    pub name: &'static str,
    /// What value it takes, for people to read.
    pub takes: &'static str,
    /// What it sets, in a few words.
    pub sets: &'static str,
}

const fn key(name: &'static str, takes: &'static str, sets: &'static str) -> ConnKey {
    ConnKey { name, takes, sets }
}

/// The keys of a spec map (Carmine's `:spec`, with dibs's own), in the order the guide shows.
#[rustfmt::skip] // a table: one key a line
pub const CONN_KEYS: &[ConnKey] = &[
    key("uri", "a Redis URI", "the server, as a String conn does; other keys must not contradict it"),
    key("host", "a host name or address", "the server's host (127.0.0.1)"),
    key("port", "1 to 65535", "the server's port (6379)"),
    key("username", "a string", "the ACL user"),
    key("password", "a string", "the password; never shown"),
    key("db", "0 or more", "the database number (0)"),
    key("timeout-ms", "milliseconds", "the connect and the read timeout at once"),
    key("conn-timeout-ms", "milliseconds", "the connect timeout (4000)"),
    key("read-timeout-ms", "milliseconds", "the read and write timeout of every command (4000)"),
    key("idle-timeout-ms", "milliseconds", "how long a pooled connection may idle and be reused (60000)"),
    key("ssl", "true or false", "TLS, as rediss:// does"),
    key("ca-cert", "a PEM file's path", "the CAs the server's certificate must chain to"),
    key("client-cert", "a PEM file's path", "the client certificate for mutual TLS, and its chain"),
    key("client-key", "a PEM file's path", "the client certificate's private key, unencrypted"),
    key("ca-cert-pem", "PEM text", "ca-cert, in memory; never shown"),
    key("client-cert-pem", "PEM text", "client-cert, in memory; never shown"),
    key("client-key-pem", "PEM text", "client-key, in memory, so that it never touches the disk; never shown"),
    key("key-prefix", "a string", "what every key of dibs starts with (dibs:)"),
    key("keep-alive", "true or false", "extend the lock every atMost / 3 while the task runs (false)"),
    key("durable", "auto, off, N, aof or aof:N", "what an acquire waits for, so that a failover cannot lose the lock (auto)"),
    key("history", "true or false", "record each run in its job's history (true)"),
    key("instance-id", "1 to 128 bytes, no ';'", "names this instance in the history, beside host and pid"),
    key("retry-failed-ticks", "true or false", "let a failed tick's lock go at once, for a later fire to run it (false)"),
    key("retry-unended-ticks", "true or false", "let catch-up run again a tick whose run never recorded its end (false)"),
    key("sentinels", "host:port,host:port", "the Sentinels to ask for the master"),
    key("master-name", "a string", "the name the Sentinels know the master by"),
    key("sentinel-username", "a string", "the Sentinels' own ACL user"),
    key("sentinel-password", "a string", "the Sentinels' own password; never shown"),
    key("cluster-nodes", "host:port,host:port", "seed nodes of a Redis Cluster"),
];

/// The keys of Carmine's `:pool` map.
pub const POOL_KEYS: &[&str] = &[
    "max-total",
    "max-total-per-key",
    "max-idle",
    "max-idle-per-key",
];

/// The keys of Carmine's conn map, `{:pool {...} :spec {...}}`.
pub const CONN_MAP_KEYS: &[&str] = &["spec", "pool"];

/// The names of [`CONN_KEYS`], for the parser's lookups and messages.
pub(super) const SPEC_KEYS: [&str; CONN_KEYS.len()] = {
    let mut names = [""; CONN_KEYS.len()];
    let mut i = 0;
    while i < CONN_KEYS.len() {
        names[i] = CONN_KEYS[i].name;
        i += 1;
    }
    names
};
