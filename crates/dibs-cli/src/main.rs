//! `dibs`, the command line: runs a command on exactly one of many hosts, for cron.
//!
//! ```text
//! dibs run --redis redis://redis:6379 --lock nightly --at-most 10m -- /usr/local/bin/report
//! ```
//!
//! This file parses ([`cli`]), hands the command to its file, and turns what went wrong into an
//! exit code.

mod cgroup;
mod check;
mod child;
mod cli;
mod connect;
mod descendants;
mod history;
mod locks;
mod output;
mod release;
mod run;
mod signals;
mod status;
mod watchdog;

use std::process::ExitCode;

use clap::error::ErrorKind;
use cli::{Cli, Command};
use dibs::Error;

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
    // The watchdog of a `dibs run`, which dibs starts as a process of its own.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == watchdog::ARG)
    {
        return ExitCode::from(watchdog::main(std::env::args_os().skip(2).collect()));
    }
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
    if !matches!(cli.command, Command::Run(_) | Command::Release(_)) {
        // A listing whose reader went away (`dibs locks | head -1`) ends as `ls | head` does,
        // by SIGPIPE, not a panic on the failed write. Not `run`, whose command and lock must
        // outlive a closed stdout, nor `release`, which asks first.
        // SAFETY: no other thread runs yet; restoring a default disposition.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let outcome = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Status(args) => status::status(args),
        Command::Locks(args) => locks::locks(args),
        Command::History(args) => history::history(args),
        Command::Check(args) => check::check(args),
        Command::Release(args) => release::release(args),
    };
    ExitCode::from(outcome.unwrap_or_else(|e| {
        output::tell!("dibs: {e}");
        match e {
            Error::InvalidArgument { .. } => EX_USAGE,
            _ => EX_UNAVAILABLE,
        }
    }))
}
