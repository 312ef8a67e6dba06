//! TLS connections that dibs opens itself, to one address at a time.
//!
//! The redis crate's TLS connect takes a host name, resolves it itself with no timeout, and tries
//! its addresses in order within one timeout, so a blackholed first address leaves none for the
//! others. Here the name is resolved and each address given its share by the caller (see
//! `conn::connect_tls`), while the certificate is still checked against the name as given. The
//! TLS handshake is done at connect, within that address's share, so that an address that
//! accepts TCP but never speaks TLS leaves the next one the rest. The connection then speaks
//! RESP through the redis crate's own parser.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::{ConnectionLike, ErrorKind, RedisError, RedisResult, Value};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use crate::error::{Error, Result};

/// What every TLS connection of one server shares: the trusted roots and the name to verify.
pub(crate) struct TlsClient {
    /// Configuration only (rustls keeps a session cache behind it), so a panic elsewhere cannot
    /// leave it half-changed: this keeps `Locker` unwind-safe, as for the cluster client.
    config: AssertUnwindSafe<Arc<ClientConfig>>,
    name: ServerName<'static>,
}

impl TlsClient {
    /// Trusts the CAs of the PEM file `ca_cert`, or else the platform's trust store. Reads files,
    /// never the network.
    pub(crate) fn new(host: &str, ca_cert: Option<&Path>) -> Result<TlsClient> {
        let mut roots = RootCertStore::empty();
        match ca_cert {
            Some(path) => {
                let pem = std::fs::read(path).map_err(|e| {
                    Error::invalid(
                        "ca-cert",
                        format!("cannot read 'ca-cert' {}: {e}", path.display()),
                    )
                })?;
                let no_certificate = || {
                    Error::invalid(
                        "ca-cert",
                        format!("'ca-cert' {} holds no PEM certificate", path.display()),
                    )
                };
                for cert in CertificateDer::pem_slice_iter(&pem) {
                    roots
                        .add(cert.map_err(|_| no_certificate())?)
                        .map_err(|e| {
                            Error::invalid(
                                "ca-cert",
                                format!("'ca-cert' {} was refused: {e}", path.display()),
                            )
                        })?;
                }
                // An empty trust store would only fail later, at connect, with a vaguer message.
                if roots.is_empty() {
                    return Err(no_certificate());
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                for cert in found.certs {
                    let _ = roots.add(cert); // one unreadable system root is not worth failing for
                }
                if roots.is_empty() {
                    return Err(Error::invalid(
                        "ssl",
                        "the platform's trust store holds no usable certificate: name a CA with 'ca-cert'",
                    ));
                }
            }
        }
        let name = ServerName::try_from(host.to_owned()).map_err(|e| {
            Error::invalid("conn", format!("'{host}' is no name TLS can verify: {e}"))
        })?;
        let config = ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(TlsClient {
            config: AssertUnwindSafe(Arc::new(config)),
            name,
        })
    }
}

/// The TCP socket under TLS. While connecting, every read and write is bounded by what is left
/// of a deadline, not by a timeout set once: a server that trickles a byte at a time would
/// otherwise stretch the handshake as long as it likes. After, the command timeouts apply.
struct Socket {
    tcp: TcpStream,
    deadline: Option<Instant>,
}

impl Socket {
    fn bound(&self, set: fn(&TcpStream, Option<Duration>) -> io::Result<()>) -> io::Result<()> {
        let Some(deadline) = self.deadline else {
            return Ok(());
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        set(&self.tcp, Some(left))
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.bound(TcpStream::set_read_timeout)?;
        self.tcp.read(buf)
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bound(TcpStream::set_write_timeout)?;
        self.tcp.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.tcp.flush()
    }
}

/// A TLS connection to one address, its handshake done.
pub(crate) struct TlsConn {
    stream: StreamOwned<ClientConnection, Socket>,
    /// The crate's RESP parser: it keeps what it read past one reply for the next.
    parser: redis::Parser,
    db: i64,
    open: bool,
}

impl TlsConn {
    /// A TCP connection to `addr`, set up as `tcp` says, and a TLS handshake on it for the
    /// client's name, all by `deadline`.
    pub(crate) fn connect(
        client: &TlsClient,
        addr: &SocketAddr,
        deadline: Instant,
        tcp: impl FnOnce(&TcpStream) -> io::Result<()>,
        db: i64,
    ) -> RedisResult<TlsConn> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::from(io::ErrorKind::TimedOut).into());
        }
        let socket = TcpStream::connect_timeout(addr, left)?;
        tcp(&socket)?;
        let tls = ClientConnection::new(Arc::clone(&client.config), client.name.clone())
            .map_err(|e| RedisError::from((ErrorKind::Io, "TLS setup failed", e.to_string())))?;
        let socket = Socket {
            tcp: socket,
            deadline: Some(deadline),
        };
        let mut stream = StreamOwned::new(tls, socket);
        // complete_io returns early on a read that timed out after some progress: go on until
        // the handshake is done or the deadline says no.
        while stream.conn.is_handshaking() {
            stream.conn.complete_io(&mut stream.sock)?;
        }
        Ok(TlsConn {
            stream,
            parser: redis::Parser::new(),
            db,
            open: true,
        })
    }

    /// Every read and write bounded by what is left until `deadline` (for the connect's AUTH and
    /// SELECT).
    pub(crate) fn set_deadline(&mut self, deadline: Instant) {
        self.stream.sock.deadline = Some(deadline);
    }

    /// Read and write timeouts of the socket under TLS, for the commands to come.
    pub(crate) fn set_timeouts(&mut self, timeout: Duration) -> RedisResult<()> {
        self.stream.sock.deadline = None;
        self.stream.sock.tcp.set_read_timeout(Some(timeout))?;
        self.stream.sock.tcp.set_write_timeout(Some(timeout))?;
        Ok(())
    }

    /// Writes `bytes`; a failed write leaves the connection unfit for another command.
    pub(crate) fn send(&mut self, bytes: &[u8]) -> RedisResult<()> {
        let written = self
            .stream
            .write_all(bytes)
            .and_then(|()| self.stream.flush());
        written.map_err(|e| {
            self.open = false;
            e.into()
        })
    }

    /// One reply; a server error reply becomes an error, as the crate's connections make it.
    fn receive(&mut self) -> RedisResult<Value> {
        match self.parser.parse_value(&mut self.stream) {
            Ok(value) => value.extract_error(),
            Err(e) => {
                // A reply cut short or never read: what follows on this stream is unknown.
                self.open = false;
                Err(e)
            }
        }
    }
}

impl ConnectionLike for TlsConn {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.send(cmd)?;
        self.receive()
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.send(cmd)?;
        let mut replies = Vec::with_capacity(count);
        let mut first_error = None;
        for i in 0..offset + count {
            // Every reply is read, so that none is left for the next command; the first error
            // is returned after.
            match self.receive() {
                Ok(value) if i >= offset => replies.push(value),
                Ok(_) => {}
                Err(e) if !self.open => return Err(e),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(replies),
        }
    }

    fn get_db(&self) -> i64 {
        self.db
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    fn is_open(&self) -> bool {
        self.open
    }
}
