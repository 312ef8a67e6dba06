use super::*;
use crate::fleet::Matched;
use crate::history::{Ended, TaskResult};

fn run(at: u64, task: TaskResult) -> Run {
    Run {
        recorded_at_unix_ms: at,
        name: "job".into(),
        host: "h".into(),
        pid: 1,
        instance: None,
        started_at_unix_ms: at,
        duration_ms: 0,
        at_least_ms: 0,
        fence: 1,
        ended: Ended::Released,
        task: Some(task),
        forced_by: None,
        catch_up: false,
    }
}

fn history(runs: Vec<Run>, since: u64) -> History {
    History {
        matched: Matched::Job,
        runs,
        complete_since_unix_ms: since,
        evicted_at_unix_ms: None,
        job_evicted_at_unix_ms: None,
    }
}

#[test]
fn a_success_in_the_window_proves_it_ran_and_its_absence_proves_only_what_is_complete() {
    let hour = Duration::from_secs(3600);
    let now = 10 * 3_600_000;
    let ok = history(vec![run(now - 1_000, TaskResult::Succeeded)], 0);
    assert!(matches!(
        ok.verdict("job", now, &within(hour)),
        Verdict::Ran(_)
    ));
    let old = history(vec![run(now - 2 * 3_600_000, TaskResult::Succeeded)], 0);
    assert!(matches!(
        old.verdict("job", now, &within(hour)),
        Verdict::Overdue { .. }
    ));
    // Complete only for the last 30 minutes: a success of 50 minutes ago may be missing.
    let failed = history(vec![run(now - 1_000, TaskResult::Failed)], now - 1_800_000);
    assert!(matches!(
        failed.verdict("job", now, &within(hour)),
        Verdict::Unknown { .. }
    ));
    assert!(matches!(
        failed.verdict("job", now, &within(Duration::from_secs(600))),
        Verdict::Overdue { .. }
    ));
    let nothing = history(vec![], now - 1_800_000);
    assert!(matches!(
        nothing.verdict("job", now, &within(hour)),
        Verdict::Unknown { .. }
    ));
}

fn held(name: &str, acquired_at: u64) -> HeldLock {
    HeldLock {
        name: name.into(),
        state: crate::LockState {
            remaining_ms: Some(1_000),
            holder: Some(crate::Holder {
                host: "h".into(),
                pid: 1,
                acquired_at_unix_ms: acquired_at,
            }),
        },
        token: None,
    }
}

#[test]
fn each_rule_has_its_outcome_and_the_worst_wins() {
    let hour = Duration::from_secs(3600);
    let now = 10 * 3_600_000;
    let minute = Duration::from_secs(60);
    let mut quick = run(now - 1_000, TaskResult::Succeeded);
    quick.duration_ms = 200;
    let ok = history(vec![quick], 0);
    let off = Rules::default();
    assert_eq!(
        judge_with(&ok, &[], true, now, hour, &off).standing(),
        Standing::Ok
    );
    let min = Rules {
        min_duration: Some(Duration::from_secs(1)),
        ..off
    };
    assert_eq!(
        judge_with(&ok, &[], true, now, hour, &min).standing(),
        Standing::Suspect
    );
    // Running for 2 minutes: too long past a 1-minute maximum, whatever else holds.
    let running = [held("job", now - 120_000)];
    let max = Rules {
        max_duration: Some(minute),
        ..min
    };
    assert_eq!(
        judge_with(&ok, &running, true, now, hour, &max).standing(),
        Standing::TooLong
    );
    // No success in the window: overdue, unless a run started within the grace runs now.
    let late = history(vec![run(now - 2 * 3_600_000, TaskResult::Succeeded)], 0);
    assert_eq!(
        judge_with(&late, &running, true, now, hour, &off).standing(),
        Standing::Overdue
    );
    let graced = |secs| Rules {
        grace_after_start: Some(Duration::from_secs(secs)),
        ..off
    };
    assert_eq!(
        judge_with(&late, &running, true, now, hour, &graced(300)).standing(),
        Standing::Running
    );
    assert_eq!(
        judge_with(&late, &running, true, now, hour, &graced(60)).standing(),
        Standing::Overdue
    );
}

#[test]
fn a_scan_cut_short_leaves_unproven_what_a_missing_run_could_change() {
    let hour = Duration::from_secs(3600);
    let now = 10 * 3_600_000;
    let minute = Duration::from_secs(60);
    let ok = history(vec![run(now - 1_000, TaskResult::Succeeded)], 0);
    let late = history(vec![run(now - 2 * 3_600_000, TaskResult::Succeeded)], 0);
    let max = Rules {
        max_duration: Some(minute),
        ..Rules::default()
    };
    let grace = Rules {
        grace_after_start: Some(minute),
        ..Rules::default()
    };
    let judged = |h: &History, running: &[HeldLock], rules: &Rules| {
        let j = judge_with(h, running, false, now, hour, rules);
        (j.standing(), j.unproven)
    };
    // Ok, but a run too long may be missing.
    assert_eq!(
        judged(&ok, &[], &max),
        (Standing::Unknown, Some(Unproven::TooLong))
    );
    // Overdue, but a run that excuses it may be missing.
    assert_eq!(
        judged(&late, &[], &grace),
        (Standing::Unknown, Some(Unproven::Starting))
    );
    // What was found settles it: a run too long, a run within its grace (as for no rule
    // that needs the runs).
    let long = [held("job", now - 120_000)];
    assert_eq!(judged(&ok, &long, &max), (Standing::TooLong, None));
    let starting = [held("job", now - 1_000)];
    assert_eq!(judged(&late, &starting, &grace), (Standing::Running, None));
    // Running within its grace, but a run too long may be missing.
    let both = Rules {
        max_duration: Some(Duration::from_secs(3600)),
        ..grace
    };
    assert_eq!(
        judged(&late, &starting, &both),
        (Standing::Unknown, Some(Unproven::TooLong))
    );
    assert_eq!(judged(&late, &[], &max), (Standing::Overdue, None));
    assert_eq!(judged(&ok, &[], &Rules::default()), (Standing::Ok, None));
    let min = Rules {
        min_duration: Some(Duration::from_secs(1)),
        ..max
    };
    assert_eq!(judged(&ok, &[], &min), (Standing::Suspect, None));
}

fn within(window: Duration) -> Question {
    Question {
        within: Some(window),
        ..Question::default()
    }
}

/// The judge, as `dibs check` asks it: a window and rules.
fn judge_with<'h>(
    history: &'h History,
    running: &'h [HeldLock],
    all_running: bool,
    now: u64,
    window: Duration,
    rules: &Rules,
) -> Judgement<'h> {
    let question = Question {
        rules: *rules,
        ..within(window)
    };
    judge("job", history, running, all_running, None, now, &question)
}

#[test]
fn the_starters_rules_are_the_judges_a_lock_kept_for_at_least_a_job_not_yet_due_a_run_that_holds_its_lock(
) {
    let hour = Duration::from_secs(3600);
    let now = 10 * 3_600_000;
    // A success 70 minutes ago whose lock was kept 40 minutes more (atLeast 41 min, 1 min run):
    // free 30 minutes ago, so within the hour for its own lock, not for a tick's.
    let mut kept = run(now - 70 * 60_000, TaskResult::Succeeded);
    (kept.at_least_ms, kept.duration_ms) = (41 * 60_000, 60_000);
    let history_of = |run: Run| history(vec![run], 0);
    let own = history_of(kept.clone());
    assert!(matches!(
        own.verdict("job", now, &within(hour)),
        Verdict::Ran(_)
    ));
    kept.name = "job@2026-12-07".into();
    let tick = history_of(kept);
    assert!(matches!(
        tick.verdict("job", now, &within(hour)),
        Verdict::Overdue { .. }
    ));

    // Nothing recorded, expected only since 10 minutes ago: awaited, not late; since 2 hours
    // ago: late.
    let nothing = history(vec![], 0);
    let since = |ago: u64| Question {
        expected_since_unix_ms: Some(now - ago),
        ..within(hour)
    };
    let verdict = nothing.verdict("job", now, &since(600_000));
    assert!(matches!(verdict, Verdict::Awaited { .. }));
    assert!(matches!(
        nothing.verdict("job", now, &since(7_200_000)),
        Verdict::Overdue { .. }
    ));

    // Late, and a run holds the job's own lock (for 3 hours): excused where held excuses.
    let late = history(vec![run(now - 2 * 3_600_000, TaskResult::Succeeded)], 0);
    let holding = held("job", now - 3 * 3_600_000);
    let question = Question {
        held_excuses: true,
        ..within(hour)
    };
    let judged = judge("job", &late, &[], true, Some(&holding), now, &question);
    assert_eq!(
        (judged.standing(), judged.overdue()),
        (Standing::Running, false)
    );
    let judged = judge("job", &late, &[], true, Some(&holding), now, &within(hour));
    assert_eq!(
        (judged.standing(), judged.overdue()),
        (Standing::Overdue, true)
    );
    // A grace after start decides instead: 3 hours is past a 5-minute grace.
    let graced = Question {
        rules: Rules {
            grace_after_start: Some(Duration::from_secs(300)),
            ..Rules::default()
        },
        ..question
    };
    let running = [held("job", now - 3 * 3_600_000)];
    let judged = judge("job", &late, &running, true, Some(&holding), now, &graced);
    assert_eq!(judged.standing(), Standing::Overdue);
}

#[test]
fn an_asker_whose_runs_are_not_recorded_proves_no_absence_and_says_why_first() {
    let hour = Duration::from_secs(3600);
    let now = 10 * 3_600_000;
    let unrecorded = Question {
        runs_unrecorded: true,
        ..within(hour)
    };
    let late = history(vec![run(now - 2 * 3_600_000, TaskResult::Succeeded)], 0);
    let judged = judge("job", &late, &[], true, None, now, &unrecorded);
    assert_eq!(
        (judged.standing(), judged.overdue()),
        (Standing::Unknown, false)
    );
    assert_eq!(judged.unknown(&late), Some(Unknown::Unrecorded));
    assert!(Unknown::Unrecorded.text(&late).contains("history is false"));
    // A success within the window proves itself; a too-short one may not be the last.
    let mut quick = run(now - 1_000, TaskResult::Succeeded);
    quick.duration_ms = 10;
    let ok = history(vec![quick], 0);
    assert_eq!(
        judge("job", &ok, &[], true, None, now, &unrecorded).standing(),
        Standing::Ok
    );
    let min = Question {
        rules: Rules {
            min_duration: Some(Duration::from_secs(1)),
            ..Rules::default()
        },
        ..unrecorded
    };
    let judged = judge("job", &ok, &[], true, None, now, &min);
    assert_eq!(
        (judged.standing(), judged.proven_suspect()),
        (Standing::Unknown, None)
    );
    // No window asked: the rules alone, on the last success whatever its age.
    let mut old = run(now - 9 * 3_600_000, TaskResult::Succeeded);
    old.duration_ms = 10;
    let old = history(vec![old], 0);
    let rules_only = Question {
        within: None,
        runs_unrecorded: false,
        ..min
    };
    let judged = judge("job", &old, &[], true, None, now, &rules_only);
    assert_eq!(judged.standing(), Standing::Suspect);
    assert_eq!(
        judge("job", &late, &[], true, None, now, &Question::default()).standing(),
        Standing::Ok
    );
}

#[test]
fn an_unknown_says_which_run_was_not_seen_or_since_when_the_history_holds_every_run() {
    let hour = Duration::from_secs(3600);
    let now = 10 * 3_600_000;
    let mut unended = run(now - 1_000, TaskResult::Unknown);
    unended.ended = Ended::Unended;
    let unseen = history(vec![unended], now - 1_000 + 1);
    let judged = judge("job", &unseen, &[], true, None, now, &within(hour));
    let why = judged.unknown(&unseen).expect("unknown");
    assert!(matches!(why, Unknown::Unseen(_)));
    assert!(
        why.text(&unseen).contains("never recorded"),
        "{}",
        why.text(&unseen)
    );
    let mut trimmed = history(vec![], now - 1_800_000);
    trimmed.job_evicted_at_unix_ms = Some(now - 60_000);
    let judged = judge("job", &trimmed, &[], true, None, now, &within(hour));
    let text = judged.unknown(&trimmed).expect("unknown").text(&trimmed);
    assert!(
        text.contains("only since 1970-01-01 09:30:00 UTC"),
        "{text}"
    );
    assert!(
        text.contains("its own runs were dropped from the history"),
        "{text}"
    );
}

#[test]
fn an_expected_job_is_late_after_its_period_and_half_of_it_at_most_an_hour() {
    let minutes = |m: u64| Duration::from_secs(m * 60);
    assert_eq!(expected_window(minutes(10), None), Ok(minutes(15)));
    assert_eq!(
        expected_window(minutes(24 * 60), None),
        Ok(minutes(25 * 60))
    );
    assert_eq!(
        expected_window(minutes(10), Some(minutes(1))),
        Ok(minutes(11))
    );
    let zero = expected_window(Duration::ZERO, None).unwrap_err();
    assert!(
        matches!(zero, Error::InvalidArgument { arg: "period", .. }),
        "{zero:?}"
    );
}

/// Found by the attack on the one judge: each answer below was wrong before.
#[test]
fn a_forced_release_a_later_untold_run_and_a_holder_ahead_in_time_leave_nothing_proven_wrongly() {
    let now = 10 * 3_600_000;
    let second = Duration::from_secs(1);
    // A success whose lock was kept for an hour, then released by force a minute later: free
    // since the forced release, so late after a minute's window.
    let mut kept = run(now - 120_000, TaskResult::Succeeded);
    kept.at_least_ms = 3_600_000;
    let mut forced = run(now - 60_000, TaskResult::Unknown);
    forced.ended = Ended::Forced;
    forced.task = None;
    let released = history(vec![forced, kept.clone()], 0);
    let minute = within(Duration::from_secs(59));
    assert!(matches!(
        released.verdict("job", now, &minute),
        Verdict::Overdue { .. }
    ));
    assert!(matches!(
        history(vec![kept], 0).verdict("job", now, &minute),
        Verdict::Ran(_)
    ));

    // A short success, then a run whose outcome was not told: the short one may not be the
    // last success: unknown, not suspect.
    let short = run(now - 2_000, TaskResult::Succeeded);
    let mut untold = run(now - 1_000, TaskResult::Unknown);
    untold.duration_ms = 5_000;
    let h = history(vec![untold, short], now - 1_000 + 1);
    let min = Question {
        rules: Rules {
            min_duration: Some(second),
            ..Rules::default()
        },
        within: None,
        ..Question::default()
    };
    let judged = judge("job", &h, &[], true, None, now, &min);
    assert_eq!(
        (judged.standing(), judged.proven_suspect()),
        (Standing::Unknown, None)
    );
    assert!(matches!(judged.unknown(&h), Some(Unknown::Unseen(r)) if r.duration_ms == 5_000));

    // A run whose holder's clock is a year ahead: its age cannot be told, so neither a maximum
    // duration nor a grace after start is settled by it.
    let ahead = [held("job", now + 365 * 24 * 3_600_000)];
    assert_eq!(held_for(&ahead[0], now), None);
    let ok = history(vec![run(now - 1_000, TaskResult::Succeeded)], 0);
    let max = Question {
        rules: Rules {
            max_duration: Some(second),
            ..Rules::default()
        },
        ..within(Duration::from_secs(3600))
    };
    let judged = judge("job", &ok, &ahead, true, None, now, &max);
    assert_eq!(judged.unproven, Some(Unproven::TooLong));
    let late = history(vec![run(now - 7_200_000, TaskResult::Succeeded)], 0);
    let grace = Question {
        rules: Rules {
            grace_after_start: Some(Duration::from_secs(60)),
            ..Rules::default()
        },
        ..within(Duration::from_secs(3600))
    };
    let judged = judge("job", &late, &ahead, true, None, now, &grace);
    assert_eq!(
        (judged.standing(), judged.unproven),
        (Standing::Unknown, Some(Unproven::Starting))
    );
    // Within the clocks' allowed skew, a holder just ahead is a run just started.
    assert_eq!(
        held_for(&held("job", now + 1_000), now),
        Some(Duration::ZERO)
    );
}

#[test]
fn a_window_is_one_of_within_or_every_and_a_grace_needs_a_period() {
    let hour = Some(Duration::from_secs(3600));
    let arg = |r: Result<Option<Duration>>| match r {
        Err(Error::InvalidArgument { arg, .. }) => arg,
        other => panic!("{other:?}"),
    };
    assert_eq!(arg(window(hour, hour, None)), "within");
    assert_eq!(arg(window(hour, None, hour)), "grace");
    assert_eq!(arg(window(None, None, hour)), "grace");
    assert_eq!(
        window(None, hour, None),
        Ok(Some(Duration::from_secs(5400)))
    );
    assert_eq!(window(hour, None, None), Ok(hour));
    let since_without_window = Question {
        expected_since_unix_ms: Some(1),
        ..Question::default()
    };
    let Err(Error::InvalidArgument { arg, .. }) = since_without_window.validate() else {
        panic!()
    };
    assert_eq!(arg, "expectedSince");
    // A minimum above the maximum: no run could pass both (found by the attack).
    let contradictory = Question {
        rules: Rules {
            min_duration: Some(Duration::from_secs(7200)),
            max_duration: Some(Duration::from_secs(3600)),
            ..Rules::default()
        },
        ..within(Duration::from_secs(3600))
    };
    let Err(Error::InvalidArgument { arg, .. }) = contradictory.validate() else {
        panic!()
    };
    assert_eq!(arg, "minDuration");
}
