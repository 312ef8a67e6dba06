//! `dibs release`: deletes a held lock, after asking (or given its token), recorded as forced.

use dibs::{Error, ForcedRelease};

use crate::cli::ReleaseArgs;
use crate::connect::locker;
use crate::output::{age, holder, say, tell, ttl};

pub fn release(args: ReleaseArgs) -> Result<u8, Error> {
    let ReleaseArgs {
        conn,
        lock,
        token,
        yes,
    } = args;
    let locker = locker(&conn, false)?;
    let by = operator();
    let (token, shown) = match token {
        Some(token) => (token, None),
        None => {
            let Some(held) = locker.held_lock(&lock)? else {
                say!("lock '{lock}' is not held; nothing to release");
                return Ok(0);
            };
            let Some(token) = held.token.clone() else {
                tell!("dibs: lock '{lock}' holds a value dibs did not write; not touched");
                return Ok(1);
            };
            let what = format!(
                "lock '{lock}', held by {}, acquired {} ago, expires in {}",
                holder(&held),
                age(&held),
                ttl(&held)
            );
            if !yes && !confirm(&format!("release {what}? [y/N] ")) {
                say!("not released");
                return Ok(1);
            }
            (token, Some(what))
        }
    };
    match locker.force_release(&lock, &token, &by)? {
        ForcedRelease::Released => {
            let what = shown.unwrap_or_else(|| format!("lock '{lock}'"));
            say!("released {what}; recorded in its job's history as forced by {by}");
            Ok(0)
        }
        ForcedRelease::Free => {
            say!("lock '{lock}' is not held; nothing to release");
            Ok(0)
        }
        ForcedRelease::OtherHolder => {
            say!("lock '{lock}' is held by another holder than the one given (it changed hands); not released");
            Ok(1)
        }
    }
}

/// Who forces a release, for the history: `user@host`.
fn operator() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".to_owned());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned());
    // The library takes 1 to 128 bytes without ';' or control characters: an odd $USER is made
    // to fit, not refused.
    let mut by: String = format!("{user}@{host}")
        .chars()
        .map(|c| if c.is_control() || c == ';' { '_' } else { c })
        .collect();
    while by.len() > 128 {
        by.pop();
    }
    by
}

/// Asks on stderr, reads a line of stdin: yes only for `y` or `yes`.
fn confirm(question: &str) -> bool {
    use std::io::Write;
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok()
        && matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}
