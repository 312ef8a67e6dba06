//! Opening connections, for every kind of address, and the connection type the pool holds.
//!
//! - A single server, plain, over a unix socket or over TLS: dibs's own connection ([`Wire`]),
//!   so that each address of a name gets its share of the connect timeout, and each command
//!   with its reply is bounded as a whole by the read timeout.
//! - Sentinel: the master's address is asked of the Sentinels (`SENTINEL
//!   get-master-addr-by-name`) for every new connection, so connections made after a failover
//!   reach the new master. A pooled connection to a demoted master fails with READONLY, and the
//!   pool replaces it.
//! - Cluster: the redis crate's cluster connection, which follows MOVED and ASK redirections,
//!   over node connections of dibs's own (`cluster_node`), so that its commands are bounded as
//!   a whole too.
//!
//! Every connect is bounded by the connect timeout, handshake included. The parts:
//!
//! - `wire`: [`Wire`], the connection to one server, every command bounded from its send.
//!
//! - `open`: [`Opener`], which knows how to open a connection for one spec, and the handshake
//!   (AUTH, SELECT) every new connection goes through; the cluster client is built there.
//! - `sentinel`: asking the Sentinels where the master is.
//! - `connect`: a connection to one `host:port` by a deadline, plain or TLS: the name resolved,
//!   each address its share of the time, the TCP settings.

mod cluster_node;
mod connect;
mod open;
mod sentinel;
mod wire;

pub(crate) use open::Opener;
pub(crate) use wire::Socket;

use std::time::{Duration, Instant};

use redis::{Cmd, ConnectionLike, ErrorKind, RedisResult, Value};

use cluster_node::ClusterConn;
use connect::left;
use wire::Wire;

/// A pooled connection.
pub(crate) enum Conn {
    /// One server (plain, unix or TLS), opened by dibs itself.
    Single(Box<Wire>),
    /// The redis crate's cluster connection, routing each command, over dibs's own connections
    /// to the nodes (`cluster_node`): each command bounded as a whole too.
    Cluster(Box<ClusterConn>),
    /// A one-off connection (plain or TLS) to the target of an `ASK`: every command goes after
    /// an `ASKING`, which admits only the one command that follows it.
    Asking(Box<Conn>),
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
            Conn::Single(_) => true,
            Conn::Asking(c) => c.keeps_each_reply(),
            Conn::Cluster(_) => false,
        }
    }

    /// Bounds the next commands, together, by `deadline` (the connect's AUTH and SELECT).
    fn set_deadline(&mut self, deadline: Instant) -> RedisResult<()> {
        left(deadline)?;
        match self {
            Conn::Single(c) => c.set_deadline(deadline),
            Conn::Asking(c) => c.set_deadline(deadline)?,
            Conn::Cluster(_) => {} // its connect bounds itself (see `Opener::open`)
        }
        Ok(())
    }

    /// Each command to come, with its reply, bounded by `timeout` from its send.
    fn set_timeouts(&mut self, timeout: Duration) {
        match self {
            Conn::Single(c) => c.set_timeouts(timeout),
            Conn::Asking(c) => c.set_timeouts(timeout),
            Conn::Cluster(_) => {} // its node connections have theirs from their handshake
        }
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
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
            Conn::Single(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(cmd, offset, count),
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
            Conn::Asking(_) => self.req_packed_command(&cmd.get_packed_command()),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Asking(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }

    fn check_connection(&mut self) -> bool {
        match self {
            Conn::Single(c) => c.check_connection(),
            Conn::Asking(c) => c.check_connection(),
            Conn::Cluster(c) => c.check_connection(),
        }
    }

    fn is_open(&self) -> bool {
        match self {
            Conn::Single(c) => c.is_open(),
            Conn::Asking(c) => c.is_open(),
            Conn::Cluster(c) => c.is_open(),
        }
    }
}
