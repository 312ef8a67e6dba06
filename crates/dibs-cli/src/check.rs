//! `dibs check`: whether a job ran to success within a window, for cron and monitoring.

use std::time::Duration;

use dibs::{Error, Run, Verdict};

use crate::cli::CheckArgs;
use crate::connect::locker;
use crate::output::{evicted, human, instance, subject, task_word, unix_ms, utc};
use crate::EX_INCOMPLETE;

/// 0 when it ran to success within the window, 1 when it did not, [`EX_INCOMPLETE`] when the
/// history cannot tell.
pub fn check(args: CheckArgs) -> Result<u8, Error> {
    let CheckArgs { conn, job, within } = args;
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
