//! The value stored under a lock key: `token;host;pid;acquired-at-unix-ms`. The token is a fresh
//! UUID v4 for every acquisition, so the release check (which compares the whole value) can only
//! match our own acquisition; the rest tells an operator who holds the lock, with one read.

use std::fmt::Write;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Who holds a lock, as its key's value says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub host: String,
    pub pid: u32,
    pub acquired_at_unix_ms: u64,
}

/// A held lock, as [`crate::Locker::inspect`] found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockState {
    /// Time to live left; `None` when the key has no expiry (not set by dibs).
    pub remaining_ms: Option<u64>,
    /// `None` when the value is not in dibs's format (someone else set the key).
    pub holder: Option<Holder>,
}

/// The most of a lock's value dibs reads: a value dibs writes is at most 324 bytes (a host name
/// is cut to 255), so one longer is someone else's, and is never loaded whole (`GETRANGE`).
pub(crate) const MAX_VALUE_BYTES: usize = 512;

/// The longest host name a value carries, in bytes.
const MAX_HOST_BYTES: usize = 255;

/// A value read with `GETRANGE key 0 MAX_VALUE_BYTES`, and the key's `PTTL`: `None` when there is
/// no key (an empty value and -2), an empty value when it was longer than dibs ever writes (not
/// in dibs's format, as `Holder::parse` then says).
pub(crate) fn bounded(value: Vec<u8>, pttl: i64) -> Option<Vec<u8>> {
    match value.len() {
        0 if pttl == -2 => None,
        n if n > MAX_VALUE_BYTES => Some(Vec::new()),
        _ => Some(value),
    }
}

/// This host's clock, in Unix ms.
pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A new holder value for this process, with a fresh token.
pub(crate) fn new_value() -> String {
    let unix_ms = unix_ms();
    let host = host_name();
    // Sized for the whole value (36 for the token, at most 10 for the pid and 20 for the time, 3
    // separators); format! would start empty and grow it four or five times.
    let mut value = String::with_capacity(69 + host.len());
    let _ = write!(
        value,
        "{};{};{};{unix_ms}",
        uuid::Uuid::new_v4(),
        host,
        std::process::id()
    );
    value
}

/// Whether a token is spent: its lock was released and kept for the rest of atLeast (or as a
/// tick's done-mark), with the token's version digit set to 0 by the release script
/// (`script::RELEASE`): no run holds it now.
pub(crate) fn is_spent(token: &str) -> bool {
    token.as_bytes().get(14) == Some(&b'0')
}

impl Holder {
    /// Reads a holder value; the token is not kept, since it is what guards the release.
    pub(crate) fn parse(value: &[u8]) -> Option<Holder> {
        Holder::parse_with_token(value).map(|(holder, _)| holder)
    }

    /// Reads a holder value, and its token: `None` for any value dibs did not write, whatever
    /// its bytes (another encoding, another length, a token of another form).
    pub(crate) fn parse_with_token(value: &[u8]) -> Option<(Holder, &str)> {
        let value = std::str::from_utf8(value).ok()?;
        let mut fields = value.split(';');
        let (token, host, pid, at) = (
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
        );
        // The hyphenated form only, as dibs writes it: 36 ASCII characters, a prefix of the
        // value that forced releases compare.
        if fields.next().is_some() || token.len() != 36 || uuid::Uuid::try_parse(token).is_err() {
            return None;
        }
        let holder = Holder {
            host: host.to_owned(),
            pid: pid.parse().ok()?,
            acquired_at_unix_ms: at.parse().ok()?,
        };
        Some((holder, token))
    }
}

fn host_name() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        let raw = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .or_else(|| std::env::var("COMPUTERNAME").ok())
            .unwrap_or_else(|| "unknown".to_owned());
        // ';' separates the fields of the value.
        let mut host: String = raw
            .trim()
            .chars()
            .map(|c| {
                if c == ';' || c.is_whitespace() || c.is_control() {
                    '_'
                } else {
                    c
                }
            })
            .collect();
        while host.len() > MAX_HOST_BYTES {
            host.pop();
        }
        host
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_unique_and_parse_back() {
        let a = new_value();
        assert_ne!(a, new_value());
        let holder = Holder::parse(a.as_bytes()).expect("parses");
        assert_eq!(holder.pid, std::process::id());
        assert_eq!(holder.host, host_name());
        assert!(holder.acquired_at_unix_ms > 1_700_000_000_000);
    }

    #[test]
    fn foreign_values_are_not_holders() {
        for value in [
            "",
            "x",
            "a;b;c;d",
            "not-a-uuid;h;1;2",
            "9b2f1f7e-3c1a-4a55-9f43-0d1f0e9b7a10;h;x;2",
            // A token of another form that a UUID parser takes (32 hex digits, braces), before
            // a character of two bytes: once cut at byte 36 and panicked.
            "0123456789abcdef0123456789abcdef;hhé;1;2",
            "{9b2f1f7e-3c1a-4a55-9f43-0d1f0e9b7a10};h;1;2",
        ] {
            assert_eq!(Holder::parse(value.as_bytes()), None, "{value}");
        }
        assert_eq!(Holder::parse(b"\xff\xfe;h;1;2"), None, "not UTF-8");
    }
}
