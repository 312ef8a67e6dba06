//! The command line as clap parses it: `dibs run ...`, `dibs status ...`, `dibs locks ...`,
//! `dibs history ...`, `dibs check ...` and `dibs release ...`, each with its `--help`.
//!
//! What a value must look like (a duration, `--on-lost`, `--redis-opt`, the limits) is in
//! [`values`]; what no single argument can check (`--` after a command that runs none) in
//! [`Cli::parse_args`].

mod values;

use std::ffi::OsString;
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

pub use values::OnLost;
use values::{duration, limit, on_lost, positive_duration, skip_exit, RedisOpt};

/// What the top-level help says after the commands.
const ABOUT_ALL: &str = "\
CONN, the --redis of every command (or DIBS_REDIS instead): a Redis URI, as for the library:
redis://[user[:password]@]host[:port][/db], rediss://, unix:///path.sock; and --redis-opt
KEY=VALUE for another conn-spec key (ca-cert=/ca.pem, key-prefix=app:, timeout-ms=500, ...).
DURATION: a whole number with a unit: 500ms, 30s, 10m, 1h, 2d; more than 0, but for
run's --at-least and --on-lost.

Each run is recorded in its job's history (the last 100, kept 40 days after the last one;
about 1,000 jobs keep one): history and check read it.

Exit codes of dibs itself: 64 bad usage, 69 Redis unreachable or refusing, or the lock not
confirmed by the replicas (durable acquire), 70 internal error, 75 the lock was lost while CMD
ran (run --keep-alive), 127 CMD could not be started (run); locks and check exit 3 when they
cannot tell. `dibs <command> --help` tells more.";

const RUN_EXIT: &str = "\
Exit codes: CMD's own (128 + the signal number if a signal killed it); --skip-exit N when
another holder has the lock; of dibs itself: 64 bad usage, 69 Redis unreachable or refusing,
or the lock not confirmed by the replicas (durable acquire), 70 internal error, 75 the lock was
lost while CMD ran (--keep-alive), 127 CMD could not be started.";

const JOB_OR_LOCK: &str = "\
JOB: what runs are recorded under: the lock's name, less a tick it surely ends in (an ISO date
or date-time, or 8+ digits, after - _ . : / or @): report for report-2026-12-01, backup-db1 for
backup-db1; NAME for a `dibs run --tick` run. LOCK: a lock's whole name: its runs within its
job's history.";

const CHECK_EXIT: &str = "\
Exit codes, the worst first: 5 a run has held its lock longer than --max-duration; 1 JOB's task
did not run to success within --within (or --every and --grace; unless a run that started
within --grace-after-start runs now, or for --every one holding JOB's own lock: 0); 4 its newest success there took less than --min-duration (suspect); 3 the history
cannot tell (it holds every run only since a time within the window: an earlier one may be
missing), or the scan for running locks was cut short (--budget) where a run it missed could
change the answer of --max-duration or --grace-after-start; 0 it ran to success within --within;
64 bad usage, 69 Redis unreachable or refusing.";

const LOCKS_EXIT: &str = "\
Exit codes: 0 the list is complete, 3 it is partial (--budget), 64 bad usage, 69 Redis
unreachable or refusing.";

const RELEASE_EXIT: &str = "\
Exit codes: 0 released, or not held; 1 not released (the answer was no, the lock changed hands,
or it holds a value dibs did not write); 64 bad usage, 69 Redis unreachable or refusing.";

/// Runs a command on exactly one of many hosts, for cron: the one that wins a lock in Redis.
#[derive(Parser, Debug, PartialEq, Eq)]
#[command(name = "dibs", version, after_help = ABOUT_ALL)]
#[command(subcommand_required = true, args_override_self = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Each command's options are long to tell: their help goes under them (`next_line_help`).
#[derive(Subcommand, Debug, PartialEq, Eq)]
pub enum Command {
    /// Run CMD only if it wins the lock NAME, and exit with CMD's exit code
    ///
    /// Runs CMD only if it wins the lock NAME, and exits with CMD's exit code. CMD gets the
    /// lock's fencing token (greater than every earlier holder's) as DIBS_FENCING_TOKEN, and
    /// not DIBS_REDIS. The run is recorded in its job's history.
    ///
    /// Nothing CMD starts outlives the lock: what CMD leaves running (what a script ran, a
    /// daemon, one that called setsid) becomes the child of dibs's watchdog (below), and the
    /// lock is released only when none is left. SIGTERM, SIGINT and SIGHUP to dibs or its
    /// group are passed on to CMD's process group and to every other group of what CMD
    /// started, once each; sent to CMD's group (Ctrl-C), they reach it once, from the kernel.
    /// Only groups that a process CMD started is in at that moment are signalled, never an id
    /// that may be another's by now.
    ///
    /// A SIGKILL to dibs or its group cannot be caught: a watchdog process (dibs-watchdog in
    /// ps), CMD's parent and leader of CMD's group, in no group of dibs's, then kills what CMD
    /// started, and the lock expires by --at-most, unrecorded (the only case where the lock
    /// outlives dibs). It is the subreaper of all CMD starts, so every process of CMD's, in
    /// whatever group or session (a `set -m` job, a setsid daemon), is its descendant, and it
    /// kills them one by one: no cgroup is needed. Where dibs can make a cgroup (v2, Linux 5.14
    /// or later; root, or a delegated subtree), CMD also runs in one of its own, dibs-run-PID
    /// beside dibs's, which the watchdog kills at once (cgroup.kill) and then removes. Never
    /// reached: without a cgroup, a process the user may not signal (what sudo runs); with
    /// one, a process moved out of it by someone else; and nothing, if CMD's group was
    /// SIGKILLed before (the watchdog died with it).
    #[command(next_line_help = true, verbatim_doc_comment, after_help = RUN_EXIT)]
    Run(RunArgs),
    /// Say whether the lock NAME is held, by whom, and for how long more
    #[command(next_line_help = true, verbatim_doc_comment)]
    Status(StatusArgs),
    /// List the held locks, with their holder, age and time left
    ///
    /// Lists the held locks (PATTERN is a glob over their names) with their holder, age and
    /// time left, or says that the list is partial (exit 3): the keyspace is scanned to its
    /// end (every master of a Cluster) within --budget.
    #[command(next_line_help = true, verbatim_doc_comment, after_help = LOCKS_EXIT)]
    Locks(LocksArgs),
    /// List the last runs of a job, or of a lock: when, where, how they ended
    #[command(next_line_help = true, verbatim_doc_comment, after_help = JOB_OR_LOCK)]
    History(HistoryArgs),
    /// Exit 0 when a job ran to success within a DURATION (for cron and monitoring)
    ///
    /// Exits 0 when JOB's task (or LOCK's) ran to success within --within, 1 when it did not,
    /// and 3 when the history cannot tell; says which job or lock it matched. Further rules: a
    /// success too short (--min-duration), a run too long (--max-duration), and the time a run
    /// that started has to finish (--grace-after-start).
    #[command(next_line_help = true, verbatim_doc_comment, after_help = format!("{JOB_OR_LOCK}\n\n{CHECK_EXIT}"))]
    Check(CheckArgs),
    /// Delete a held lock, asking first; recorded in the history as forced
    ///
    /// Deletes a held lock: shows its holder and asks on the terminal first (--yes does not
    /// ask), or deletes it at once when given the holder's token (`dibs locks --show-tokens`
    /// shows it). Only that holder's lock is deleted: a lock that changed hands meanwhile is
    /// left alone. Recorded in its job's history as forced by $USER@host.
    #[command(next_line_help = true, verbatim_doc_comment, after_help = RELEASE_EXIT)]
    Release(ReleaseArgs),
}

/// Where Redis is: `--redis` (or `DIBS_REDIS`) and `--redis-opt`. Not an argument group: as
/// one, it would stand in the usage for `--redis`.
#[derive(Args, Debug, PartialEq, Eq)]
#[group(skip)]
pub struct Conn {
    /// Where Redis is: a Redis URI, as for the library:
    /// redis://[user[:password]@]host[:port][/db], rediss://, unix:///path.sock;
    /// or set DIBS_REDIS instead
    #[arg(long, value_name = "CONN", env = "DIBS_REDIS", hide_env_values = true)]
    #[arg(allow_hyphen_values = true, verbatim_doc_comment)]
    pub redis: String,
    /// Another conn-spec key, as in the library's maps: ca-cert=/ca.pem, key-prefix=app:,
    /// timeout-ms=500, ...; repeatable. Not the *-pem keys: a command line is anyone's to
    /// read (ps), so give their files (ca-cert=PATH, client-key=PATH)
    #[arg(long = "redis-opt", value_name = "KEY=VALUE", value_parser = RedisOpt)]
    #[arg(allow_hyphen_values = true, verbatim_doc_comment)]
    pub options: Vec<(String, String)>,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct RunArgs {
    #[command(flatten)]
    pub conn: Conn,
    /// The lock's name: the hosts that run the same job give the same one
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub lock: String,
    /// How long the lock is held at most: it expires then, if dibs is killed or its host
    /// lost. A DURATION: a whole number with a unit: 500ms, 30s, 10m, 1h, 2d
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    #[arg(allow_hyphen_values = true, verbatim_doc_comment)]
    pub at_most: Duration,
    /// How long the lock is kept at least, even after CMD ends sooner: a host whose cron
    /// fires a little later skips the same run. Not with --tick
    #[arg(long, value_name = "DURATION", value_parser = duration, default_value = "0ms")]
    #[arg(
        conflicts_with = "tick",
        allow_hyphen_values = true,
        verbatim_doc_comment
    )]
    pub at_least: Duration,
    /// Which tick of the job NAME this run is (a date, a fire time): the lock NAME@TICK,
    /// kept for all of --at-most as the tick's done mark, so that the tick runs once across
    /// hosts whose crons fire apart; recorded under job NAME
    #[arg(
        long,
        value_name = "TICK",
        allow_hyphen_values = true,
        verbatim_doc_comment
    )]
    pub tick: Option<String>,
    /// Extend the lock while CMD runs: a short --at-most then bounds how long a killed dibs
    /// keeps the job from running elsewhere
    #[arg(long, verbatim_doc_comment)]
    pub keep_alive: bool,
    /// With --keep-alive, when the lock is found lost while CMD runs: send CMD's process
    /// group (and every other group of what it started) SIGTERM, then SIGKILL GRACE later (a
    /// DURATION; 0s: at once) if any of it still runs, and exit 75; or ignore: warn only, and
    /// let CMD run on. With a GRACE, the watchdog does the same when the lock may lapse while
    /// dibs cannot extend it (dibs stopped by SIGSTOP, or starved)
    #[arg(long, value_name = "GRACE|ignore", value_parser = on_lost, default_value = "10s")]
    #[arg(
        requires = "keep_alive",
        allow_hyphen_values = true,
        verbatim_doc_comment
    )]
    pub on_lost: OnLost,
    /// The exit code when another holder has the lock (0 to 255)
    #[arg(long, value_name = "N", value_parser = skip_exit, default_value = "0")]
    #[arg(allow_hyphen_values = true)]
    pub skip_exit: u8,
    /// The command to run and its arguments, after --: CMD [ARGS...]
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct StatusArgs {
    #[command(flatten)]
    pub conn: Conn,
    /// The lock's name
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub lock: String,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct LocksArgs {
    #[command(flatten)]
    pub conn: Conn,
    /// A glob over the locks' names
    #[arg(value_name = "PATTERN", default_value = "*")]
    pub pattern: String,
    /// Show at most N locks (1 to 10000)
    #[arg(long, value_name = "N", value_parser = limit, default_value = "1000")]
    #[arg(allow_hyphen_values = true)]
    pub limit: usize,
    /// Show each holder's token too, as `dibs release --token` takes it
    #[arg(long)]
    pub show_tokens: bool,
    /// How long the scan of the keyspace may take: past it, the list is partial, says so,
    /// and the exit code is 3
    #[arg(long, value_name = "DURATION", value_parser = positive_duration, default_value = "5s")]
    #[arg(allow_hyphen_values = true, verbatim_doc_comment)]
    pub budget: Duration,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub conn: Conn,
    /// The job whose runs to list, or a lock (its runs within its job's history)
    #[arg(value_name = "JOB|LOCK")]
    pub job: String,
    /// List at most N runs (1 to 10000)
    #[arg(long, value_name = "N", value_parser = limit, default_value = "20")]
    #[arg(allow_hyphen_values = true)]
    pub limit: usize,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct CheckArgs {
    #[command(flatten)]
    pub conn: Conn,
    /// The job to check, or a lock (its runs within its job's history)
    #[arg(value_name = "JOB|LOCK")]
    pub job: String,
    /// The window: the task must have run to success within it (a DURATION: 30m, 1h, 2d)
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    #[arg(allow_hyphen_values = true, required_unless_present = "every")]
    #[arg(conflicts_with = "every")]
    pub within: Option<Duration>,
    /// Instead of --within: a job expected every DURATION, as the Spring Boot starter asks
    /// (`dibs.jobs.expect-every`): late after the period and --grace, and not late while a run
    /// holds the job's own lock (unless --grace-after-start decides)
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    #[arg(allow_hyphen_values = true, verbatim_doc_comment)]
    pub every: Option<Duration>,
    /// How late a job expected --every period may be (default: half the period, at most 1h)
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    #[arg(allow_hyphen_values = true)]
    pub grace: Option<Duration>,
    /// The job has been expected for this long (since its deploy): with no success recorded, it
    /// is not late before a whole window has passed since then
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    #[arg(allow_hyphen_values = true, verbatim_doc_comment)]
    pub expected_for: Option<Duration>,
    /// A success that took less is suspect (exit 4): it ran, too briefly to have done its work
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    #[arg(allow_hyphen_values = true)]
    pub min_duration: Option<Duration>,
    /// A run that has held its lock longer is flagged (exit 5): stuck, or slowed
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    #[arg(allow_hyphen_values = true)]
    pub max_duration: Option<Duration>,
    /// With no success within --within, a run that started less than this ago and runs now is
    /// given the time to finish: exit 0, running
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    #[arg(allow_hyphen_values = true, verbatim_doc_comment)]
    pub grace_after_start: Option<Duration>,
    /// How long the scan for the job's running locks may take (with --max-duration or
    /// --grace-after-start)
    #[arg(long, value_name = "DURATION", value_parser = positive_duration, default_value = "5s")]
    #[arg(allow_hyphen_values = true, verbatim_doc_comment)]
    pub budget: Duration,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct ReleaseArgs {
    #[command(flatten)]
    pub conn: Conn,
    /// The lock's whole name
    #[arg(value_name = "NAME")]
    pub lock: String,
    /// Release at once if the holder's token is TOKEN (`dibs locks --show-tokens` shows it);
    /// without it, dibs shows the holder it finds and asks
    #[arg(
        long,
        value_name = "TOKEN",
        conflicts_with = "yes",
        allow_hyphen_values = true
    )]
    #[arg(verbatim_doc_comment)]
    pub token: Option<String>,
    /// Release the holder found without asking
    #[arg(long)]
    pub yes: bool,
}

impl Cli {
    /// Parses `args` (the program name first), as [`Parser::try_parse_from`] does, and refuses
    /// what clap cannot: a `--` after a command that runs no command.
    pub fn parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        Cli::parse_with(Cli::command(), args.into_iter().map(Into::into).collect())
    }

    /// [`Cli::parse_args`] with `command` as clap's (the tests' reads another variable than
    /// DIBS_REDIS).
    fn parse_with(mut command: clap::Command, args: Vec<OsString>) -> Result<Cli, clap::Error> {
        let matches = command.try_get_matches_from_mut(&args).map_err(unquoted)?;
        let cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))?;
        let name = match cli.command {
            Command::Run(_) => return Ok(cli),
            Command::Status(_) => "status",
            Command::Locks(_) => "locks",
            Command::History(_) => "history",
            Command::Check(_) => "check",
            Command::Release(_) => "release",
        };
        // Only `run` takes a command after `--`; the others would take what follows for their
        // positional argument (`dibs locks -- x`, the pattern `x`): refused, as `--` says that
        // a command follows.
        if args.iter().skip(1).any(|a| a == "--") {
            let sub = command
                .find_subcommand_mut(name)
                .expect("every command is a subcommand");
            return Err(sub.error(
                ErrorKind::UnknownArgument,
                format!("{name} runs no command: nothing goes after '--'"),
            ));
        }
        Ok(cli)
    }
}

/// A flag given a value (`--keep-alive=...`) is refused with the value quoted: not here, as it may
/// be a password (the value meant for the option before, say). Clap quotes no other value of an
/// option but those the [`values`] refuse, and `--redis-opt` takes care of its own.
fn unquoted(mut error: clap::Error) -> clap::Error {
    if error.kind() == ErrorKind::TooManyValues {
        error.insert(
            ContextKind::InvalidValue,
            ContextValue::String("***".to_owned()),
        );
    }
    error
}

#[cfg(test)]
mod tests;
