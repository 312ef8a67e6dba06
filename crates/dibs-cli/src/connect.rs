//! The connection every command opens: the same conn specs as the library's.

use dibs::{ConnSpec, Error, Locker, SpecValue};

use crate::cli::Conn;

/// A locker on the `--redis` URI (or `DIBS_REDIS`), plus the `--redis-opt` keys as in the
/// library's maps, and `keep-alive` if asked.
pub fn locker(conn: &Conn, keep_alive: bool) -> Result<Locker, Error> {
    let mut entries = vec![("uri".to_owned(), SpecValue::Str(conn.redis.clone()))];
    entries.extend(
        conn.options
            .iter()
            .map(|(k, v)| (k.clone(), SpecValue::Str(v.clone()))),
    );
    if keep_alive {
        entries.push(("keep-alive".to_owned(), SpecValue::Bool(true)));
    }
    Locker::new(ConnSpec::from_map(&entries)?)
}
