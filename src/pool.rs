//! A small pool of synchronous connections per [`ConnSpec`].
//!
//! Why synchronous connections and not one multiplexed connection: a lock cycle is two strictly
//! sequential round trips made from a caller's own thread, so a blocking socket per in-flight
//! call has no scheduling hop and no runtime to start inside the JVM. `examples/pool_vs_multiplexed.rs`
//! measures both; the README carries the figures.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use redis::{Client, Connection, ConnectionAddr, ConnectionInfo, RedisConnectionInfo, RedisResult};

use crate::error::{redact, Error, Result};
use crate::spec::{Address, ConnSpec};

pub(crate) struct Pool {
    spec: ConnSpec,
    client: Client,
    state: Mutex<State>,
    returned: Condvar,
}

struct State {
    idle: Vec<Connection>,
    /// Connections that exist: idle plus checked out.
    open: usize,
    /// Callers blocked in `checkout`; a return wakes one only when there is one (no futex
    /// call on the common path).
    waiting: usize,
}

impl Pool {
    /// Builds the client; no network I/O happens until the first call.
    pub(crate) fn new(spec: ConnSpec) -> Result<Pool> {
        let addr = match &spec.address {
            Address::Tcp { host, port } if spec.tls => ConnectionAddr::TcpTls {
                host: host.clone(),
                port: *port,
                insecure: false,
                tls_params: None,
            },
            Address::Tcp { host, port } => ConnectionAddr::Tcp(host.clone(), *port),
            Address::Unix(path) => ConnectionAddr::Unix(path.clone()),
        };
        // No handshake commands from the redis crate: it pipelines AUTH, CLIENT SETINFO and SELECT
        // and waits out the read timeout once per reply, so a frozen server would hold a new
        // connection for several timeouts. `open_connection` sends AUTH and SELECT itself.
        let redis_info = RedisConnectionInfo::default().set_skip_set_lib_name();
        // Building a client does no I/O, so its errors are about the spec itself.
        let bad_spec = |arg: &'static str, e: redis::RedisError| {
            let why = redact(&e.to_string(), spec.password.as_deref());
            Error::invalid(
                arg,
                format!("{arg} for {} rejected: {why}", spec.endpoint()),
            )
        };
        let info: ConnectionInfo = redis::IntoConnectionInfo::into_connection_info(addr)
            .map_err(|e| bad_spec("conn", e))?
            .set_redis_settings(redis_info)
            // The redis crate leaves Nagle on, which can double the latency of a small request.
            .set_tcp_settings(redis::io::tcp::TcpSettings::default().set_nodelay(true));
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
        Ok(Pool {
            spec,
            client,
            state: Mutex::new(State {
                idle: Vec::new(),
                open: 0,
                waiting: 0,
            }),
            returned: Condvar::new(),
        })
    }

    pub(crate) fn spec(&self) -> &ConnSpec {
        &self.spec
    }

    /// Runs `op` on a pooled connection. `what` names the operation in error messages.
    ///
    /// A connection that broke is dropped, never returned. If a *reused* connection turns out
    /// dead (the server restarted, or CLIENT KILL), the idle ones are presumed dead too: they are
    /// dropped and `retry` runs once on a fresh connection, so the call after a restart succeeds.
    /// `retry` must cope with `op` having reached the server before the connection died.
    pub(crate) fn run<T>(
        &self,
        what: &str,
        op: impl FnOnce(&mut Connection) -> RedisResult<T>,
        retry: impl FnOnce(&mut Connection) -> RedisResult<T>,
    ) -> Result<T> {
        let (mut conn, reused) = self.checkout(what)?;
        match op(&mut conn) {
            Ok(v) => {
                self.checkin(conn, true);
                Ok(v)
            }
            Err(e) if reused && e.is_connection_dropped() && !e.is_timeout() => {
                self.checkin(conn, false);
                self.drop_idle();
                let mut fresh = self.connect(what)?;
                let result = retry(&mut fresh);
                self.checkin(fresh, result.is_ok() || !e.is_unrecoverable_error());
                result.map_err(|e| self.error(&e, what, self.spec.read_timeout))
            }
            Err(e) => {
                self.checkin(conn, !e.is_unrecoverable_error() && !e.is_timeout());
                Err(self.error(&e, what, self.spec.read_timeout))
            }
        }
    }

    fn checkout(&self, what: &str) -> Result<(Connection, bool)> {
        let deadline = Instant::now() + self.spec.connect_timeout;
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(conn) = state.idle.pop() {
                return Ok((conn, true));
            }
            if state.open < self.spec.max_total {
                state.open += 1;
                drop(state);
                return match self.open_connection(what) {
                    Ok(conn) => Ok((conn, false)),
                    Err(e) => {
                        self.forget_one();
                        Err(e)
                    }
                };
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Timeout(format!(
                    "{}: all {} pooled connections stayed busy for {} ms ({what})",
                    self.spec.endpoint(),
                    self.spec.max_total,
                    self.spec.connect_timeout.as_millis()
                )));
            }
            state.waiting += 1;
            state = self
                .returned
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            state.waiting -= 1;
        }
    }

    /// A new connection, counted as checked out.
    fn connect(&self, what: &str) -> Result<Connection> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.open += 1;
        drop(state);
        self.open_connection(what)
            .inspect_err(|_| self.forget_one())
    }

    /// Connects, authenticates and selects the db, all within the connect timeout.
    fn open_connection(&self, what: &str) -> Result<Connection> {
        let limit = self.spec.connect_timeout;
        let deadline = Instant::now() + limit;
        let fail = |e: redis::RedisError| self.error(&e, what, limit);
        let mut conn = self
            .client
            .get_connection_with_timeout(limit)
            .map_err(fail)?;
        let mut handshake = Vec::new();
        if let Some(password) = &self.spec.password {
            let mut auth = redis::cmd("AUTH");
            if let Some(user) = &self.spec.username {
                auth.arg(user);
            }
            handshake.push(auth.arg(password).to_owned());
        }
        if self.spec.db != 0 {
            handshake.push(redis::cmd("SELECT").arg(self.spec.db).to_owned());
        }
        // One command at a time, each bounded by what is left of the connect timeout.
        for command in handshake {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.error(&timed_out(), what, limit));
            }
            conn.set_read_timeout(Some(left))
                .and_then(|_| conn.set_write_timeout(Some(left)))
                .and_then(|_| command.query::<()>(&mut conn))
                .map_err(fail)?;
        }
        let timeout = Some(self.spec.read_timeout);
        conn.set_read_timeout(timeout)
            .and_then(|_| conn.set_write_timeout(timeout))
            .map_err(fail)?;
        Ok(conn)
    }

    fn checkin(&self, conn: Connection, healthy: bool) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if healthy && state.idle.len() < self.spec.max_idle {
            state.idle.push(conn);
        } else {
            state.open -= 1;
        }
        self.wake_one(state);
    }

    fn forget_one(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.open -= 1;
        self.wake_one(state);
    }

    fn wake_one(&self, state: std::sync::MutexGuard<'_, State>) {
        let someone_waits = state.waiting > 0;
        drop(state);
        if someone_waits {
            self.returned.notify_one();
        }
    }

    fn drop_idle(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let dropped = std::mem::take(&mut state.idle);
        state.open -= dropped.len();
    }

    /// Classifies `err`. A timeout says which limit ran out, rather than the OS's "Resource
    /// temporarily unavailable".
    fn error(&self, err: &redis::RedisError, what: &str, limit: Duration) -> Error {
        let context = format!("{} ({what})", self.spec.endpoint());
        if err.is_timeout() {
            return Error::Timeout(format!(
                "{context}: no answer within {} ms",
                limit.as_millis()
            ));
        }
        Error::from_redis(err, &context, self.spec.password.as_deref())
    }
}

fn timed_out() -> redis::RedisError {
    std::io::Error::from(std::io::ErrorKind::TimedOut).into()
}
