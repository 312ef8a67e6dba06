//! How the commands show what they print: durations, times, tables, holders and runs. Every
//! line goes out through [`say!`] or [`tell!`] (a table through [`print_table`]), which escape
//! what came from Redis (`dibs::shown`): a name or a field cannot forge a row or send the
//! terminal a command.

/// `println!`, its text passed through `dibs::shown`.
macro_rules! say {
    ($($arg:tt)*) => {
        println!("{}", dibs::shown(&format!($($arg)*)))
    };
}
pub(crate) use say;

/// `eprintln!`, its text passed through `dibs::shown`.
macro_rules! tell {
    ($($arg:tt)*) => {
        eprintln!("{}", dibs::shown(&format!($($arg)*)))
    };
}
pub(crate) use tell;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dibs::{HeldLock, Matched, Run, TaskResult};

pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

pub fn human(d: Duration) -> String {
    let (ms, s) = (d.as_millis(), d.as_secs());
    match s {
        0..=9 => format!("{ms} ms"),
        10..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

pub use dibs::utc;

/// Columns padded to their widest cell, each cell escaped (`dibs::shown`).
pub fn print_table(rows: &[Vec<String>]) {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| dibs::shown(c).into_owned()).collect())
        .collect();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|v| v.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 < row.len() {
                line.push_str(&format!("{cell:<w$}  ", w = widths[c]));
            } else {
                line.push_str(cell);
            }
        }
        println!("{line}");
    }
}

pub fn holder(lock: &HeldLock) -> String {
    match &lock.state.holder {
        Some(h) => format!("{} pid {}", h.host, h.pid),
        None => "(a value dibs did not write)".to_owned(),
    }
}

pub fn age(lock: &HeldLock) -> String {
    lock.state.holder.as_ref().map_or("-".to_owned(), |h| {
        human(Duration::from_millis(
            unix_ms().saturating_sub(h.acquired_at_unix_ms),
        ))
    })
}

pub fn ttl(lock: &HeldLock) -> String {
    lock.state
        .remaining_ms
        .map_or("never".to_owned(), |ms| human(Duration::from_millis(ms)))
}

/// What a name given to `history` or `check` matched, for its output.
pub fn subject(name: &str, matched: &Matched) -> String {
    match matched {
        Matched::Lock { job } => format!("lock '{name}' of job '{job}'"),
        Matched::Job | Matched::Nothing => format!("job '{name}'"),
    }
}

pub use dibs::evicted_note as evicted;

pub fn instance(run: &Run) -> String {
    match &run.instance {
        Some(id) => format!("{id} ({} pid {})", run.host, run.pid),
        None => format!("{} pid {}", run.host, run.pid),
    }
}

pub fn task_word(task: TaskResult) -> &'static str {
    match task {
        TaskResult::Succeeded => "ok",
        TaskResult::Failed => "failed",
        TaskResult::Unknown => "unknown",
    }
}
