//! The command line: `dibs run ...` and `dibs status ...`, parsed by hand (two subcommands do
//! not need a parser crate) into [`Command`].

use std::time::Duration;

pub const USAGE: &str = "\
usage:
  dibs run    --redis CONN --lock NAME --at-most DURATION [--at-least DURATION | --tick TICK]
              [--keep-alive [--on-lost GRACE|ignore]] [--skip-exit N]
              [--redis-opt KEY=VALUE]... -- CMD [ARGS...]
  dibs status --redis CONN --lock NAME [--redis-opt KEY=VALUE]...
  dibs locks   --redis CONN [PATTERN] [--limit N] [--show-tokens] [--budget DURATION]
  dibs history --redis CONN JOB|LOCK [--limit N]
  dibs check   --redis CONN JOB|LOCK --within DURATION
  dibs release --redis CONN NAME [--token TOKEN | --yes]

  CONN       a Redis URI, as for the library: redis://[user[:password]@]host[:port][/db],
             rediss://, unix:///path.sock; or set DIBS_REDIS instead of --redis
  --redis-opt  another conn-spec key, as in the library's maps: ca-cert=/ca.pem,
             key-prefix=app:, timeout-ms=500, ...
  DURATION   a whole number with a unit: 500ms, 30s, 10m, 1h, 2d
  --tick     which tick of the job NAME this run is (a date, a fire time): the lock
             NAME@TICK, kept for all of --at-most as the tick's done mark, so that the tick runs
             once across hosts whose crons fire apart; recorded under job NAME
  JOB        what runs are recorded under: the lock's name, less a tick it surely ends in (an
             ISO date or date-time, or 8+ digits, after - _ . : / or @): report for
             report-2026-12-01, backup-db1 for backup-db1; NAME for a --tick run
  LOCK       a lock's whole name: its runs within its job's history
  --skip-exit  the exit code when another holder has the lock (default 0)
  --on-lost  with --keep-alive, when the lock is found lost while CMD runs: send CMD SIGTERM,
             then SIGKILL GRACE later (a DURATION, default 10s), and exit 75; or ignore: warn
             only, and let CMD run on
  --budget   how long `dibs locks` may scan the keyspace (default 5s); past it the list is
             partial, said so, and the exit code is 3

`dibs run` runs CMD only if it wins the lock, and exits with CMD's exit code (128 + the
signal number if CMD was killed by a signal). SIGTERM, SIGINT and SIGHUP are passed on to
CMD (CMD runs in its own process group: a signal to dibs's group, or Ctrl-C, reaches CMD
once); the lock is released when CMD exits. CMD gets the lock's fencing token (greater than
every earlier holder's) as DIBS_FENCING_TOKEN. Exit codes of dibs itself: 64 bad usage, 69
Redis unreachable or refusing, or the lock not confirmed by the replicas (durable acquire),
70 internal error, 75 the lock was lost while CMD ran (--keep-alive), 127 CMD could not be
started.

Each run is recorded in its job's history (the last 100, kept 40 days after the last one;
about 1,000 jobs keep one). `dibs locks` lists the held locks (PATTERN is a glob over the
names, * by default) with their holder, age and time left, or says it is partial (exit 3);
`dibs history` a job's last runs, or a lock's: when, where, how they ended.
`dibs check` exits 0 when JOB's task ran to success within DURATION, 1 when it did not, and 3
when the history cannot tell (for cron and monitoring). `dibs release` deletes a held lock, asking first, or at once when given the token
that `dibs locks --show-tokens` shows; it is recorded in the history as forced.";

#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Run {
        server: ServerArg,
        lock: String,
        at_most: Duration,
        at_least: Duration,
        /// With `--tick`: the lock of that tick of job `lock`.
        tick: Option<String>,
        keep_alive: bool,
        /// With `keep_alive`: what a lock found lost does to the command.
        on_lost: OnLost,
        skip_exit: u8,
        program: String,
        args: Vec<String>,
    },
    Status {
        server: ServerArg,
        lock: String,
    },
    Locks {
        server: ServerArg,
        pattern: String,
        limit: usize,
        show_tokens: bool,
        budget: Duration,
    },
    History {
        server: ServerArg,
        job: String,
        limit: usize,
    },
    Check {
        server: ServerArg,
        job: String,
        within: Duration,
    },
    Release {
        server: ServerArg,
        lock: String,
        /// `None`: ask on the terminal (or take `--yes`) for the holder it finds.
        token: Option<String>,
        yes: bool,
    },
    Help,
}

/// Where Redis is, as the command line names it (`--redis` or `DIBS_REDIS`, `--redis-opt`): the
/// URI plus any extra spec keys.
#[derive(Debug, PartialEq, Eq)]
pub struct ServerArg {
    pub uri: String,
    pub options: Vec<(String, String)>,
}

/// What `dibs run --keep-alive` does to its command when the lock is found lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnLost {
    /// SIGTERM at once, SIGKILL this long after, if it still runs; dibs exits 75.
    Stop(Duration),
    /// A warning only: the command runs on, as before `--on-lost` existed.
    Ignore,
}

/// The grace between SIGTERM and SIGKILL when the lock is lost: systemd's own stop timeout is
/// 90 s, but here another host may run the job meanwhile, so the default is short.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(10);

fn on_lost_arg(text: &str) -> Result<OnLost, String> {
    match text {
        "ignore" => Ok(OnLost::Ignore),
        grace => duration("--on-lost", grace)
            .map(OnLost::Stop)
            .map_err(|e| format!("{e}; or give --on-lost ignore")),
    }
}

/// Parses the arguments after the program name. `redis_env` is `$DIBS_REDIS`.
pub fn parse(args: &[String], redis_env: Option<String>) -> Result<Command, String> {
    let Some((sub, rest)) = args.split_first() else {
        return Err("no command given".into());
    };
    if matches!(sub.as_str(), "-h" | "--help" | "help") {
        return Ok(Command::Help);
    }
    let (flags, tail) = match rest.iter().position(|a| a == "--") {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let mut redis = redis_env;
    let mut options = Vec::new();
    let (mut lock, mut at_most, mut at_least) = (None, None, None);
    let (mut tick, mut budget) = (None, None);
    let (mut keep_alive, mut skip_exit, mut on_lost) = (false, 0u8, None);
    let (mut limit, mut show_tokens, mut within, mut token, mut yes) =
        (None, false, None, None, false);
    let mut positional = Vec::new();
    let mut it = flags.iter();
    while let Some(arg) = it.next() {
        if !arg.starts_with('-') {
            positional.push(arg.clone());
            continue;
        }
        // `--flag value` or `--flag=value`. Only the flag is ever echoed: a value may hold a
        // password (`--redis=redis://:pw@host`).
        let (flag, mut inline) = match arg.split_once('=') {
            Some((flag, v)) if flag.starts_with("--") => (flag, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let has_inline = inline.is_some();
        let mut value = |name: &str| {
            inline
                .take()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag {
            "-h" | "--help" => return Ok(Command::Help),
            "--redis" => redis = Some(value("--redis")?),
            "--redis-opt" => {
                let kv = value("--redis-opt")?;
                let (k, v) = kv
                    .split_once('=')
                    .ok_or("--redis-opt takes KEY=VALUE, and its value has no '='")?;
                // A command line is anyone's to read (ps, /proc): PEM text, a key perhaps, stays
                // in its file. The message names the key only.
                if let Some(file_key) = k.strip_suffix("-pem") {
                    return Err(format!(
                        "--redis-opt {k}: PEM text on a command line is shown to every user                          (ps); give its file with {file_key}=PATH"
                    ));
                }
                options.push((k.to_owned(), v.to_owned()));
            }
            "--lock" => lock = Some(value("--lock")?),
            "--at-most" => at_most = Some(duration("--at-most", &value("--at-most")?)?),
            "--at-least" => at_least = Some(duration("--at-least", &value("--at-least")?)?),
            "--tick" => tick = Some(value("--tick")?),
            "--budget" => budget = Some(duration("--budget", &value("--budget")?)?),
            "--keep-alive" if !has_inline => keep_alive = true,
            "--keep-alive" => return Err("--keep-alive takes no value".into()),
            "--skip-exit" => {
                let v = value("--skip-exit")?;
                skip_exit = v
                    .parse()
                    .map_err(|_| format!("--skip-exit must be 0 to 255, got '{v}'"))?;
            }
            "--on-lost" => on_lost = Some(on_lost_arg(&value("--on-lost")?)?),
            "--limit" => {
                let v = value("--limit")?;
                limit = Some(
                    v.parse::<usize>()
                        .ok()
                        .filter(|n| (1..=10_000).contains(n))
                        .ok_or_else(|| format!("--limit must be 1 to 10000, got '{v}'"))?,
                );
            }
            "--show-tokens" if !has_inline => show_tokens = true,
            "--within" => within = Some(duration("--within", &value("--within")?)?),
            "--token" => token = Some(value("--token")?),
            "--yes" if !has_inline => yes = true,
            "--show-tokens" | "--yes" => return Err(format!("{flag} takes no value")),
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    let one = |what: &str| -> Result<String, String> {
        match positional.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(format!("{sub} needs the {what}")),
            [_, extra, ..] => Err(format!("{sub} takes one {what}; '{extra}' is one too many")),
        }
    };
    if matches!(sub.as_str(), "locks" | "history" | "check" | "release") {
        if tail.is_some() {
            return Err(format!("{sub} takes no command"));
        }
        let server = ServerArg {
            uri: redis.ok_or("--redis (or DIBS_REDIS) is required")?,
            options,
        };
        return match sub.as_str() {
            "locks" => Ok(Command::Locks {
                server,
                pattern: match positional.len() {
                    0 => "*".to_owned(),
                    _ => one("pattern")?,
                },
                limit: limit.unwrap_or(1000),
                show_tokens,
                budget: budget.unwrap_or(Duration::from_secs(5)),
            }),
            "history" => Ok(Command::History {
                server,
                job: one("job")?,
                limit: limit.unwrap_or(20),
            }),
            "check" => Ok(Command::Check {
                server,
                job: one("job")?,
                within: within.ok_or("--within is required")?,
            }),
            _ if token.is_some() && yes => Err("give --token or --yes, not both".into()),
            _ => Ok(Command::Release {
                server,
                lock: one("lock name")?,
                token,
                yes,
            }),
        };
    }
    if let Some(extra) = positional.first() {
        return Err(format!("unexpected argument '{extra}'"));
    }
    let server = ServerArg {
        uri: redis.ok_or("--redis (or DIBS_REDIS) is required")?,
        options,
    };
    let lock = lock.ok_or("--lock is required")?;
    match sub.as_str() {
        "run" => {
            let at_most = at_most.ok_or("--at-most is required")?;
            if tick.is_some() && at_least.is_some() {
                return Err(
                    "give --tick or --at-least, not both: a tick's lock is kept for all of --at-most"
                        .into(),
                );
            }
            if on_lost.is_some() && !keep_alive {
                return Err(
                    "--on-lost needs --keep-alive: only keep-alive finds a lock lost".into(),
                );
            }
            let (program, args) = tail
                .and_then(|t| t.split_first())
                .ok_or("the command to run goes after --")?;
            Ok(Command::Run {
                server,
                lock,
                at_most,
                at_least: at_least.unwrap_or(Duration::ZERO),
                tick,
                keep_alive,
                on_lost: on_lost.unwrap_or(OnLost::Stop(DEFAULT_GRACE)),
                skip_exit,
                program: program.clone(),
                args: args.to_vec(),
            })
        }
        "status" if tail.is_none() => Ok(Command::Status { server, lock }),
        "status" => Err("status takes no command".into()),
        other => Err(format!(
            "unknown command '{other}'; expected run, status, locks, history, check or release"
        )),
    }
}

/// `500ms`, `30s`, `10m`, `1h`.
pub fn duration(flag: &str, text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| {
        format!("{flag} must be a whole number with a unit (500ms, 30s, 10m, 1h), got '{text}'")
    })?;
    let ms = match unit {
        "ms" => Some(n),
        "s" => n.checked_mul(1000),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        "d" => n.checked_mul(86_400_000),
        _ => {
            return Err(format!(
                "{flag}: unknown unit in '{text}'; use ms, s, m, h or d"
            ))
        }
    };
    ms.map(Duration::from_millis)
        .ok_or_else(|| format!("{flag} = {text} is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn durations() {
        assert_eq!(duration("f", "500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("f", "30s"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("f", "10m"), Ok(Duration::from_secs(600)));
        assert_eq!(duration("f", "1h"), Ok(Duration::from_secs(3600)));
        for bad in ["", "10", "s", "1.5s", "-1s", "10x", "99999999999999999999h"] {
            assert!(duration("--at-most", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn run_and_status() {
        let cmd = parse(
            &strings(&[
                "run",
                "--redis",
                "redis://h",
                "--lock",
                "job",
                "--at-most",
                "10m",
                "--at-least",
                "30s",
                "--keep-alive",
                "--skip-exit",
                "3",
                "--redis-opt",
                "key-prefix=app:",
                "--",
                "echo",
                "hi",
                "--x",
            ]),
            None,
        )
        .unwrap();
        assert_eq!(
            cmd,
            Command::Run {
                server: ServerArg {
                    uri: "redis://h".into(),
                    options: vec![("key-prefix".into(), "app:".into())]
                },
                lock: "job".into(),
                at_most: Duration::from_secs(600),
                at_least: Duration::from_secs(30),
                tick: None,
                keep_alive: true,
                on_lost: OnLost::Stop(DEFAULT_GRACE),
                skip_exit: 3,
                program: "echo".into(),
                args: strings(&["hi", "--x"]),
            }
        );
        let cmd = parse(
            &strings(&["status", "--lock", "job"]),
            Some("redis://env".into()),
        )
        .unwrap();
        assert_eq!(
            cmd,
            Command::Status {
                server: ServerArg {
                    uri: "redis://env".into(),
                    options: vec![]
                },
                lock: "job".into()
            }
        );
    }

    #[test]
    fn on_lost_takes_a_grace_or_ignore_and_needs_keep_alive() {
        let with = |extra: &[&str]| {
            let mut all = strings(&["run", "--redis", "r", "--lock", "j", "--at-most", "1m"]);
            all.extend(strings(extra));
            all.extend(strings(&["--", "true"]));
            parse(&all, None)
        };
        let on_lost = |extra: &[&str]| match with(extra) {
            Ok(Command::Run { on_lost, .. }) => Ok(on_lost),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        };
        assert_eq!(on_lost(&["--keep-alive"]), Ok(OnLost::Stop(DEFAULT_GRACE)));
        assert_eq!(
            on_lost(&["--keep-alive", "--on-lost", "2s"]),
            Ok(OnLost::Stop(Duration::from_secs(2)))
        );
        assert_eq!(
            on_lost(&["--keep-alive", "--on-lost=ignore"]),
            Ok(OnLost::Ignore)
        );
        let bad = on_lost(&["--keep-alive", "--on-lost", "soon"]).unwrap_err();
        assert!(bad.contains("--on-lost") && bad.contains("ignore"), "{bad}");
        let alone = on_lost(&["--on-lost", "2s"]).unwrap_err();
        assert!(alone.contains("needs --keep-alive"), "{alone}");
    }

    #[test]
    fn a_tick_run_keeps_its_lock_for_all_of_at_most() {
        let args = ["run", "--redis", "r", "--lock", "report", "--at-most", "1h"];
        let with = |extra: &[&str]| {
            let mut all = strings(&args);
            all.extend(strings(extra));
            all.extend(strings(&["--", "true"]));
            parse(&all, None)
        };
        let Ok(Command::Run { tick, at_least, .. }) = with(&["--tick", "2026-12-04"]) else {
            panic!()
        };
        assert_eq!(tick.as_deref(), Some("2026-12-04"));
        assert_eq!(at_least, Duration::ZERO);
        let both = with(&["--tick", "2026-12-04", "--at-least", "5m"]).unwrap_err();
        assert!(both.contains("not both"), "{both}");
    }

    #[test]
    fn help() {
        for args in [
            vec!["--help"],
            vec!["-h"],
            vec!["help"],
            vec!["run", "--help"],
        ] {
            assert_eq!(parse(&strings(&args), None), Ok(Command::Help), "{args:?}");
        }
    }

    #[test]
    fn flags_take_their_value_after_an_equals_sign_too() {
        let cmd = parse(
            &strings(&[
                "run",
                "--redis=redis://h",
                "--lock=j",
                "--at-most=2s",
                "--",
                "true",
            ]),
            None,
        )
        .unwrap();
        let Command::Run {
            server,
            lock,
            at_most,
            ..
        } = cmd
        else {
            panic!("{cmd:?}")
        };
        assert_eq!((server.uri.as_str(), lock.as_str()), ("redis://h", "j"));
        assert_eq!(at_most, Duration::from_secs(2));
    }

    #[test]
    fn no_value_is_echoed_in_a_usage_error() {
        for args in [
            vec!["run", "--redis-url=redis://:s3cret@h", "--lock", "j"],
            vec![
                "run",
                "--redis",
                "r",
                "--redis-opt",
                "s3cret",
                "--lock",
                "j",
            ],
            vec!["run", "--redis", "r", "--lock", "j", "--keep-alive=s3cret"],
            // PEM text belongs in a file, not on a command line; refused, and not quoted.
            vec![
                "status",
                "--redis",
                "r",
                "--redis-opt",
                "client-key-pem=-----BEGIN PRIVATE KEY-----s3cret",
                "--lock",
                "j",
            ],
        ] {
            let err = parse(&strings(&args), None).unwrap_err();
            assert!(!err.contains("s3cret"), "{err}");
        }
    }

    #[test]
    fn usage_errors() {
        for (args, fragment) in [
            (vec![], "no command"),
            (
                vec!["run", "--lock", "j", "--at-most", "1s", "--", "true"],
                "--redis",
            ),
            (
                vec!["run", "--redis", "r", "--at-most", "1s", "--", "true"],
                "--lock is required",
            ),
            (
                vec!["run", "--redis", "r", "--lock", "j", "--", "true"],
                "--at-most is required",
            ),
            (
                vec!["run", "--redis", "r", "--lock", "j", "--at-most", "1s"],
                "after --",
            ),
            (
                vec![
                    "run",
                    "--redis",
                    "r",
                    "--lock",
                    "j",
                    "--at-most",
                    "1s",
                    "--bogus",
                ],
                "unknown option",
            ),
            (
                vec![
                    "run",
                    "--redis",
                    "r",
                    "--lock",
                    "j",
                    "--at-most",
                    "soon",
                    "--",
                    "x",
                ],
                "whole number",
            ),
            (
                vec![
                    "run",
                    "--redis",
                    "r",
                    "--lock",
                    "j",
                    "--at-most",
                    "1s",
                    "--skip-exit",
                    "300",
                    "--",
                    "x",
                ],
                "0 to 255",
            ),
            (
                vec!["stop", "--redis", "r", "--lock", "j"],
                "unknown command",
            ),
            (vec!["status", "--redis", "r", "--lock"], "needs a value"),
        ] {
            let err = parse(&strings(&args), None).unwrap_err();
            assert!(err.contains(fragment), "{args:?}: {err}");
        }
    }
}
