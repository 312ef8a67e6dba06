//! The values of the options: durations (of more than 0 where 0 means nothing), `--on-lost`, `--redis-opt`, `--skip-exit`, `--limit`.
//! Clap puts each error after `invalid value '...' for '--option <VALUE>':`, except
//! `--redis-opt`'s, which never quotes its value.

use std::ffi::OsStr;
use std::time::Duration;

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use clap::{Arg, Command};

/// What `dibs run --keep-alive` does to its command when the lock is found lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnLost {
    /// SIGTERM at once, SIGKILL this long after, if it still runs; dibs exits 75.
    Stop(Duration),
    /// A warning only: the command runs on, as before `--on-lost` existed.
    Ignore,
}

/// `500ms`, `30s`, `10m`, `1h`, `2d`.
pub fn duration(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| "not a whole number with a unit (500ms, 30s, 10m, 1h, 2d)".to_owned())?;
    let ms = match unit {
        "ms" => Some(n),
        "s" => n.checked_mul(1000),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        "d" => n.checked_mul(86_400_000),
        _ => return Err("unknown unit; use ms, s, m, h or d".to_owned()),
    };
    ms.map(Duration::from_millis)
        .ok_or_else(|| "too long".to_owned())
}

/// A duration of more than 0: for a bound that 0 would make meaningless (a lock held for no
/// time, a window or a budget nothing fits in, a run too long at once).
pub fn positive_duration(text: &str) -> Result<Duration, String> {
    match duration(text)? {
        d if d.is_zero() => Err("must be more than 0 (500ms, 30s, 10m, 1h, 2d)".to_owned()),
        d => Ok(d),
    }
}

/// A grace (a duration) or `ignore`. A grace of 0 is taken: SIGKILL at once after SIGTERM, for a
/// job that must stop the moment another host may run it. The grace between SIGTERM and SIGKILL when the lock is
/// lost defaults to 10 s: systemd's own stop timeout is 90 s, but here another host may run the
/// job meanwhile.
pub fn on_lost(text: &str) -> Result<OnLost, String> {
    match text {
        "ignore" => Ok(OnLost::Ignore),
        grace => duration(grace)
            .map(OnLost::Stop)
            .map_err(|e| format!("{e}; or give --on-lost ignore")),
    }
}

pub fn skip_exit(text: &str) -> Result<u8, String> {
    text.parse().map_err(|_| "must be 0 to 255".to_owned())
}

pub fn limit(text: &str) -> Result<usize, String> {
    text.parse::<i64>()
        .ok()
        .and_then(|n| dibs::validate_limit(n).ok())
        .ok_or_else(|| format!("must be 1 to {}", dibs::MAX_LIMIT))
}

/// `--redis-opt KEY=VALUE`. Its errors name the option, and the key at the most: a value may be
/// a password. A command line is anyone's to read (ps, /proc): PEM text, a key perhaps, is
/// refused, and stays in its file.
#[derive(Clone, Copy)]
pub struct RedisOpt;

impl TypedValueParser for RedisOpt {
    type Value = (String, String);

    fn parse_ref(
        &self,
        cmd: &Command,
        _arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<(String, String), clap::Error> {
        let refuse = |message: String| {
            clap::Error::raw(ErrorKind::ValueValidation, message).format(&mut cmd.clone())
        };
        let Some((key, value)) = value.to_str().and_then(|kv| kv.split_once('=')) else {
            return Err(refuse(
                "--redis-opt takes KEY=VALUE, and its value has no '=' (or is not UTF-8)".into(),
            ));
        };
        if let Some(file_key) = key.strip_suffix("-pem") {
            return Err(refuse(format!(
                "--redis-opt {key}: PEM text on a command line is shown to every user (ps); \
                 give its file with {file_key}=PATH"
            )));
        }
        Ok((key.to_owned(), value.to_owned()))
    }
}
