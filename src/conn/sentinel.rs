//! Where the master is: asked of the Sentinels, in turn, each with its share of the connect
//! timeout, and their refusals said as theirs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use redis::{ErrorKind, RedisError, RedisResult};

use super::connect::{connect_node, left};
use crate::connspec::{host_port, ServerSpec};
use crate::error::first_line;
use crate::tls::TlsConfig;

/// Asks each Sentinel in turn where the master is; the first that knows, wins. The one that
/// answered last is asked first, and each gets an equal share of what is left of the budget, so
/// that one blackholed Sentinel cannot use up the time of the others. Each is reached over TLS
/// when `tls` is set, and authenticated with the spec's Sentinel credentials when it has some.
pub(super) fn master_address(
    sentinels: &[(String, u16)],
    master: &str,
    last_good: &AtomicUsize,
    tls: Option<&TlsConfig>,
    spec: &ServerSpec,
    deadline: Instant,
) -> RedisResult<(String, u16)> {
    let first = last_good.load(Ordering::Relaxed) % sentinels.len().max(1);
    let mut last_error = None;
    for i in 0..sentinels.len() {
        let index = (first + i) % sentinels.len();
        let (host, port) = &sentinels[index];
        let share = left(deadline)? / (sentinels.len() - i) as u32;
        let asked = (|| -> RedisResult<Option<(String, u16)>> {
            let until = Instant::now() + share;
            let mut conn = connect_node(host, *port, tls, spec, until)?;
            if let Some(auth) = spec.sentinel_auth() {
                conn.set_deadline(until)?;
                let mut command = redis::cmd("AUTH");
                if let Some(user) = &auth.username {
                    command.arg(user);
                }
                command.arg(&auth.password).query::<()>(&mut conn)?;
            }
            conn.set_deadline(until)?;
            let reply: Option<(String, String)> = redis::cmd("SENTINEL")
                .arg("get-master-addr-by-name")
                .arg(master)
                .query(&mut conn)?;
            Ok(reply.and_then(|(h, p)| Some((h, p.parse().ok()?))))
        })();
        let error = match asked {
            Ok(Some(address)) => {
                last_good.store(index, Ordering::Relaxed);
                return Ok(address);
            }
            Ok(None) => RedisError::from((
                ErrorKind::MasterNameNotFoundBySentinel,
                "no Sentinel knows this master",
                format!("{master} (asked {})", host_port(host, *port)),
            )),
            Err(e) => sentinel_refusal(e, host, *port, spec.sentinel_auth().is_some()),
        };
        // A refused credential says more than a Sentinel that was down: it is kept over one.
        if !last_error.as_ref().is_some_and(is_refusal) || is_refusal(&error) {
            last_error = Some(error);
        }
    }
    Err(last_error.unwrap_or_else(|| (ErrorKind::EmptySentinelList, "no Sentinels given").into()))
}

/// Whether a Sentinel refused us (credentials or permissions), not merely failed to answer.
fn is_refusal(e: &RedisError) -> bool {
    e.kind() == ErrorKind::AuthenticationFailed || matches!(e.code(), Some("NOPERM"))
}

/// A Sentinel's AUTH refusal, said as the Sentinel's, not the master's: its own address, and
/// which setting to look at.
fn sentinel_refusal(e: RedisError, host: &str, port: u16, authenticated: bool) -> RedisError {
    let code = e.code().map(str::to_owned);
    match code.as_deref() {
        Some("WRONGPASS") | Some("NOAUTH") => RedisError::from((
            ErrorKind::AuthenticationFailed,
            "a Sentinel refused dibs",
            if authenticated {
                format!(
                    "Sentinel {} refused the Sentinel credentials ('sentinel-username', 'sentinel-password'): {}",
                    host_port(host, port),
                    first_line(&e)
                )
            } else {
                format!(
                    "Sentinel {} requires AUTH of its own: give 'sentinel-password' (and 'sentinel-username' for an ACL user): {}",
                    host_port(host, port),
                    first_line(&e)
                )
            },
        )),
        _ => e,
    }
}
