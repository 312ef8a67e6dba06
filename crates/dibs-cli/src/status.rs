//! `dibs status`: whether a lock is held, by whom, and for how long more.

use std::time::Duration;

use dibs::Error;

use crate::cli::StatusArgs;
use crate::connect::locker;
use crate::output::{human, say, unix_ms};

pub fn status(args: StatusArgs) -> Result<u8, Error> {
    let StatusArgs { conn, lock } = args;
    match locker(&conn, false)?.inspect(&lock)? {
        None => say!("lock '{lock}' is free"),
        Some(state) => {
            let who = match &state.holder {
                Some(h) => format!(
                    "held by {} pid {}, acquired {} ago",
                    h.host,
                    h.pid,
                    human(Duration::from_millis(
                        unix_ms().saturating_sub(h.acquired_at_unix_ms)
                    ))
                ),
                None => "held (by a value dibs did not write)".to_owned(),
            };
            let ttl = state.remaining_ms.map_or("never expires".to_owned(), |ms| {
                format!("expires in {}", human(Duration::from_millis(ms)))
            });
            say!("lock '{lock}' is {who}; {ttl}");
        }
    }
    Ok(0)
}
