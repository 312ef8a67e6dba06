//! `dibs locks`: the held locks, with their holder, age and time left.

use dibs::Error;

use crate::cli::LocksArgs;
use crate::connect::locker;
use crate::output::{age, holder, human, print_table, say, ttl};
use crate::EX_INCOMPLETE;

pub fn locks(args: LocksArgs) -> Result<u8, Error> {
    let LocksArgs {
        conn,
        pattern,
        limit,
        show_tokens,
        budget,
    } = args;
    let listing = locker(&conn, false)?.locks(&pattern, limit, budget)?;
    let partial = (!listing.complete).then(|| {
        format!(
            "partial: scanned about {} of {} keys in {} (--budget), so a held lock may be \
             missing from this list",
            listing.scanned,
            listing.keys,
            human(budget)
        )
    });
    if listing.items.is_empty() {
        match partial {
            Some(partial) => {
                say!("no held lock found (matching '{pattern}') in the part scanned");
                say!("{partial}");
                return Ok(EX_INCOMPLETE);
            }
            None => say!("no lock held (matching '{pattern}')"),
        }
        return Ok(0);
    }
    let mut rows = vec![vec![
        "NAME".to_owned(),
        "HOLDER".to_owned(),
        "AGE".to_owned(),
        "EXPIRES IN".to_owned(),
    ]];
    if show_tokens {
        rows[0].push("TOKEN".to_owned());
    }
    for lock in &listing.items {
        let mut row = vec![lock.name.clone(), holder(lock), age(lock), ttl(lock)];
        if show_tokens {
            row.push(lock.token.clone().unwrap_or_else(|| "-".to_owned()));
        }
        rows.push(row);
    }
    print_table(&rows);
    if listing.truncated {
        say!("(the first {limit}; --limit shows more)");
    }
    if let Some(partial) = partial {
        say!("{partial}");
        return Ok(EX_INCOMPLETE);
    }
    Ok(0)
}
