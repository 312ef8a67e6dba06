//! `dibs`, the command line: runs a command on exactly one of many hosts, for cron.
//!
//! ```text
//! dibs run --redis redis://redis:6379 --lock nightly --at-most 10m -- /usr/local/bin/report
//! ```

mod child;
mod cli;

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use child::{Forwarder, LossStop};
use clap::error::ErrorKind;
use cli::{
    CheckArgs, Cli, Command, Conn, HistoryArgs, LocksArgs, OnLost, ReleaseArgs, RunArgs, StatusArgs,
};
use dibs::{
    ConnSpec, Error, ForcedRelease, HeldLock, History, LockParams, Locker, Matched, Run, SpecValue,
    TaskResult, Verdict,
};

/// Bad usage: what clap refuses (its own exit code would be 2), or a value dibs refuses.
const EX_USAGE: u8 = 64;
const EX_UNAVAILABLE: u8 = 69;
const EX_SOFTWARE: u8 = 70;
/// `dibs run --keep-alive`: the lock was found lost while the command ran (EX_TEMPFAIL).
const EX_LOST: u8 = 75;
const EX_NOT_STARTED: u8 = 127;
/// What a listing or a check cannot tell: the answer would need data Redis no longer holds, or
/// that the scan's budget did not reach.
const EX_INCOMPLETE: u8 = 3;

fn main() -> ExitCode {
    let cli = match Cli::parse_args(std::env::args_os()) {
        Ok(cli) => cli,
        Err(error) => {
            // Help and the version go to stdout, the errors to stderr, with the usage.
            let _ = error.print();
            return ExitCode::from(match error.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
                _ => EX_USAGE,
            });
        }
    };
    ExitCode::from(run(cli.command).unwrap_or_else(|e| {
        eprintln!("dibs: {e}");
        match e {
            Error::InvalidArgument { .. } => EX_USAGE,
            _ => EX_UNAVAILABLE,
        }
    }))
}

fn run(command: Command) -> Result<u8, Error> {
    match command {
        Command::Run(RunArgs {
            conn,
            lock,
            at_most,
            at_least,
            tick,
            keep_alive,
            on_lost,
            skip_exit,
            command,
        }) => {
            let (program, args) = command
                .split_first()
                .expect("clap requires a command after --");
            let params = match &tick {
                Some(tick) => LockParams::for_tick(&lock, tick, millis(at_most), 1)?,
                None => LockParams::from_millis(&lock, millis(at_most), millis(at_least))?,
            };
            let locker = locker(&conn, keep_alive)?;
            // Watch signals before taking the lock: one that arrives while it is being taken
            // must not kill dibs with the lock held and nothing to release it.
            let forwarder = match Forwarder::start() {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("dibs: cannot watch signals: {e}");
                    return Ok(EX_SOFTWARE);
                }
            };
            let mut lease = match locker.acquire(&params) {
                Ok(Some(lease)) => lease,
                Ok(None) => {
                    forwarder.stop();
                    eprintln!("dibs: lock '{lock}' is held by another holder; {program} not run");
                    return Ok(skip_exit);
                }
                Err(e) => {
                    forwarder.stop();
                    return Err(e);
                }
            };
            if let Some(warning) = lease.take_warning() {
                eprintln!("dibs: warning: {warning}");
            }
            let stop = match on_lost {
                OnLost::Stop(grace) if keep_alive => {
                    let stop = LossStop::new(grace);
                    lease.when_lost(stop.teller());
                    Some(stop)
                }
                OnLost::Ignore if keep_alive => {
                    let (lock, program) = (lock.clone(), program.clone());
                    lease.when_lost(move || {
                        eprintln!(
                            "dibs: warning: lock '{lock}' was lost while {program} ran, and \
                             another holder may run it now; --on-lost ignore: {program} runs on"
                        );
                    });
                    None
                }
                _ => None,
            };
            // A panic here drops the lease, which releases it.
            let end = forwarder.run_child(&lock, program, args, lease.fence(), stop);
            let ending = lease.release_after(if end.code == 0 {
                TaskResult::Succeeded
            } else {
                TaskResult::Failed
            });
            forwarder.stop();
            if let Some(warning) = ending.warning() {
                eprintln!("dibs: warning: {warning}");
            }
            Ok(if end.stopped_for_loss {
                EX_LOST
            } else {
                end.code
            })
        }
        Command::Status(StatusArgs { conn, lock }) => {
            match locker(&conn, false)?.inspect(&lock)? {
                None => println!("lock '{lock}' is free"),
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
                    println!("lock '{lock}' is {who}; {ttl}");
                }
            }
            Ok(0)
        }
        Command::Locks(LocksArgs {
            conn,
            pattern,
            limit,
            show_tokens,
            budget,
        }) => {
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
                        println!("no held lock found (matching '{pattern}') in the part scanned");
                        println!("{partial}");
                        return Ok(EX_INCOMPLETE);
                    }
                    None => println!("no lock held (matching '{pattern}')"),
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
                println!("(the first {limit}; --limit shows more)");
            }
            if let Some(partial) = partial {
                println!("{partial}");
                return Ok(EX_INCOMPLETE);
            }
            Ok(0)
        }
        Command::History(HistoryArgs { conn, job, limit }) => {
            let history = locker(&conn, false)?.history(&job, limit)?;
            let subject = subject(&job, &history.matched);
            if history.runs.is_empty() {
                println!(
                    "no run of job or lock '{job}' is recorded{}",
                    evicted(&history)
                );
                return Ok(0);
            }
            println!(
                "{subject}: the last {} recorded, newest first",
                history.runs.len()
            );
            let mut rows = vec![
                ["RECORDED (UTC)", "NAME", "INSTANCE", "TOOK", "TASK", "LOCK"]
                    .map(str::to_owned)
                    .to_vec(),
            ];
            rows.extend(history.runs.iter().map(|run| {
                vec![
                    utc(run.recorded_at_unix_ms),
                    run.name.clone(),
                    instance(run),
                    match run.task {
                        None => "-".to_owned(),
                        Some(_) => human(Duration::from_millis(run.duration_ms)),
                    },
                    run.task.map_or("-", task_word).to_owned(),
                    match &run.forced_by {
                        Some(by) => format!("forced by {by}"),
                        None => run.ended.to_string(),
                    },
                ]
            }));
            print_table(&rows);
            Ok(0)
        }
        Command::Check(CheckArgs { conn, job, within }) => {
            let history = locker(&conn, false)?.history(&job, dibs::HISTORY_LENGTH as usize)?;
            let now = unix_ms();
            let ago = |run: &Run| {
                human(Duration::from_millis(
                    now.saturating_sub(run.recorded_at_unix_ms),
                ))
            };
            let subject = subject(&job, &history.matched);
            let window = human(within);
            let last = |last_success: Option<&Run>| match last_success {
                Some(run) => format!("its last success was {} ago on {}", ago(run), instance(run)),
                None => "no success of it is recorded".to_owned(),
            };
            let latest = |latest: Option<&Run>| match latest {
                Some(run) if !run.succeeded() => format!(
                    "; its latest record, {} ago on {}: task {}, lock {}",
                    ago(run),
                    instance(run),
                    run.task.map_or("-", task_word),
                    run.ended
                ),
                _ => String::new(),
            };
            match history.check(now, within) {
                Verdict::Ran(run) => {
                    println!(
                        "ok: {subject} ran {} ago on {} ({}, lock {})",
                        ago(run),
                        instance(run),
                        run.name,
                        run.ended
                    );
                    Ok(0)
                }
                Verdict::Overdue {
                    last_success,
                    latest: newest,
                } => {
                    println!(
                        "overdue: {subject} has not run to success within {window}: {}{}",
                        last(last_success),
                        latest(newest)
                    );
                    Ok(1)
                }
                Verdict::Unknown {
                    last_success,
                    latest: newest,
                    complete_since_unix_ms,
                } => {
                    println!(
                        "unknown: no success of {subject} is recorded within {window}, but the \
                         history holds every run only since {} UTC{}: an earlier one may be \
                         missing from it; {}{}",
                        utc(complete_since_unix_ms),
                        evicted(&history),
                        last(last_success),
                        latest(newest)
                    );
                    Ok(EX_INCOMPLETE)
                }
            }
        }
        Command::Release(ReleaseArgs {
            conn,
            lock,
            token,
            yes,
        }) => {
            let locker = locker(&conn, false)?;
            let by = operator();
            let (token, shown) = match token {
                Some(token) => (token, None),
                None => {
                    let Some(held) = locker.held_lock(&lock)? else {
                        println!("lock '{lock}' is not held; nothing to release");
                        return Ok(0);
                    };
                    let Some(token) = held.token.clone() else {
                        eprintln!(
                            "dibs: lock '{lock}' holds a value dibs did not write; not touched"
                        );
                        return Ok(1);
                    };
                    let what = format!(
                        "lock '{lock}', held by {}, acquired {} ago, expires in {}",
                        holder(&held),
                        age(&held),
                        ttl(&held)
                    );
                    if !yes && !confirm(&format!("release {what}? [y/N] ")) {
                        println!("not released");
                        return Ok(1);
                    }
                    (token, Some(what))
                }
            };
            match locker.force_release(&lock, &token, &by)? {
                ForcedRelease::Released => {
                    let what = shown.unwrap_or_else(|| format!("lock '{lock}'"));
                    println!("released {what}; recorded in its job's history as forced by {by}");
                    Ok(0)
                }
                ForcedRelease::Free => {
                    println!("lock '{lock}' is not held; nothing to release");
                    Ok(0)
                }
                ForcedRelease::OtherHolder => {
                    println!("lock '{lock}' is held by another holder than the one given (it changed hands); not released");
                    Ok(1)
                }
            }
        }
    }
}

/// What a name given to `history` or `check` matched, for its output.
fn subject(name: &str, matched: &Matched) -> String {
    match matched {
        Matched::Lock { job } => format!("lock '{name}' of job '{job}'"),
        Matched::Job | Matched::Nothing => format!("job '{name}'"),
    }
}

/// The history's last eviction, for a reader who may miss a job's runs because of it.
fn evicted(history: &History) -> String {
    match history.evicted_at_unix_ms {
        Some(at) => format!(
            " (the history keeps about {} jobs, and dropped the least recently run one's runs \
             at {} UTC)",
            dibs::HISTORY_JOBS,
            utc(at)
        ),
        None => String::new(),
    }
}

fn holder(lock: &HeldLock) -> String {
    match &lock.state.holder {
        Some(h) => format!("{} pid {}", h.host, h.pid),
        None => "(a value dibs did not write)".to_owned(),
    }
}

fn age(lock: &HeldLock) -> String {
    lock.state.holder.as_ref().map_or("-".to_owned(), |h| {
        human(Duration::from_millis(
            unix_ms().saturating_sub(h.acquired_at_unix_ms),
        ))
    })
}

fn ttl(lock: &HeldLock) -> String {
    lock.state
        .remaining_ms
        .map_or("never".to_owned(), |ms| human(Duration::from_millis(ms)))
}

fn instance(run: &Run) -> String {
    match &run.instance {
        Some(id) => format!("{id} ({} pid {})", run.host, run.pid),
        None => format!("{} pid {}", run.host, run.pid),
    }
}

fn task_word(task: TaskResult) -> &'static str {
    match task {
        TaskResult::Succeeded => "ok",
        TaskResult::Failed => "failed",
    }
}

/// Columns padded to their widest cell.
fn print_table(rows: &[Vec<String>]) {
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
    for row in rows {
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

/// Who forces a release, for the history: `user@host`.
fn operator() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".to_owned());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned());
    format!("{user}@{host}")
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

/// `2026-12-02 17:10:52`, UTC.
fn utc(unix_ms: u64) -> String {
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

/// The same conn specs as the library: the URI, plus extra keys as in its maps.
fn locker(conn: &Conn, keep_alive: bool) -> Result<Locker, Error> {
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

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn human(d: Duration) -> String {
    let (ms, s) = (d.as_millis(), d.as_secs());
    match s {
        0..=9 => format!("{ms} ms"),
        10..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}
