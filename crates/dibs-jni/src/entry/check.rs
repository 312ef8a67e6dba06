//! The dead-man's switch for Java: the core's one judge of a job (`dibs_core::Locker::check`),
//! its answer as a `dibs.Border.Judged`.

use jni::objects::{JClass, JString};
use jni::sys::{jlong, jobject};
use jni::JNIEnv;

use super::duration;
use super::fleet::{held, held_listing, history_of, millis, or_none, run_of};
use super::read_string;
use crate::border::{Judged, Standing, Warning};
use crate::guard::entry;
use crate::handles;

use dibs_core::{window, Question, Rules, RUNS_SHOWN};

/// Checks the job `job`: a window (`withinMs`), or a period (`periodMs`, with `graceMs`) whose
/// job a run holding its own lock excuses, or neither (the rules alone); durations in ms, -1 for
/// none.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the question's facts, each a Java long
pub extern "system" fn Java_dibs_NativeLib_check<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    job: JString<'l>,
    within_ms: jlong,
    period_ms: jlong,
    grace_ms: jlong,
    expected_since_ms: jlong,
    min_duration_ms: jlong,
    max_duration_ms: jlong,
    grace_after_start_ms: jlong,
    budget_ms: jlong,
) -> jobject {
    entry(&mut env, |env| {
        let job = read_string(env, &job, "job")?;
        let locker = handles::locker(handle)?;
        let within = window(
            duration(within_ms, "within")?,
            duration(period_ms, "period")?,
            duration(grace_ms, "grace")?,
        )?;
        let question = Question {
            within,
            rules: Rules {
                min_duration: duration(min_duration_ms, "minDuration")?,
                max_duration: duration(max_duration_ms, "maxDuration")?,
                grace_after_start: duration(grace_after_start_ms, "graceAfterStart")?,
            },
            expected_since_unix_ms: u64::try_from(expected_since_ms).ok(),
            held_excuses: period_ms != -1,
            runs_unrecorded: !locker.keeps_history(),
        };
        let budget = super::fleet::budget(budget_ms)?;
        let checked = locker.check(&job, &question, budget)?;
        let judgement = checked.judgement();
        let answer = Judged {
            standing: match judgement.standing() {
                dibs_core::Standing::Ok => Standing::Ok,
                dibs_core::Standing::Overdue => Standing::Overdue,
                dibs_core::Standing::Suspect => Standing::Suspect,
                dibs_core::Standing::Unknown => Standing::Unknown,
                dibs_core::Standing::Running => Standing::Running,
                dibs_core::Standing::TooLong => Standing::TooLong,
            },
            overdue: judgement.overdue(),
            suspect: judgement.proven_suspect().is_some(),
            too_long: !judgement.too_long.is_empty(),
            unknown: Warning(checked.unknown_text()),
            window_ms: or_none(within.map(|w| u64::try_from(w.as_millis()).unwrap_or(u64::MAX))),
            read_at_ms: millis(checked.now_unix_ms),
            last_success: judgement.verdict.last_success().cloned().map(run_of),
            history: {
                let mut history = checked.history.clone();
                history.runs.truncate(RUNS_SHOWN);
                history_of(job, history)
            },
            held: checked.held.clone().map(held),
            running: checked.running.clone().map(held_listing),
        };
        Ok(answer.new_java(env)?.into_raw())
    })
}
