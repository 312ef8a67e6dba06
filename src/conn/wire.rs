//! [`Wire`]: dibs's own connection to one server (plain TCP, a unix socket, or TLS over TCP),
//! whose every command is bounded as a whole.
//!
//! A socket's read timeout bounds each read, not a reply: a server or proxy that trickles a
//! byte at a time would hold one command as long as it likes. Here a command gets a deadline
//! when it is sent, and every write and read after is bounded by what is left of it. The
//! redis crate's parser reads the replies.

use std::io::{self, Read, Write};
use std::net::TcpStream;
#[cfg(unix)]
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use redis::{ConnectionLike, RedisResult, Value};
use rustls::{ClientConnection, StreamOwned};

use crate::resp::read_replies;
use crate::tls::explain_tls;

/// How far a socket's timeout may stand from what is left of a deadline before it is set
/// again. A reply read in one piece right after its send then costs no `setsockopt`; the bound
/// of a command stretches by at most this much.
const SLACK: Duration = Duration::from_millis(1);

/// The stream under a [`Socket`].
pub(crate) enum Stream {
    Tcp(TcpStream),
    #[cfg(unix)]
    Unix(UnixStream),
}

/// A socket whose reads and writes are bounded by what is left of a deadline.
pub(crate) struct Socket {
    stream: Stream,
    deadline: Option<Instant>,
    /// The read and write timeouts the socket has now: set again only when they stand too far
    /// from what is left.
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
}

impl Socket {
    /// `stream`, each read and write bounded by what is left until `deadline`.
    pub(crate) fn new(stream: Stream, deadline: Instant) -> Socket {
        Socket {
            stream,
            deadline: Some(deadline),
            read_timeout: None,
            write_timeout: None,
        }
    }

    /// What is left of the deadline, or a timeout error once nothing is.
    fn left(&self) -> io::Result<Option<Duration>> {
        let Some(deadline) = self.deadline else {
            return Ok(None);
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        Ok(Some(left))
    }

    /// Sets the socket's timeout of `way` to what is left of the deadline, unless it stands
    /// within [`SLACK`] of it already.
    fn bound(&mut self, way: Way) -> io::Result<()> {
        let Some(left) = self.left()? else {
            return Ok(());
        };
        let set = match way {
            Way::Read => &mut self.read_timeout,
            Way::Write => &mut self.write_timeout,
        };
        if !near(*set, left) {
            self.stream.set_timeout(way, left)?;
            *set = Some(left);
        }
        Ok(())
    }
}

/// Which of a socket's timeouts.
#[derive(Clone, Copy)]
enum Way {
    Read,
    Write,
}

impl Stream {
    fn set_timeout(&self, way: Way, timeout: Duration) -> io::Result<()> {
        let timeout = Some(timeout);
        match (self, way) {
            (Stream::Tcp(s), Way::Read) => s.set_read_timeout(timeout),
            (Stream::Tcp(s), Way::Write) => s.set_write_timeout(timeout),
            #[cfg(unix)]
            (Stream::Unix(s), Way::Read) => s.set_read_timeout(timeout),
            #[cfg(unix)]
            (Stream::Unix(s), Way::Write) => s.set_write_timeout(timeout),
        }
    }
}

/// Whether a socket timeout of `set` stands within [`SLACK`] of `left`.
fn near(set: Option<Duration>, left: Duration) -> bool {
    set.is_some_and(|set| set <= left + SLACK && set + SLACK >= left)
}

impl Read for Socket {
    /// A read that a stop signal and `SIGCONT` cut short (`SIGSTOP`, a frozen VM, a debugger:
    /// signal(7) says a read with a timeout then fails with `EINTR`, with no handler) is read
    /// again: the process was stopped, not the server slow, and its reply may be there already.
    /// Past the deadline by then, one last read takes what has come, waiting [`SLACK`] at most.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut interrupted = false;
        loop {
            match self.bound(Way::Read) {
                Err(e) if interrupted && e.kind() == io::ErrorKind::TimedOut => {
                    self.stream.set_timeout(Way::Read, SLACK)?;
                    self.read_timeout = Some(SLACK);
                }
                bounded => bounded?,
            }
            let read = match &mut self.stream {
                Stream::Tcp(s) => s.read(buf),
                #[cfg(unix)]
                Stream::Unix(s) => s.read(buf),
            };
            match read {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => interrupted = true,
                done => return done,
            }
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bound(Way::Write)?;
        match &mut self.stream {
            Stream::Tcp(s) => s.write(buf),
            #[cfg(unix)]
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.stream {
            Stream::Tcp(s) => s.flush(),
            #[cfg(unix)]
            Stream::Unix(s) => s.flush(),
        }
    }
}

/// What a [`Wire`] speaks RESP over.
enum Layer {
    Plain(Socket),
    Tls {
        stream: Box<StreamOwned<ClientConnection, Socket>>,
        /// Whether a client certificate was presented, for the message when it was refused.
        client_cert: bool,
    },
}

impl Layer {
    fn socket(&mut self) -> &mut Socket {
        match self {
            Layer::Plain(s) => s,
            Layer::Tls { stream, .. } => &mut stream.sock,
        }
    }
}

impl Read for Layer {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Layer::Plain(s) => s.read(buf),
            Layer::Tls { stream, .. } => stream.read(buf),
        }
    }
}

impl Write for Layer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Layer::Plain(s) => s.write(buf),
            Layer::Tls { stream, .. } => stream.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Layer::Plain(s) => s.flush(),
            Layer::Tls { stream, .. } => stream.flush(),
        }
    }
}

/// A connection to one server, connected (and over TLS, its handshake done).
pub(crate) struct Wire {
    layer: Layer,
    /// The crate's RESP parser: it keeps what it read past one reply for the next.
    parser: redis::Parser,
    /// Each command's bound from its send; `None` while the connect's deadline holds instead.
    command_timeout: Option<Duration>,
    db: i64,
    open: bool,
}

impl Wire {
    /// A plain connection over `socket`.
    pub(crate) fn plain(socket: Socket, db: i64) -> Wire {
        Wire::over(Layer::Plain(socket), db)
    }

    /// A TLS connection over `stream`, its handshake done.
    pub(crate) fn tls(
        stream: StreamOwned<ClientConnection, Socket>,
        client_cert: bool,
        db: i64,
    ) -> Wire {
        let stream = Box::new(stream);
        Wire::over(
            Layer::Tls {
                stream,
                client_cert,
            },
            db,
        )
    }

    fn over(layer: Layer, db: i64) -> Wire {
        Wire {
            layer,
            parser: redis::Parser::new(),
            command_timeout: None,
            db,
            open: true,
        }
    }

    /// Every read and write bounded by what is left until `deadline` (the connect's AUTH and
    /// SELECT).
    pub(crate) fn set_deadline(&mut self, deadline: Instant) {
        self.command_timeout = None;
        self.layer.socket().deadline = Some(deadline);
    }

    /// From now on, each command with its reply bounded by `timeout` from its send.
    pub(crate) fn set_timeouts(&mut self, timeout: Duration) {
        self.command_timeout = Some(timeout);
    }

    /// Writes `bytes`; a failed write leaves the connection unfit for another command.
    pub(crate) fn send(&mut self, bytes: &[u8]) -> RedisResult<()> {
        if let Some(timeout) = self.command_timeout {
            self.layer.socket().deadline = Some(Instant::now() + timeout);
        }
        let written = self
            .layer
            .write_all(bytes)
            .and_then(|()| self.layer.flush());
        written.map_err(|e| {
            self.open = false;
            e.into()
        })
    }

    /// One reply; a server error reply becomes an error, as the crate's connections make it.
    pub(crate) fn receive(&mut self) -> RedisResult<Value> {
        self.receive_value()?.extract_error()
    }

    /// One reply as it came: a server error reply is a [`Value::ServerError`].
    fn receive_value(&mut self) -> RedisResult<Value> {
        self.parser.parse_value(&mut self.layer).map_err(|e| {
            // A reply cut short or never read: what follows on this stream is unknown.
            self.open = false;
            match &mut self.layer {
                // Under TLS 1.3 the server checks the client's certificate after the client's
                // side of the handshake is done: its alert comes with the first reply.
                Layer::Tls {
                    stream,
                    client_cert,
                } => match stream.conn.process_new_packets() {
                    Err(tls) => explain_tls(tls, *client_cert),
                    Ok(_) => e,
                },
                Layer::Plain(_) => e,
            }
        })
    }
}

impl ConnectionLike for Wire {
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
        read_replies(offset, count, || self.receive_value())
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
