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

use dibs::{HeldLock, History, Matched, Run, TaskResult};

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

/// `2026-12-02 17:10:52`, UTC.
pub fn utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

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

/// The history's last eviction, for a reader who may miss a job's runs because of it; loudest
/// where the runs dropped were this job's own.
pub fn evicted(history: &History) -> String {
    match (history.job_evicted_at_unix_ms, history.evicted_at_unix_ms) {
        (Some(at), _) => format!(
            " (its own runs were dropped from the history at {} UTC: more than about {} jobs record in the history \
             under this key prefix, and it was among the least recently run; a job that locks a \
             name per order or tenant can cause this)",
            utc(at),
            dibs::HISTORY_JOBS
        ),
        (None, Some(at)) => format!(
            " (the history keeps about {} jobs, and dropped the least recently run one's runs \
             at {} UTC)",
            dibs::HISTORY_JOBS,
            utc(at)
        ),
        (None, None) => String::new(),
    }
}

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
