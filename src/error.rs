//! The one error type of dibs. Each variant is a kind a caller can act on; the JNI layer maps
//! each to one Java exception class, so nobody has to grep messages.

use std::fmt;

/// What went wrong. Messages name the argument, or the server address and the lock name;
/// they never contain a password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A bad argument or connection spec, found before any network I/O.
    InvalidArgument { arg: &'static str, message: String },
    /// The server could not be reached, or the connection broke.
    Connection(String),
    /// A connect, read or write did not finish within its timeout.
    Timeout(String),
    /// The server rejected our credentials (WRONGPASS, NOAUTH, ...).
    Authentication(String),
    /// The user may not run a command or touch a key (NOPERM).
    Permission(String),
    /// Any other error reply from the server.
    Server(String),
    /// This instance's clock runs ahead of the server's by more than catch-up allows
    /// (`CLOCK_SKEW`): which ticks ran cannot be proven from the history.
    ClockAhead(String),
}

impl Error {
    pub(crate) fn invalid(arg: &'static str, message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            arg,
            message: message.into(),
        }
    }

    /// The message alone, without the kind.
    pub fn message(&self) -> &str {
        match self {
            Error::InvalidArgument { message, .. }
            | Error::Connection(message)
            | Error::Timeout(message)
            | Error::Authentication(message)
            | Error::Permission(message)
            | Error::Server(message)
            | Error::ClockAhead(message) => message,
        }
    }

    /// Classifies a redis-crate error that happened at `context`, e.g.
    /// "127.0.0.1:6379 (acquiring lock 'nightly')". The secrets are removed from the text. A timeout
    /// says which limit ran out, rather than the OS's "Resource temporarily unavailable".
    pub(crate) fn from_redis(
        err: &redis::RedisError,
        context: &str,
        secrets: &[Option<&str>],
        limit: Limit,
    ) -> Self {
        use redis::{ErrorKind, ServerErrorKind};
        if err.is_timeout() {
            return Error::Timeout(match limit {
                Limit::Read(t) => format!(
                    "{context}: no answer within {} ms (read-timeout-ms)",
                    t.as_millis()
                ),
                Limit::Connect(t) => format!(
                    "{context}: no answer within {} ms, connecting (conn-timeout-ms)",
                    t.as_millis()
                ),
            });
        }
        let text = redact(&format!("{context}: {err}"), secrets);
        let code = err.code().unwrap_or("");
        if err.kind() == ErrorKind::AuthenticationFailed || matches!(code, "WRONGPASS" | "NOAUTH") {
            Error::Authentication(text)
        } else if err.kind() == ErrorKind::Server(ServerErrorKind::NoPerm) || code == "NOPERM" {
            Error::Permission(text)
        } else if err.is_io_error() || err.is_connection_dropped() || err.is_connection_refusal() {
            Error::Connection(text)
        } else {
            Error::Server(text)
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// The first line of a redis-crate error, for a message of dibs's own.
pub(crate) fn first_line(e: &redis::RedisError) -> String {
    e.to_string().lines().next().unwrap_or_default().to_owned()
}

/// Replaces every occurrence of each secret with `***`, the longest first: one secret may hold
/// another, which replaced first would leave the rest of the longer one in place.
pub(crate) fn redact(text: &str, secrets: &[Option<&str>]) -> String {
    let mut secrets: Vec<&str> = secrets
        .iter()
        .flatten()
        .copied()
        .filter(|s| !s.is_empty())
        .collect();
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut text = text.to_owned();
    for secret in secrets {
        text = text.replace(secret, "***");
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_longest_secret_goes_first() {
        let text = "AUTH hunter2-sentinel failed; AUTH hunter2 failed";
        let redacted = super::redact(
            text,
            &[Some("hunter2"), None, Some("hunter2-sentinel"), Some("")],
        );
        assert_eq!(redacted, "AUTH *** failed; AUTH *** failed");
    }
}

/// The limit a timed-out wait ran into, for its message: which setting to look at.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Limit {
    /// A command's reply, from its send (`read-timeout-ms`).
    Read(std::time::Duration),
    /// A new connection, its handshake included (`conn-timeout-ms`).
    Connect(std::time::Duration),
}
