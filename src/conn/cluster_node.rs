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

thread_local! {
    static CURRENT: RefCell<Option<Arc<Setup>>> = const { RefCell::new(None) };
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

/// A connection to one cluster node.
pub(crate) struct Node(Box<Wire>);

impl Connect for Node {
    fn connect<T>(info: T, timeout: Option<Duration>) -> RedisResult<Self>
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
        let spec = &setup.spec;
        let deadline = Instant::now() + timeout.unwrap_or(spec.connect_timeout());
        let conn = connect_node(&host, port, setup.tls.as_ref(), spec, deadline)?;
        match handshake(conn, spec, deadline)? {
            Conn::Single(wire) => Ok(Node(wire)),
            _ => Err((
                ErrorKind::Client,
                "a cluster node's connection is not a single server's",
            )
                .into()),
        }
    }

    fn send_packed_command(&mut self, cmd: &[u8]) -> RedisResult<()> {
        self.0.send(cmd)
    }

    /// The cluster connection sets the read timeout: each command's whole reply then.
    fn set_read_timeout(&self, _dur: Option<Duration>) -> RedisResult<()> {
        Ok(()) // set at the handshake, from the spec; the cluster's is the same value
    }

    fn set_write_timeout(&self, _dur: Option<Duration>) -> RedisResult<()> {
        Ok(()) // within each command's bound
    }

    fn recv_response(&mut self) -> RedisResult<Value> {
        self.0.receive()
    }
}

impl ConnectionLike for Node {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.0.req_packed_command(cmd)
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.0.req_packed_commands(cmd, offset, count)
    }

    fn get_db(&self) -> i64 {
        self.0.get_db()
    }

    fn check_connection(&mut self) -> bool {
        self.0.check_connection()
    }

    fn is_open(&self) -> bool {
        self.0.is_open()
    }
}

/// The redis crate's cluster connection over [`Node`]s, and what opening one takes.
pub(crate) struct ClusterConn {
    conn: ClusterConnection<Node>,
    setup: Arc<Setup>,
}

impl ClusterConn {
    /// Connects to the cluster's seeds (and learns its slots) on this thread.
    pub(crate) fn connect(client: &ClusterClient, setup: &Arc<Setup>) -> RedisResult<ClusterConn> {
        let conn = Setup::around(setup, || client.get_generic_connection::<Node>())?;
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
