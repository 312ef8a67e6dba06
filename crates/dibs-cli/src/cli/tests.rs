//! The cases of the hand-written parser that clap replaced, against clap: the same inputs are
//! accepted and refused; only the words of the errors are clap's.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use clap::error::ErrorKind;
use clap::CommandFactory;

use super::values::duration;
use super::*;

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Parses `dibs ARGS` with `redis_env` as DIBS_REDIS. The tests run in parallel, and whoever
/// runs them may have set DIBS_REDIS: each call reads a variable of its own instead.
fn parse(args: &[&str], redis_env: Option<&str>) -> Result<Command, String> {
    parse_clap(args, redis_env).map_err(|e| e.render().to_string())
}

fn parse_clap(args: &[&str], redis_env: Option<&str>) -> Result<Command, clap::Error> {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let var: &'static str = Box::leak(
        format!("DIBS_REDIS_TEST_{}", CALLS.fetch_add(1, Ordering::Relaxed)).into_boxed_str(),
    );
    if let Some(value) = redis_env {
        std::env::set_var(var, value);
    }
    let mut command = Cli::command();
    for sub in ["run", "status", "locks", "history", "check", "release"] {
        command = command.mut_subcommand(sub, |sub| {
            sub.mut_arg("redis", |redis| {
                assert_eq!(redis.get_env().and_then(|e| e.to_str()), Some("DIBS_REDIS"));
                redis.env(var)
            })
        });
    }
    let argv = std::iter::once("dibs").chain(args.iter().copied());
    Cli::parse_with(command, argv.map(Into::into).collect()).map(|cli| cli.command)
}

/// `"run --lock j"` as `["run", "--lock", "j"]`.
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

fn conn(uri: &str, options: &[(&str, &str)]) -> Conn {
    Conn {
        redis: uri.into(),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

#[test]
fn durations() {
    assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(duration("30s"), Ok(Duration::from_secs(30)));
    assert_eq!(duration("10m"), Ok(Duration::from_secs(600)));
    assert_eq!(duration("1h"), Ok(Duration::from_secs(3600)));
    assert_eq!(duration("2d"), Ok(Duration::from_secs(2 * 86_400)));
    for bad in ["", "10", "s", "1.5s", "-1s", "10x", "99999999999999999999h"] {
        assert!(duration(bad).is_err(), "{bad}");
    }
}

/// Issue 42 (13): a duration of 0 is refused where it means nothing, naming the option; kept for
/// `--at-least` (no lock kept after the command) and `--on-lost` (SIGKILL at once).
#[test]
fn zero_durations_are_refused_where_they_mean_nothing() {
    let run = "run --redis r --lock j";
    let check = "check --redis r j --within 1h";
    for (line, option) in [
        (
            format!("{run} --at-most 0s -- true"),
            "--at-most <DURATION>",
        ),
        (
            format!("{run} --at-most 0ms -- true"),
            "--at-most <DURATION>",
        ),
        (
            "check --redis r j --within 0s".to_owned(),
            "--within <DURATION>",
        ),
        (format!("{check} --budget 0ms"), "--budget <DURATION>"),
        (
            format!("{check} --min-duration 0s"),
            "--min-duration <DURATION>",
        ),
        (
            format!("{check} --max-duration 0m"),
            "--max-duration <DURATION>",
        ),
        (
            format!("{check} --grace-after-start 0h"),
            "--grace-after-start <DURATION>",
        ),
        (
            "locks --redis r --budget 0s".to_owned(),
            "--budget <DURATION>",
        ),
    ] {
        let err = parse_clap(&words(&line), None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ValueValidation, "{line}");
        let said = err.render().to_string();
        assert!(
            said.contains(&format!("'{option}': must be more than 0")),
            "{line}: {said}"
        );
    }
    let kept = parse(
        &words(&format!(
            "{run} --at-most 1s --at-least 0ms --keep-alive --on-lost 0s -- true"
        )),
        None,
    );
    match kept {
        Ok(Command::Run(args)) => {
            assert_eq!(args.at_least, Duration::ZERO);
            assert_eq!(args.on_lost, OnLost::Stop(Duration::ZERO));
        }
        other => panic!("{other:?}"),
    }
    assert!(parse(&words(&format!("{check} --min-duration 1ms")), None).is_ok());
}

#[test]
fn run_and_status() {
    let args = "run --redis redis://h --lock job --at-most 10m --at-least 30s --keep-alive \
                --skip-exit 3 --redis-opt key-prefix=app: -- echo hi --x";
    let cmd = parse(&words(args), None).unwrap();
    assert_eq!(
        cmd,
        Command::Run(RunArgs {
            conn: conn("redis://h", &[("key-prefix", "app:")]),
            lock: "job".into(),
            at_most: Duration::from_secs(600),
            at_least: Duration::from_secs(30),
            tick: None,
            keep_alive: true,
            on_lost: OnLost::Stop(Duration::from_secs(10)),
            skip_exit: 3,
            command: strings(&["echo", "hi", "--x"]),
        })
    );
    let cmd = parse(&["status", "--lock", "job"], Some("redis://env")).unwrap();
    assert_eq!(
        cmd,
        Command::Status(StatusArgs {
            conn: conn("redis://env", &[]),
            lock: "job".into()
        })
    );
}

#[test]
fn on_lost_takes_a_grace_or_ignore_and_needs_keep_alive() {
    let with = |extra: &[&str]| {
        let mut all = vec!["run", "--redis", "r", "--lock", "j", "--at-most", "1m"];
        all.extend_from_slice(extra);
        all.extend_from_slice(&["--", "true"]);
        parse(&all, None)
    };
    let on_lost = |extra: &[&str]| match with(extra) {
        Ok(Command::Run(run)) => Ok(run.on_lost),
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(e),
    };
    assert_eq!(
        on_lost(&["--keep-alive"]),
        Ok(OnLost::Stop(Duration::from_secs(10)))
    );
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
    assert!(
        alone.contains("required arguments were not provided") && alone.contains("--keep-alive"),
        "{alone}"
    );
}

#[test]
fn a_tick_run_keeps_its_lock_for_all_of_at_most() {
    let with = |extra: &[&str]| {
        let mut all = vec!["run", "--redis", "r", "--lock", "report", "--at-most", "1h"];
        all.extend_from_slice(extra);
        all.extend_from_slice(&["--", "true"]);
        parse(&all, None)
    };
    let Ok(Command::Run(run)) = with(&["--tick", "2026-12-04"]) else {
        panic!()
    };
    assert_eq!(run.tick.as_deref(), Some("2026-12-04"));
    assert_eq!(run.at_least, Duration::ZERO);
    let both = with(&["--tick", "2026-12-04", "--at-least", "5m"]).unwrap_err();
    assert!(
        both.contains("'--tick <TICK>' cannot be used with '--at-least <DURATION>'"),
        "{both}"
    );
}

#[test]
fn help() {
    for args in [
        vec!["--help"],
        vec!["-h"],
        vec!["help"],
        vec!["run", "--help"],
        vec!["help", "run"],
        vec!["release", "-h"],
    ] {
        let err = parse_clap(&args, None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::DisplayHelp, "{args:?}");
        assert!(!err.use_stderr(), "help goes to stdout: {args:?}");
    }
    let version = parse_clap(&["--version"], None).unwrap_err();
    assert_eq!(version.kind(), ErrorKind::DisplayVersion);
}

#[test]
fn every_option_says_what_it_means() {
    let mut command = Cli::command();
    command.build();
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        assert!(sub.get_about().is_some(), "{}", sub.get_name());
        for arg in sub.get_arguments().filter(|a| a.get_id() != "help") {
            assert!(
                arg.get_help().is_some(),
                "{} {}",
                sub.get_name(),
                arg.get_id()
            );
        }
    }
}

#[test]
fn flags_take_their_value_after_an_equals_sign_too() {
    let cmd = parse(
        &[
            "run",
            "--redis=redis://h",
            "--lock=j",
            "--at-most=2s",
            "--",
            "true",
        ],
        None,
    )
    .unwrap();
    let Command::Run(run) = cmd else {
        panic!("{cmd:?}")
    };
    assert_eq!(
        (run.conn.redis.as_str(), run.lock.as_str()),
        ("redis://h", "j")
    );
    assert_eq!(run.at_most, Duration::from_secs(2));
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
        let err = parse(&args, None).unwrap_err();
        assert!(!err.contains("s3cret"), "{err}");
    }
}

#[test]
fn usage_errors() {
    for (args, fragment) in [
        (words("run --lock j --at-most 1s -- true"), "--redis"),
        (
            words("run --redis r --at-most 1s -- true"),
            "required arguments were not provided:\n  --lock <NAME>",
        ),
        (
            words("run --redis r --lock j -- true"),
            "required arguments were not provided:\n  --at-most <DURATION>",
        ),
        (
            words("run --redis r --lock j --at-most 1s"),
            "required arguments were not provided:\n  <CMD>...",
        ),
        (
            words("run --redis r --lock j --at-most 1s --bogus"),
            "unexpected argument '--bogus'",
        ),
        (
            words("run --redis r --lock j --at-most soon -- x"),
            "'--at-most <DURATION>': not a whole number",
        ),
        (
            words("run --redis r --lock j --at-most 1s --skip-exit 300 -- x"),
            "'--skip-exit <N>': must be 0 to 255",
        ),
        (
            words("stop --redis r --lock j"),
            "unrecognized subcommand 'stop'",
        ),
        (
            words("status --redis r --lock"),
            "a value is required for '--lock <NAME>'",
        ),
    ] {
        let err = parse(&args, None).unwrap_err();
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(err.contains(fragment), "{args:?}: {err}");
        // Clap shows the usage, except after a value it refuses.
        assert!(
            err.contains("\nUsage: dibs") || err.contains("\nFor more information, try '--help'."),
            "{args:?}: {err}"
        );
    }
    // No command at all: the help, as an error (exit 64, on stderr).
    let none = parse_clap(&[], None).unwrap_err();
    assert_eq!(
        none.kind(),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    assert!(none.use_stderr());
    assert!(none.render().to_string().contains("Usage: dibs <COMMAND>"));
}

/// What the hand-written parser refused beyond the cases above, and clap alone would not.
#[test]
fn what_else_the_hand_written_parser_refused_stays_refused() {
    let refused = [
        "locks --redis r -- x",
        "locks --redis r --",
        "status --redis r --lock j -- true",
        "history --redis r -- job",
        "check --redis r job --within 1h -- x",
        "release --redis r -- lock",
        "release --redis r lock --token t --yes",
        "history --redis r a b",
        "history --redis r",
        "check --redis r job",
        "check --redis r job --within 1h --every 1h",
        "check --redis r job --every 0s",
        "check --redis r job --every 1h --expected-for x",
        "locks --redis r --limit 0",
        "locks --redis r --limit 10001",
        "locks --redis r --show-tokens=yes",
        "release --redis r lock --yes=1",
        "status --redis r --lock j extra",
        "run --redis r --lock j --at-most 1s x",
        "run --redis r --lock j --at-most 1s --",
        "run --redis r --lock j --at-most -1s -- x",
        "status --redis r --redis-opt novalue --lock j",
    ];
    for args in refused {
        let args = words(args);
        let err = parse(&args, None).unwrap_err();
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
    let Ok(Command::Locks(locks)) = parse(&["locks", "--redis", "r"], None) else {
        panic!()
    };
    assert_eq!(
        (locks.pattern.as_str(), locks.limit, locks.budget),
        ("*", 1000, Duration::from_secs(5))
    );
    // A later flag overrides an earlier one, as it did.
    let Ok(Command::History(history)) = parse(
        &[
            "history", "job", "--redis", "a", "--limit", "5", "--redis", "b",
        ],
        None,
    ) else {
        panic!()
    };
    assert_eq!((history.conn.redis.as_str(), history.limit), ("b", 5));
}

/// The one change of what is accepted: the hand-written parser read every option for every
/// command, and ignored those of other commands (`dibs release x --lock y` released `x`); each
/// command now refuses the options it does not have, naming them.
#[test]
fn an_option_of_another_command_is_refused_where_it_was_ignored() {
    for (args, option) in [
        ("status --redis r --lock j --at-most 1s", "--at-most"),
        ("status --redis r --lock j --keep-alive", "--keep-alive"),
        ("locks --redis r --within 1s", "--within"),
        ("history --redis r job --show-tokens", "--show-tokens"),
        ("release --redis r x --lock y", "--lock"),
    ] {
        let args = words(args);
        let err = parse(&args, None).unwrap_err();
        assert!(
            err.starts_with(&format!("error: unexpected argument '{option}' found")),
            "{args:?}: {err}"
        );
    }
}
