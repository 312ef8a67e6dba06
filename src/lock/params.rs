//! A lock request, validated before any network I/O: the only validation of lock arguments.

use std::time::Duration;

use crate::error::{Error, Result};

/// The longest lock name, in UTF-8 bytes.
pub const MAX_NAME_BYTES: usize = 512;

/// The longest tick of [`LockParams::for_tick`], in UTF-8 bytes.
pub const MAX_TICK_BYTES: usize = 128;

/// Redis refuses an expiry whose absolute time overflows its 64-bit millisecond clock; this
/// bound (about 146 million years) keeps well inside it.
const MAX_TTL_MS: u64 = (i64::MAX / 2) as u64;

/// A validated lock request. Building one is the only validation of lock arguments, and it
/// happens before any network I/O.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockParams {
    pub(super) name: String,
    /// The job is `name[..job_end]`: the job a tick's caller named, or [`crate::job_of`] the
    /// name (both a prefix of the name).
    pub(super) job_end: usize,
    pub(super) at_most_ms: u64,
    pub(super) at_least_ms: u64,
    /// Made by [`LockParams::for_tick`]: the name says its tick, and atLeast is atMost.
    pub(super) tick: bool,
}

impl LockParams {
    /// `at_most` and `at_least` count units of `unit_ms` milliseconds (1000 for seconds).
    ///
    /// A name is 1 to [`MAX_NAME_BYTES`] bytes of UTF-8 with no control characters: spaces and
    /// non-ASCII letters are fine, newlines and NUL are not (they break logs and tooling).
    pub fn new(name: &str, at_most: i64, at_least: i64, unit_ms: i64) -> Result<LockParams> {
        validate_name(name)?;
        let unit = if unit_ms == 1000 { "s" } else { "ms" };
        let to_ms = |arg: &'static str, v: i64| -> Result<u64> {
            let ms = v.checked_mul(unit_ms).ok_or_else(|| {
                Error::invalid(
                    arg,
                    format!("{arg} = {v} {unit} overflows 64-bit milliseconds"),
                )
            })?;
            Ok(ms.max(0) as u64)
        };
        if at_most <= 0 {
            return Err(Error::invalid(
                "atMost",
                format!("atMost must be positive, got {at_most} {unit}"),
            ));
        }
        if at_least < 0 {
            return Err(Error::invalid(
                "atLeast",
                format!("atLeast must not be negative, got {at_least} {unit}"),
            ));
        }
        let at_most_ms = to_ms("atMost", at_most)?;
        let at_least_ms = to_ms("atLeast", at_least)?;
        if at_most_ms > MAX_TTL_MS {
            return Err(Error::invalid(
                "atMost",
                format!("atMost = {at_most} {unit} is beyond what Redis can expire (at most {MAX_TTL_MS} ms)"),
            ));
        }
        if at_least_ms > at_most_ms {
            return Err(Error::invalid(
                "atLeast",
                format!(
                    "atLeast ({at_least} {unit}) must not exceed atMost ({at_most} {unit}): \
                     the lock would have to outlive its own expiry"
                ),
            ));
        }
        Ok(LockParams {
            name: name.to_owned(),
            job_end: crate::job_of(name).len(),
            at_most_ms,
            at_least_ms,
            tick: false,
        })
    }

    /// The lock of one tick of the job `name`, run at most once by all instances: the lock's
    /// name is `<name>@<tick>` (the tick says which one: a fire time, a date), and the lock is
    /// kept for all of `atMost` from its acquisition, released or not, as the tick's "done"
    /// marker. An instance whose scheduler fires the same tick up to `atMost` later then skips
    /// it, whatever the task's length. The run is recorded under job `name`. A tick is 1 to
    /// [`MAX_TICK_BYTES`] bytes, with no control characters and no `@` (so that no two names
    /// and ticks make the same key); `name` must not itself end in a tick (see
    /// [`crate::job_of`]), so that the job of its runs is the name its listeners hear.
    pub fn for_tick(name: &str, tick: &str, at_most: i64, unit_ms: i64) -> Result<LockParams> {
        validate_name(name)?;
        if let Some((job, its_tick)) = crate::split_tick(name) {
            return Err(Error::invalid(
                "lockName",
                format!(
                    "lockName '{name}' ends in a tick ('{its_tick}'): give the job's name alone, \
                     and its tick as the tick (lockName '{job}')"
                ),
            ));
        }
        if tick.is_empty() || tick.len() > MAX_TICK_BYTES {
            return Err(Error::invalid(
                "tick",
                format!(
                    "tick must be 1 to {MAX_TICK_BYTES} bytes of UTF-8, got {}",
                    tick.len()
                ),
            ));
        }
        if let Some((at, c)) = tick
            .char_indices()
            .find(|(_, c)| c.is_control() || *c == '@')
        {
            return Err(Error::invalid(
                "tick",
                format!(
                    "tick must not contain '@' or control characters; found U+{:04X} at byte {at}",
                    c as u32
                ),
            ));
        }
        let mut params = LockParams::new(&format!("{name}@{tick}"), at_most, at_most, unit_ms)?;
        params.tick = true;
        params.job_end = name.len();
        Ok(params)
    }

    pub fn from_secs(name: &str, at_most: i64, at_least: i64) -> Result<LockParams> {
        LockParams::new(name, at_most, at_least, 1000)
    }

    pub fn from_millis(name: &str, at_most: i64, at_least: i64) -> Result<LockParams> {
        LockParams::new(name, at_most, at_least, 1)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The job the run is recorded under (see [`crate::job_of`]).
    pub fn job(&self) -> &str {
        &self.name[..self.job_end]
    }

    pub fn at_most(&self) -> Duration {
        Duration::from_millis(self.at_most_ms)
    }

    pub fn at_least(&self) -> Duration {
        Duration::from_millis(self.at_least_ms)
    }
}

pub(crate) fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::invalid("lockName", "lockName must not be empty"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::invalid(
            "lockName",
            format!(
                "lockName is {} bytes of UTF-8; the maximum is {MAX_NAME_BYTES}",
                name.len()
            ),
        ));
    }
    if let Some((at, c)) = name.char_indices().find(|(_, c)| c.is_control()) {
        return Err(Error::invalid(
            "lockName",
            format!(
                "lockName must not contain control characters; found U+{:04X} at byte {at}",
                c as u32
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(result: Result<LockParams>) -> (&'static str, String) {
        match result {
            Err(Error::InvalidArgument { arg, message }) => (arg, message),
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    #[test]
    fn valid_params() {
        let p = LockParams::from_secs("nightly report 2026-11-30 — ü", 600, 30).unwrap();
        assert_eq!(p.at_most(), Duration::from_secs(600));
        assert_eq!(p.at_least(), Duration::from_secs(30));
        let p = LockParams::from_millis("x", 1, 1).unwrap();
        assert_eq!(p.at_least(), Duration::from_millis(1));
        assert!(LockParams::from_secs(&"n".repeat(MAX_NAME_BYTES), 1, 0).is_ok());
    }

    #[test]
    fn invalid_params_name_the_argument_and_value() {
        let cases = [
            (
                LockParams::from_secs("", 10, 0),
                "lockName",
                "must not be empty",
            ),
            (
                LockParams::from_secs(&"n".repeat(MAX_NAME_BYTES + 1), 10, 0),
                "lockName",
                "513 bytes",
            ),
            (
                LockParams::from_secs("a\nb", 10, 0),
                "lockName",
                "U+000A at byte 1",
            ),
            (LockParams::from_secs("a\0", 10, 0), "lockName", "U+0000"),
            (
                LockParams::from_secs("x", 0, 0),
                "atMost",
                "positive, got 0 s",
            ),
            (LockParams::from_secs("x", -5, 0), "atMost", "got -5 s"),
            (
                LockParams::from_millis("x", 10, -1),
                "atLeast",
                "negative, got -1 ms",
            ),
            (
                LockParams::from_secs("x", 5, 10),
                "atLeast",
                "atLeast (10 s) must not exceed atMost (5 s)",
            ),
            (
                LockParams::from_secs("x", i64::MAX, 0),
                "atMost",
                "overflows",
            ),
            (
                LockParams::from_secs("x", 10, i64::MAX),
                "atLeast",
                "overflows",
            ),
            (
                LockParams::from_millis("x", i64::MAX, 0),
                "atMost",
                "beyond what Redis can expire",
            ),
        ];
        for (result, arg, fragment) in cases {
            let (got_arg, message) = invalid(result);
            assert_eq!(got_arg, arg, "{message}");
            assert!(message.contains(fragment), "{message}");
        }
    }
}
