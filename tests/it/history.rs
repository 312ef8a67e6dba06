//! The run history against a real redis-server: what each ending records, what a forced
//! release records, and the bound on memory for per-tick names.

use crate::common;

use std::thread;
use std::time::Duration;

use common::RedisServer;
use dibs::{
    ConnSpec, Ended, ForcedRelease, LockParams, Locker, Matched, SpecValue, TaskResult, Verdict,
    HISTORY_JOBS, HISTORY_LENGTH, SCAN_BUDGET,
};
use redis::Commands;

fn locker_with(server: &RedisServer, extra: &[(&str, SpecValue)]) -> Locker {
    let mut entries = vec![("uri".to_owned(), SpecValue::Str(server.uri()))];
    entries.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
    Locker::new(ConnSpec::from_map(&entries).unwrap()).unwrap()
}

fn ms(name: &str, at_most: i64, at_least: i64) -> LockParams {
    LockParams::from_millis(name, at_most, at_least).unwrap()
}

#[test]
fn each_release_records_its_run_and_how_it_ended() {
    let server = RedisServer::start();
    let a = locker_with(&server, &[("instance-id", SpecValue::Str("pod-a".into()))]);
    let b = locker_with(&server, &[]);
    // Loads the scripts (a first EVALSHA answers NOSCRIPT), recording nothing.
    let quiet = locker_with(&server, &[("history", SpecValue::Bool(false))]);
    let _ = quiet
        .acquire(&ms("warm-up", 1_000, 0))
        .unwrap()
        .won()
        .unwrap()
        .release();
    let evals_before = server.calls("evalsha") + server.calls("eval");

    // A run that succeeded and outlived atLeast: released.
    let lease = a
        .acquire(&ms("report-2026-12-01", 10_000, 0))
        .unwrap()
        .won()
        .unwrap();
    let fence = lease.fence();
    // Another instance skips meanwhile: a skip records nothing.
    assert!(b
        .acquire(&ms("report-2026-12-01", 10_000, 0))
        .unwrap()
        .won()
        .is_none());
    assert_eq!(lease.release().ended, Ended::Released);
    // A run whose task failed, kept for the rest of atLeast.
    let lease = b
        .acquire(&ms("report-2026-12-02", 10_000, 5_000))
        .unwrap()
        .won()
        .unwrap();
    let ending = lease.release_after(TaskResult::Failed);
    assert!(matches!(ending.ended, Ended::KeptForAtLeast));
    // A run that outlived atMost: the lock was gone at release.
    let lease = a
        .acquire(&ms("report-2026-12-03", 100, 0))
        .unwrap()
        .won()
        .unwrap();
    thread::sleep(Duration::from_millis(300));
    assert_eq!(lease.release().ended, Ended::NoLongerOurs);
    // One script call per acquire and one per release; the 3 records were made by them (the
    // commands a script runs count in commandstats too).
    let evals = server.calls("evalsha") + server.calls("eval") - evals_before;
    assert_eq!(evals, 4 + 3, "3 acquires won, 1 skipped, 3 releases");
    // The first record's XADD NOMKSTREAM found no stream: a second XADD made it.
    assert_eq!(
        server.calls("xadd"),
        3 + 1,
        "one record per release, none per skip"
    );

    let runs = a.history("report", 10).unwrap().runs;
    assert_eq!(runs.len(), 3, "{runs:#?}");
    let (lost, failed, ok) = (&runs[0], &runs[1], &runs[2]);
    assert_eq!(ok.name, "report-2026-12-01");
    assert_eq!(ok.ended, Ended::Released);
    assert_eq!(ok.task, Some(TaskResult::Succeeded));
    assert!(ok.succeeded());
    assert_eq!(ok.instance.as_deref(), Some("pod-a"));
    assert_eq!(ok.pid, std::process::id());
    assert_eq!(ok.fence, fence);
    assert!(ok.started_at_unix_ms > 1_700_000_000_000);
    assert_eq!(failed.name, "report-2026-12-02");
    assert_eq!(failed.ended, Ended::KeptForAtLeast);
    assert_eq!(failed.task, Some(TaskResult::Failed));
    assert_eq!(failed.instance, None);
    assert_eq!(lost.ended, Ended::NoLongerOurs);
    assert!(lost.duration_ms >= 300, "{lost:?}");
    assert!(ok.recorded_at_unix_ms <= failed.recorded_at_unix_ms);

    let jobs = a.jobs(10, SCAN_BUDGET).unwrap().items;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0].name, "report");
    assert_eq!(jobs[0].last_recorded_unix_ms, lost.recorded_at_unix_ms);
}

#[test]
fn a_forced_release_deletes_only_the_token_shown_and_is_recorded() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    let lease = locker
        .acquire(&ms("sync", 60_000, 0))
        .unwrap()
        .won()
        .unwrap();
    let other = locker
        .acquire(&ms("other-job", 60_000, 0))
        .unwrap()
        .won()
        .unwrap();

    let held = locker.locks("*", 100, SCAN_BUDGET).unwrap().items;
    assert_eq!(
        held.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
        ["other-job", "sync"],
        "sorted by name; history keys are no locks"
    );
    let sync = &held[1];
    assert_eq!(sync.state.holder.as_ref().unwrap().pid, std::process::id());
    assert!(sync.state.remaining_ms.unwrap() > 50_000);
    let token = sync.token.clone().expect("dibs's value");
    assert!(lease.value().starts_with(&token));
    assert_eq!(
        locker.locks("syn?", 100, SCAN_BUDGET).unwrap().items.len(),
        1,
        "a glob over names"
    );

    // A wrong token (a lock that changed hands since it was listed) is left alone.
    let stale = uuid_like(&token);
    assert_eq!(
        locker.force_release("sync", &stale, "ops@test").unwrap(),
        ForcedRelease::OtherHolder
    );
    assert!(server.exists("dibs:sync"));
    assert_eq!(
        locker.force_release("sync", &token, "ops@test").unwrap(),
        ForcedRelease::Released
    );
    assert!(!server.exists("dibs:sync"));
    assert_eq!(
        locker.force_release("sync", &token, "ops@test").unwrap(),
        ForcedRelease::Free
    );
    // The holder's own release then finds the lock gone, and says so.
    assert_eq!(lease.release().ended, Ended::NoLongerOurs);
    let _ = other.release();

    let runs = locker.history("sync", 10).unwrap().runs;
    assert_eq!(runs.len(), 2, "{runs:#?}");
    assert_eq!(runs[0].ended, Ended::NoLongerOurs);
    let forced = &runs[1];
    assert_eq!(forced.ended, Ended::Forced);
    assert_eq!(forced.forced_by.as_deref(), Some("ops@test"));
    assert_eq!(forced.pid, std::process::id(), "the holder it found");
    assert_eq!(forced.task, None);
    assert!(!forced.succeeded());

    let bad = locker
        .force_release("sync", "not-a-token", "ops")
        .unwrap_err();
    assert!(
        matches!(bad, dibs::Error::InvalidArgument { arg: "token", .. }),
        "{bad}"
    );
    // Who forced it is validated like an instance id, before any I/O: a newline would forge a
    // row wherever the history is shown, a ';' another field (issue 43, item 6).
    for by in ["ops\nreport  ok", "ops;pod-9", "", &"x".repeat(129)] {
        let bad = locker.force_release("sync", &token, by).unwrap_err();
        assert!(
            matches!(bad, dibs::Error::InvalidArgument { arg: "by", .. }),
            "{by:?}: {bad}"
        );
    }
}

/// Another valid token: the same but one hex digit.
fn uuid_like(token: &str) -> String {
    let last = token.chars().last().unwrap();
    let swapped = if last == '0' { '1' } else { '0' };
    format!("{}{swapped}", &token[..35])
}

#[test]
fn ten_thousand_per_tick_names_leave_one_key_that_expires() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    for tick in 0..10_000u64 {
        let name = format!("tick-{}", 1_764_547_200 + tick);
        let lease = locker
            .acquire(&ms(&name, 60_000, 0))
            .unwrap()
            .won()
            .unwrap();
        let _ = lease.release();
    }
    let mut admin = server.admin();
    let keys: Vec<String> = admin.keys("*").unwrap();
    assert_eq!(
        keys.len(),
        2,
        "the job's stream and the index of jobs: {keys:?}"
    );
    for key in &keys {
        let ttl: i64 = admin.pttl(key).unwrap();
        assert!(ttl > 0, "{key:?} expires: {ttl}");
    }
    let length: u64 = redis::cmd("XLEN")
        .arg("dibs:\u{1f}{history}:tick")
        .query(&mut admin)
        .unwrap();
    // MAXLEN ~ trims whole radix-tree nodes (100 entries by default): at most one node more.
    assert!(
        (u64::from(HISTORY_LENGTH)..=u64::from(HISTORY_LENGTH) + 100).contains(&length),
        "{length}"
    );
    let memory: u64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg("dibs:\u{1f}{history}:tick")
        .query(&mut admin)
        .unwrap();
    eprintln!("10,000 per-tick runs: 1 key; the stream holds {length} entries in {memory} bytes");
    assert_eq!(
        locker.history("tick", 1).unwrap().runs[0].name,
        "tick-1764557199"
    );
}

/// Issue 29 (1): a name that does not roll up under a job is a job of its own, so 10,000 of them
/// (`order-0` to `order-9999`) would make 10,000 streams, each kept 40 days. At most about
/// `HISTORY_JOBS` keep one: a new job's stream drops the least recently recorded job's, and
/// marks it, so that a dropped history is never read as a job that did not run. A job that runs
/// among them (every 200 names here) is never the least recent, and keeps its history.
#[test]
fn ten_thousand_names_that_are_jobs_of_their_own_keep_at_most_history_jobs_streams() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    let mut admin = server.admin();
    let memory = |admin: &mut redis::Connection| -> u64 {
        let info: String = redis::cmd("INFO").arg("memory").query(admin).unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let before = memory(&mut admin);
    for n in 0..10_000 {
        let name = format!("order-{n}");
        let _ = locker
            .acquire(&ms(&name, 60_000, 0))
            .unwrap()
            .won()
            .unwrap()
            .release();
        if n % 200 == 0 {
            let _ = locker
                .acquire(&ms("nightly", 60_000, 0))
                .unwrap()
                .won()
                .unwrap()
                .release();
        }
    }
    let streams: Vec<String> = admin.keys("dibs:\u{1f}{history}:*").unwrap();
    let indexed: usize = admin.zcard("dibs:\u{1f}{history}").unwrap();
    let after = memory(&mut admin);
    eprintln!(
        "10,000 names of their own: {} streams, {indexed} in the index, {} KiB more memory",
        streams.len(),
        (after - before) / 1024
    );
    assert!(
        (HISTORY_JOBS - 10..=HISTORY_JOBS).contains(&streams.len()),
        "{} streams",
        streams.len()
    );
    assert!(indexed <= HISTORY_JOBS, "{indexed}");
    let keys: Vec<String> = admin.keys("*").unwrap();
    assert_eq!(
        keys.len(),
        streams.len() + 4,
        "the index, its jobs of one run, the eviction's mark and its jobs: {:?}",
        keys.iter()
            .filter(|k| !streams.contains(k))
            .collect::<Vec<_>>()
    );

    let nightly = locker.history("nightly", 100).unwrap();
    assert_eq!(nightly.matched, Matched::Job);
    assert_eq!(
        nightly.runs.len(),
        50,
        "every run of the job that runs among them"
    );
    let newest = locker.history("order-9999", 10).unwrap();
    assert_eq!(newest.runs.len(), 1);
    let dropped = locker.history("order-0", 10).unwrap();
    assert_eq!(dropped.matched, Matched::Nothing);
    assert!(dropped.evicted_at_unix_ms.is_some());
    // Its own eviction is remembered among the last HISTORY_JOBS: not the first's, a late one's.
    assert!(dropped.job_evicted_at_unix_ms.is_none(), "{dropped:?}");
    let late = locker.history("order-8500", 10).unwrap();
    assert!(late.job_evicted_at_unix_ms.is_some(), "{late:?}");
    let now = dropped.evicted_at_unix_ms.unwrap() + 1;
    assert!(
        matches!(
            dropped.verdict("order-0", now, &common::within(Duration::from_secs(3600))),
            Verdict::Unknown { .. }
        ),
        "a dropped history proves nothing: {dropped:?}"
    );
    assert!(matches!(
        newest.verdict(
            "order-9999",
            now,
            &common::within(Duration::from_secs(3600))
        ),
        Verdict::Ran(_)
    ));
}

#[test]
fn jobs_are_found_by_their_streams_the_most_recent_first() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    for name in ["alpha", "beta-2026-12-01", "gamma", "beta-2026-12-02"] {
        let _ = locker
            .acquire(&ms(name, 1_000, 0))
            .unwrap()
            .won()
            .unwrap()
            .release();
        thread::sleep(Duration::from_millis(5));
    }
    // A lock held now, and a key of another kind under the prefix, are no jobs.
    let _held = locker
        .acquire(&ms("held", 10_000, 0))
        .unwrap()
        .won()
        .unwrap();
    let _: () = server.admin().set("dibs:\u{1f}other", "x").unwrap();
    let jobs = locker.jobs(10, SCAN_BUDGET).unwrap().items;
    let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["beta", "gamma", "alpha"]);
    assert!(jobs[0].last_recorded_unix_ms >= jobs[1].last_recorded_unix_ms);
    assert_eq!(locker.jobs(1, SCAN_BUDGET).unwrap().items.len(), 1);
}

#[test]
fn history_off_writes_nothing() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[("history", SpecValue::Bool(false))]);
    let _ = locker
        .acquire(&ms("quiet", 1_000, 0))
        .unwrap()
        .won()
        .unwrap()
        .release();
    let keys: Vec<String> = server.admin().keys("*").unwrap();
    assert!(keys.is_empty(), "{keys:?}");
}

#[test]
fn a_server_that_refuses_the_history_still_releases_and_says_so_once() {
    let server = RedisServer::start();
    // An ACL user for locks only: no stream commands.
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("locks")
        .arg("on")
        .arg(">pw")
        .arg("~*")
        .arg("+@all")
        .arg("-@stream")
        .query(&mut server.admin())
        .unwrap();
    let uri = server.uri().replace("redis://", "redis://locks:pw@");
    let locker = Locker::new(ConnSpec::from_uri(&uri).unwrap()).unwrap();
    let first = locker
        .acquire(&ms("job", 10_000, 0))
        .unwrap()
        .won()
        .unwrap()
        .release();
    assert_eq!(first.ended, Ended::Released);
    let warning = first.warning().expect("said");
    assert!(warning.contains("could not be recorded"), "{warning}");
    assert!(warning.contains("'history' to false"), "{warning}");
    let second = locker
        .acquire(&ms("job", 10_000, 0))
        .unwrap()
        .won()
        .unwrap()
        .release();
    assert_eq!(second.ended, Ended::Released);
    assert_eq!(second.warning(), None, "said once");
    assert!(!server.exists("dibs:job"));
}

#[test]
fn an_instance_id_reads_back_as_written_and_one_with_a_semicolon_is_refused() {
    let server = RedisServer::start();
    // A `;` would split the record into other fields: the run of `report-2026-12-06` read back as
    // "forced by pod-7" under the name `;report-2026-12-06`, and `dibs check` called it overdue.
    let refused = ConnSpec::from_map(&[
        ("uri".to_owned(), SpecValue::Str(server.uri())),
        (
            "instance-id".to_owned(),
            SpecValue::Str("eu-west;pod-7".into()),
        ),
    ])
    .unwrap_err()
    .to_string();
    assert!(refused.contains("'instance-id'"), "{refused}");
    assert!(refused.contains("';'"), "{refused}");

    // Everything else an operator may put in a pod's name reads back as written.
    let id = "eu-west/pod-7 @1:2,=é";
    let locker = locker_with(&server, &[("instance-id", SpecValue::Str(id.into()))]);
    let lease = locker
        .acquire(&ms("report-2026-12-06", 10_000, 0))
        .unwrap()
        .won()
        .unwrap();
    assert_eq!(lease.release().ended, Ended::Released);
    let history = locker.history("report-2026-12-06", 10).unwrap();
    let run = &history.runs[0];
    assert_eq!(run.instance.as_deref(), Some(id));
    assert_eq!(run.name, "report-2026-12-06");
    assert_eq!(run.ended, Ended::Released);
    assert!(run.succeeded(), "{run:?}");
    assert!(matches!(
        history.verdict(
            "report-2026-12-06",
            run.recorded_at_unix_ms,
            &common::within(Duration::from_secs(60))
        ),
        Verdict::Ran(_)
    ));
}

/// What a daily job's check answers: `(proven overdue, unknown)` over the last 26 hours.
fn daily_check(locker: &Locker, now: u64) -> (bool, bool, dibs::History) {
    let history = locker.history("nightly-report", 100).unwrap();
    let verdict = history.verdict(
        "nightly-report",
        now,
        &common::within(Duration::from_secs(26 * 3600)),
    );
    let answer = (
        matches!(verdict, Verdict::Overdue { .. }),
        matches!(verdict, Verdict::Unknown { .. }),
    );
    (answer.0, answer.1, history)
}

/// Issue 43: one service locking a name per order must not erase another job's proof. A daily
/// job whose last success was 48 h ago and whose run today failed is proven overdue over 26 h;
/// 10,000 one-off names from one instance leave that answer as it was (they evict each other).
/// Only jobs that recur, more than the history keeps, drop its runs: then its check is unknown
/// and says its own runs were dropped, and the run that dropped them warns.
#[test]
fn ten_thousand_one_off_names_leave_a_daily_jobs_proof_and_recurring_ones_say_whose_they_dropped() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    let mut admin = server.admin();
    let stream = "dibs:\u{1f}{history}:nightly-report";
    let now = || -> u64 {
        let (s, us): (u64, u64) = redis::cmd("TIME").query(&mut server.admin()).unwrap();
        s * 1000 + us / 1000
    };
    // Its success of two days ago, as a release of then recorded it (and admitted the job).
    let then = now() - 48 * 3600 * 1000;
    let entry = format!("released;ok;1200;0;{then};{then};4242;batch-1;;;nightly-report");
    let _: String = redis::cmd("XADD")
        .arg(stream)
        .arg(format!("{then}-0"))
        .arg("run")
        .arg(entry)
        .query(&mut admin)
        .unwrap();
    let _: i64 = admin
        .zadd("dibs:\u{1f}{history}", "nightly-report", then)
        .unwrap();
    let _: i64 = admin
        .zadd("dibs:\u{1f}{history}\u{1f}once", "nightly-report", then)
        .unwrap();
    // Today's run, failed.
    let lease = locker
        .acquire(&ms("nightly-report", 60_000, 0))
        .unwrap()
        .won()
        .unwrap();
    drop(lease.release_after(TaskResult::Failed));
    let (overdue, _, before) = daily_check(&locker, now());
    assert!(overdue, "proven overdue before the flood: {before:?}");

    let flood = std::time::Instant::now();
    let mut said = Vec::new();
    for n in 0..10_000 {
        let ending = locker
            .acquire(&ms(&format!("order-{n}"), 60_000, 0))
            .unwrap()
            .won()
            .unwrap()
            .release();
        said.extend(ending.advice);
    }
    eprintln!("10,000 one-off names recorded in {:?}", flood.elapsed());
    assert_eq!(
        said.len(),
        1,
        "the flood's own service is told, once: {said:?}"
    );
    assert!(said[0].contains("dropped another job's runs"), "{said:?}");
    let (overdue, unknown, after) = daily_check(&locker, now());
    assert!(
        overdue && !unknown,
        "the daily job's answer survives one-off names: {after:?}"
    );
    assert_eq!(after.runs.len(), 2);
    let streams: Vec<String> = admin.keys("dibs:\u{1f}{history}:*").unwrap();
    assert!(streams.len() <= HISTORY_JOBS, "{}", streams.len());
    let dropped = locker.history("order-8500", 10).unwrap();
    assert!(dropped.job_evicted_at_unix_ms.is_some(), "{dropped:?}");

    // Now another service's jobs that recur (two runs each), more than the history keeps: the
    // least recently recorded of them goes, the daily job first.
    let tenants = locker_with(&server, &[]);
    let mut warnings = Vec::new();
    for n in 0..HISTORY_JOBS + 100 {
        for _ in 0..2 {
            let ending = tenants
                .acquire(&ms(&format!("tenant-{n}-sync"), 60_000, 0))
                .unwrap()
                .won()
                .unwrap()
                .release();
            warnings.extend(ending.advice);
        }
    }
    let (overdue, unknown, gone) = daily_check(&locker, now());
    assert!(
        !overdue && unknown,
        "a dropped history proves nothing: {gone:?}"
    );
    let at = gone
        .job_evicted_at_unix_ms
        .expect("its own runs were dropped, and it says so");
    assert!(at >= then, "{gone:?}");
    assert_eq!(warnings.len(), 1, "said once: {warnings:?}");
    assert!(
        warnings[0].contains("dropped another job's runs"),
        "{warnings:?}"
    );
}

/// A job of its own name that runs less often than a flood of one-off names fills the history
/// (a weekly export beside a lock per order) loses its one run to them once, and says so; when
/// it runs again it is known to recur, and the next flood leaves it alone.
#[test]
fn a_job_whose_one_run_was_dropped_recurs_when_it_comes_back() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    let run = |name: &str| {
        drop(
            locker
                .acquire(&ms(name, 60_000, 0))
                .unwrap()
                .won()
                .unwrap()
                .release(),
        )
    };
    let flood = |from: usize| {
        for n in from..from + HISTORY_JOBS + 10 {
            run(&format!("order-{n}"));
        }
    };
    run("weekly-export");
    flood(0);
    let first = locker.history("weekly-export", 10).unwrap();
    assert!(
        first.runs.is_empty(),
        "one run among one-off names goes: {first:?}"
    );
    assert!(
        first.job_evicted_at_unix_ms.is_some(),
        "and says so: {first:?}"
    );
    run("weekly-export");
    flood(10_000);
    flood(20_000);
    let again = locker.history("weekly-export", 10).unwrap();
    assert_eq!(again.runs.len(), 1, "back, it recurs: kept: {again:?}");
}

/// The ACL line of the README before issue 43 (no +xlen, +zremrangebyrank, +zscore): the history
/// still records, says once that part of it was refused, and remembers no eviction rather than
/// let the list of evicted jobs grow without its trim.
#[test]
fn an_acl_without_the_eviction_commands_is_told_and_grows_nothing() {
    let server = RedisServer::start();
    let line = "on >pw resetkeys ~dibs:* resetchannels -@all +set +get +getrange +exists +evalsha \
                +eval +pexpire +del +pttl +time +info +wait +ping +hello +select +xadd +xdel \
                +xrevrange +zadd +zcard +zrange +zrem +scan +dbsize +cluster|slots +asking";
    let mut acl = redis::cmd("ACL");
    acl.arg("SETUSER").arg("older");
    for rule in line.split_whitespace() {
        acl.arg(rule);
    }
    let _: () = acl.query(&mut server.admin()).unwrap();
    let uri = server.uri().replace("redis://", "redis://older:pw@");
    let locker = Locker::new(ConnSpec::from_uri(&uri).unwrap()).unwrap();
    let mut said = Vec::new();
    for n in 0..HISTORY_JOBS + 200 {
        let ending = locker
            .acquire(&ms(&format!("order-{n}"), 60_000, 0))
            .unwrap()
            .won()
            .unwrap()
            .release();
        assert_eq!(ending.ended, Ended::Released);
        said.extend(ending.advice);
    }
    assert!(
        said.iter()
            .any(|w| w.contains("+zremrangebyrank") && w.contains("+xlen")),
        "{said:?}"
    );
    let remembered: usize = server
        .admin()
        .zcard("dibs:\u{1f}{history}\u{1f}evicted-jobs")
        .unwrap();
    assert_eq!(remembered, 0, "nothing grows without its trim");
    let streams: Vec<String> = server.admin().keys("dibs:\u{1f}{history}:*").unwrap();
    assert!(streams.len() <= HISTORY_JOBS, "{}", streams.len());
}

/// Entries this version cannot read as runs (foreign data, another version's) on top of a job's
/// history: the success under them is still found, and without one, nothing after them is
/// proven (found by the attack on the one judge: five such entries made a job that had run
/// "overdue", proven).
#[test]
fn entries_dibs_cannot_read_hide_no_success_and_prove_no_absence() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    let mut admin = server.admin();
    let junk = |admin: &mut redis::Connection, job: &str| {
        for _ in 0..5 {
            let _: String = redis::cmd("XADD")
                .arg(format!("dibs:\u{1f}{{history}}:{job}"))
                .arg("*")
                .arg("foo")
                .arg("bar")
                .query(admin)
                .unwrap();
        }
    };
    let hour = common::within(Duration::from_secs(3600));
    // A success, a failure, then five unreadable entries: ok.
    locker.execute(&ms("ran", 10_000, 0), || ()).unwrap();
    let failed = locker
        .acquire(&ms("ran", 10_000, 0))
        .unwrap()
        .won()
        .unwrap();
    drop(failed.release_after(TaskResult::Failed));
    junk(&mut admin, "ran");
    let checked = locker.check("ran", &hour, SCAN_BUDGET).unwrap();
    assert!(
        matches!(checked.judgement().verdict, Verdict::Ran(_)),
        "{checked:?}"
    );
    // Only failures, then unreadable entries: whether it ran cannot be told.
    let failed = locker
        .acquire(&ms("failing", 10_000, 0))
        .unwrap()
        .won()
        .unwrap();
    drop(failed.release_after(TaskResult::Failed));
    junk(&mut admin, "failing");
    let checked = locker.check("failing", &hour, SCAN_BUDGET).unwrap();
    assert!(
        matches!(checked.judgement().verdict, Verdict::Unknown { .. }),
        "{checked:?}"
    );
    assert_eq!(checked.judgement().standing(), dibs::Standing::Unknown);
}
