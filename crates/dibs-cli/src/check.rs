//! `dibs check`: whether a job ran to success within a window, for cron and monitoring.

use std::time::Duration;

use dibs::{
    held_for, window, Ended, Error, HeldLock, Question, Rules, Run, Standing, Unproven, Verdict,
};

use crate::cli::CheckArgs;
use crate::connect::locker;
use crate::output::{evicted, human, instance, say, subject, task_word, unix_ms, utc};
use crate::EX_INCOMPLETE;

/// A success shorter than `--min-duration`.
const EX_SUSPECT: u8 = 4;
/// A run holding its lock longer than `--max-duration`.
const EX_TOO_LONG: u8 = 5;

/// 0 when it ran to success within the window, 1 when it did not, [`EX_INCOMPLETE`] when the
/// history cannot tell; [`EX_SUSPECT`] and [`EX_TOO_LONG`] by the further rules.
pub fn check(args: CheckArgs) -> Result<u8, Error> {
    let CheckArgs {
        conn,
        job,
        within,
        every,
        grace,
        expected_for,
        min_duration,
        max_duration,
        grace_after_start,
        budget,
    } = args;
    let within = window(within, every, grace)?.expect("clap requires --within or --every");
    let question = Question {
        within: Some(within),
        rules: Rules {
            min_duration,
            max_duration,
            grace_after_start,
        },
        expected_since_unix_ms: expected_for
            .map(|d| unix_ms().saturating_sub(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))),
        held_excuses: every.is_some(),
        runs_unrecorded: false,
    };
    let checked = locker(&conn, false)?.check(&job, &question, budget)?;
    let (history, running) = (&checked.history, &checked.running);
    let now = checked.now_unix_ms;
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
    let judgement = checked.judgement();
    let partial = match running {
        Some(r) if !r.complete => format!(
            "; the scan for its running locks was partial (--budget {}): scanned about {} of {} keys",
            human(budget),
            r.scanned,
            r.keys
        ),
        _ => String::new(),
    };
    let held_line = |lock: &HeldLock| {
        let age = held_for(lock, now).map_or_else(|| "?".to_owned(), human);
        match &lock.state.holder {
            Some(h) => format!("{} held for {age} by {} pid {}", lock.name, h.host, h.pid),
            None => format!("{} held for {age}", lock.name),
        }
    };
    let standing = judgement.standing();
    if let Standing::TooLong = standing {
        let lines: Vec<String> = judgement.too_long.iter().map(|l| held_line(l)).collect();
        say!(
            "too long: {subject} has a run holding its lock longer than {}: {}{partial}",
            human(max_duration.unwrap_or_default()),
            lines.join(", ")
        );
        return Ok(EX_TOO_LONG);
    }
    if let Some(unproven) = judgement.unproven {
        let (found, missing) = match unproven {
            Unproven::TooLong => (
                match judgement.excused_by {
                    Some(lock) => format!(
                        "a run started within the grace after start runs now: {}",
                        held_line(lock)
                    ),
                    None => judgement.verdict.last_success().map_or_else(
                        || "no success of it is recorded".to_owned(),
                        |run| format!("it ran {} ago on {}", ago(run), instance(run)),
                    ),
                },
                format!(
                    "a run holding its lock longer than --max-duration {}",
                    human(max_duration.unwrap_or_default())
                ),
            ),
            Unproven::Starting => (
                format!(
                    "it has not run to success within {window}; {}",
                    last(judgement.verdict.last_success())
                ),
                format!(
                    "a run started within the grace after start ({})",
                    human(grace_after_start.unwrap_or_default())
                ),
            ),
        };
        say!("unknown: {subject}: {found}, but {missing} may be missing{partial}");
        return Ok(EX_INCOMPLETE);
    }
    if let (Some(run), Some(success)) = (judgement.unseen_after, judgement.suspect) {
        say!(
            "unknown: {subject}'s success of {} ago took {}, less than --min-duration {}, but how \
             its later run of {} ago on {} ({}) ended is not known ({}): it may have been a \
             success long enough{partial}",
            ago(success),
            human(Duration::from_millis(success.duration_ms)),
            human(min_duration.unwrap_or_default()),
            ago(run),
            instance(run),
            run.name,
            dibs::unseen_why(run)
        );
        return Ok(EX_INCOMPLETE);
    }
    if let (Standing::Running, Some(lock)) = (standing, judgement.excused_by) {
        let excuse = match grace_after_start {
            Some(grace) => format!(
                "a run started within the grace after start ({})",
                human(grace)
            ),
            None => "a run holding its own lock".to_owned(),
        };
        say!(
            "running: {subject} has not run to success within {window}, but {excuse} runs now: \
             {}; {}{partial}",
            held_line(lock),
            last(judgement.verdict.last_success())
        );
        return Ok(0);
    }
    match judgement.verdict {
        Verdict::Ran(run) if standing == Standing::Suspect => {
            say!(
                "suspect: {subject} ran {} ago on {} ({}), but its task took {}, less than \
                 --min-duration {}: it may not have done its work",
                ago(run),
                instance(run),
                run.name,
                human(Duration::from_millis(run.duration_ms)),
                human(min_duration.unwrap_or_default())
            );
            Ok(EX_SUSPECT)
        }
        Verdict::Awaited { latest: newest } => {
            say!(
                "ok: {subject} is not due yet: expected for less than {window}, and no success of \
                 it is recorded{}",
                latest(newest)
            );
            Ok(0)
        }
        // Not asked here: a window always.
        Verdict::Unwatched { .. } => unreachable!("{judgement:?}"),
        Verdict::Ran(run) => {
            say!(
                "ok: {subject} ran {} ago on {} ({}, lock {}){partial}",
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
            say!(
                "overdue: {subject} has not run to success within {window}: {}{}{partial}",
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
            // The newest run whose outcome dibs did not see, where the history cannot tell past
            // it (see `History::complete_since_unix_ms`).
            if let Some(run) = history.unseen() {
                say!(
                    "unknown: no success of {subject} is recorded within {window}, but how its \
                     run of {} ago on {} ({}) ended is not known: {}; {}{}{partial}",
                    ago(run),
                    instance(run),
                    run.name,
                    if run.ended == Ended::Unended {
                        "its end was never recorded (its holder died, or its release failed)"
                    } else {
                        "its task's outcome was not told to dibs"
                    },
                    last(last_success),
                    latest(newest)
                );
                return Ok(EX_INCOMPLETE);
            }
            say!(
                "unknown: no success of {subject} is recorded within {window}, but the \
                 history holds every run only since {} UTC{}: an earlier one may be \
                 missing from it; {}{}{partial}",
                utc(complete_since_unix_ms),
                evicted(history),
                last(last_success),
                latest(newest)
            );
            Ok(EX_INCOMPLETE)
        }
    }
}
