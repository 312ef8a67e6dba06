//! The cluster client's connection to one node: a [`Wire`], as every connection dibs opens
//! itself, so that a cluster's commands too are bounded as a whole from their send.
//!
//! The redis crate's cluster connection routes each command and opens its node connections
//! itself, lazily (at its first command, after a `MOVED`), through [`Connect::connect`], which
//! gets only the node's address. What dibs needs to open one (the spec: credentials, db,
//! timeouts; the TLS roots and client certificate) is set for the thread that runs the cluster
//! connection, for the length of each call ([`Setup::around`]).

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::cluster::{ClusterClient, ClusterConnection, Connect};
use redis::{ConnectionAddr, ConnectionLike, ErrorKind, IntoConnectionInfo, RedisResult, Value};

use super::connect::connect_node;
use super::open::handshake;
use super::wire::Wire;
use super::Conn;
use crate::connspec::ServerSpec;
use crate::tls::TlsConfig;

/// What opening a node takes: one per cluster spec, shared by its connections.
pub(crate) struct Setup {
    pub(crate) spec: ServerSpec,
    pub(crate) tls: Option<TlsConfig>,
}

impl Setup {
    /// How many of the spec's seeds are left from `host:port` on (itself included), when it is
    /// one: the cluster client tries them in their order until one answers, so they are checked
    /// for real, each within its share of the connect's time.
    fn seeds_from(&self, host: &str, port: u16) -> Option<usize> {
        match self.spec.address() {
            crate::connspec::Address::Cluster { nodes } => nodes
                .iter()
                .position(|(h, p)| h == host && *p == port)
                .map(|at| nodes.len() - at),
            _ => None,
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Setup>>> = const { RefCell::new(None) };
    /// What last went wrong with a node on this thread, where it says more than the cluster
    /// client's own error: it folds a seed that did not answer, or refused the client, into a
    /// generic one ("failed to respond to connection check").
    static FAILED: std::cell::Cell<Option<Failed>> = const { std::cell::Cell::new(None) };
    /// While the cluster connection is made on this thread: when it must be made by. Every
    /// node's open and command is bounded by it then, not by a timeout of its own.
    static CONNECTING_UNTIL: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// A node's failure that the cluster client's error would hide.
#[derive(Clone, Copy)]
enum Failed {
    Timeout,
    /// NOAUTH, WRONGPASS, or an AUTH refused.
    Authentication,
}

/// `result`, noted in [`FAILED`] when it is a timeout or an authentication failure.
fn noted<T>(result: RedisResult<T>) -> RedisResult<T> {
    if let Err(e) = &result {
        let failed = if e.is_timeout() {
            Some(Failed::Timeout)
        } else if e.kind() == ErrorKind::AuthenticationFailed
            || matches!(e.code(), Some("NOAUTH" | "WRONGPASS"))
        {
            Some(Failed::Authentication)
        } else {
            None
        };
        if failed.is_some() {
            FAILED.with(|f| f.set(failed));
        }
    }
    result
}

impl Setup {
    /// Runs `f` with `setup` as the one node connections opened on this thread use.
    pub(crate) fn around<T>(setup: &Arc<Setup>, f: impl FnOnce() -> T) -> T {
        /// Puts back what was set before, also when `f` panics.
        struct Restore(Option<Arc<Setup>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let before = self.0.take();
                CURRENT.with(|c| *c.borrow_mut() = before);
            }
        }
        let _restore = Restore(CURRENT.with(|c| c.replace(Some(setup.clone()))));
        f()
    }
}

/// A connection to one cluster node, opened at its first command. The cluster client opens one
/// to every node of its slot map, replicas too, one after another, each with a `PING`: a frozen
/// replica would hold every new cluster connection for a read timeout (dibs never reads from
/// replicas). Opened lazily, a node that dibs never sends a command to costs nothing; the
/// client's `PING` and connection check are answered for a node not opened yet (not for a seed,
/// which the client needs to answer), and the first real command opens it (its connect bounded
/// by the connect timeout, then the command by the read timeout).
pub(crate) struct Node {
    wire: Option<Box<Wire>>,
    host: String,
    port: u16,
    setup: Arc<Setup>,
}

/// `PING`, as the cluster client sends it to a node it has just opened.
const PING: &[u8] = b"*1\r\n$4\r\nPING\r\n";

impl Node {
    /// The node's connection, opened now if it is not yet.
    fn wire(&mut self) -> RedisResult<&mut Wire> {
        if self.wire.is_none() {
            let spec = &self.setup.spec;
            let own = Instant::now() + spec.connect_timeout();
            let deadline = CONNECTING_UNTIL
                .with(|c| c.get())
                .map_or(own, |until| until.min(own));
            let conn = connect_node(
                &self.host,
                self.port,
                self.setup.tls.as_ref(),
                spec,
                deadline,
            )?;
            match handshake(conn, spec, deadline)? {
                Conn::Single(wire) => self.wire = Some(wire),
                _ => {
                    return Err((
                        ErrorKind::Client,
                        "a cluster node's connection is not a single server's",
                    )
                        .into())
                }
            }
        }
        Ok(self.wire.as_mut().expect("opened above"))
    }

    /// `f` on the node's connection: within the cluster connection's deadline while it is being
    /// made, else each command within the read timeout from its send.
    fn run<T>(&mut self, f: impl FnOnce(&mut Wire) -> RedisResult<T>) -> RedisResult<T> {
        let until = CONNECTING_UNTIL.with(|c| c.get());
        let read = self.setup.spec.read_timeout();
        let result = self.wire().and_then(|wire| {
            if let Some(until) = until {
                wire.set_deadline(until);
            }
            let result = f(wire);
            if until.is_some() {
                wire.set_timeouts(read);
            }
            result
        });
        noted(result)
    }
}

impl Connect for Node {
    fn connect<T>(info: T, _timeout: Option<Duration>) -> RedisResult<Self>
    where
        T: IntoConnectionInfo,
    {
        let info = info.into_connection_info()?;
        let (host, port) = match info.addr() {
            ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
                (host.clone(), *port)
            }
            other => {
                return Err((
                    ErrorKind::Client,
                    "a cluster node that is not host:port",
                    other.to_string(),
                )
                    .into())
            }
        };
        let setup = CURRENT.with(|c| c.borrow().clone()).ok_or_else(|| {
            redis::RedisError::from((
                ErrorKind::Client,
                "a cluster node opened outside dibs's call",
            ))
        })?;
        Ok(Node {
            wire: None,
            host,
            port,
            setup,
        })
    }

    fn send_packed_command(&mut self, cmd: &[u8]) -> RedisResult<()> {
        self.run(|wire| wire.send(cmd))
    }

    /// Set at the handshake, from the spec (the cluster's is the same value): each command's
    /// whole reply.
    fn set_read_timeout(&self, _dur: Option<Duration>) -> RedisResult<()> {
        Ok(())
    }

    fn set_write_timeout(&self, _dur: Option<Duration>) -> RedisResult<()> {
        Ok(()) // within each command's bound
    }

    fn recv_response(&mut self) -> RedisResult<Value> {
        self.run(|wire| wire.receive())
    }
}

impl ConnectionLike for Node {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        if self.wire.is_none() && cmd == PING {
            return Ok(Value::SimpleString("PONG".into()));
        }
        self.run(|wire| wire.req_packed_command(cmd))
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.run(|wire| wire.req_packed_commands(cmd, offset, count))
    }

    fn get_db(&self) -> i64 {
        self.setup.spec.db()
    }

    /// A seed is checked for real (the client moves on to the next seed when one fails); a node
    /// of the slot map not opened yet is not opened for it.
    fn check_connection(&mut self) -> bool {
        let ping = |wire: &mut Wire| redis::cmd("PING").query::<String>(wire);
        let Some(left) = self.setup.seeds_from(&self.host, self.port) else {
            return self.wire.is_none() || self.run(ping).is_ok();
        };
        // A seed gets its share of what is left, so that a frozen one leaves the next theirs.
        let until = CONNECTING_UNTIL.with(|c| c.get());
        if let Some(until) = until {
            let now = Instant::now();
            let share = now + until.saturating_duration_since(now) / left as u32;
            CONNECTING_UNTIL.with(|c| c.set(Some(share.min(until))));
        }
        let answered = self.run(ping).is_ok();
        CONNECTING_UNTIL.with(|c| c.set(until));
        answered
    }

    fn is_open(&self) -> bool {
        self.wire.as_ref().is_none_or(|wire| wire.is_open())
    }
}

/// The redis crate's cluster connection over [`Node`]s, and what opening one takes.
pub(crate) struct ClusterConn {
    conn: ClusterConnection<Node>,
    setup: Arc<Setup>,
}

impl ClusterConn {
    /// Connects to the cluster's seeds (and learns its slots) on this thread, by `deadline`.
    pub(crate) fn connect(
        client: &ClusterClient,
        setup: &Arc<Setup>,
        deadline: Instant,
    ) -> RedisResult<ClusterConn> {
        FAILED.with(|f| f.set(None));
        CONNECTING_UNTIL.with(|c| c.set(Some(deadline)));
        let made = Setup::around(setup, || client.get_generic_connection::<Node>());
        CONNECTING_UNTIL.with(|c| c.set(None));
        let conn = made.map_err(|e| match FAILED.with(|f| f.get()) {
            Some(Failed::Timeout) if !e.is_timeout() => {
                std::io::Error::from(std::io::ErrorKind::TimedOut).into()
            }
            Some(Failed::Authentication) => redis::RedisError::from((
                ErrorKind::AuthenticationFailed,
                "a seed refused the client's credentials (NOAUTH or WRONGPASS)",
            )),
            _ => e,
        })?;
        Ok(ClusterConn {
            conn,
            setup: setup.clone(),
        })
    }
}

impl ConnectionLike for ClusterConn {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        let conn = &mut self.conn;
        Setup::around(&self.setup, || conn.req_packed_command(cmd))
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let conn = &mut self.conn;
        Setup::around(&self.setup, || conn.req_packed_commands(cmd, offset, count))
    }

    fn req_command(&mut self, cmd: &redis::Cmd) -> RedisResult<Value> {
        let conn = &mut self.conn;
        Setup::around(&self.setup, || conn.req_command(cmd))
    }

    fn get_db(&self) -> i64 {
        self.conn.get_db()
    }

    fn check_connection(&mut self) -> bool {
        let conn = &mut self.conn;
        Setup::around(&self.setup, || conn.check_connection())
    }

    fn is_open(&self) -> bool {
        self.conn.is_open()
    }
}
