//! Catch-up of missed ticks against a real redis-server: what proves that a tick ran (its lock,
//! its job's history), when the history cannot prove it, and that a missed tick is run once
//! however many instances race for it.

use crate::common;

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::RedisServer;
use dibs::{
    ConnSpec, Ended, Error, LockParams, Locker, SpecValue, TaskResult, TickAcquire, TickState,
    CLOCK_SKEW, HISTORY_LENGTH, MAX_CATCH_UP_AGE,
};
use redis::Commands;

fn locker_with(server: &RedisServer, extra: &[(&str, SpecValue)]) -> Locker {
    let mut entries = vec![("uri".to_owned(), SpecValue::Str(server.uri()))];
    entries.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
    Locker::new(ConnSpec::from_map(&entries).unwrap()).unwrap()
}

fn tick(job: &str, tick: &str) -> LockParams {
    LockParams::for_tick(job, tick, 60_000, 1).unwrap()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The lock of a tick gone, as when its atMost passed: only the history remembers the run.
fn expire(server: &RedisServer, params: &LockParams) {
    let _: i64 = server.admin().del(key(params)).unwrap();
}

/// The key of a lock under the default prefix.
fn key(params: &LockParams) -> String {
    format!("{}{}", dibs::DEFAULT_KEY_PREFIX, params.name())
}

#[test]
fn a_missed_tick_is_run_once_and_recorded_as_a_catch_up() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    let due = now_ms() - 10_000;
    let missed = tick("report", "2026-12-05T02:00");
    assert_eq!(
        locker.tick_state(&missed, due).unwrap(),
        TickState::BeforeFirstRun
    );

    let TickAcquire::Won(lease) = locker.acquire_unrun(&missed, due, true).unwrap() else {
        panic!("a missed tick with a free lock is won");
    };
    // Running: its lock proves it, for a look and for another acquire.
    assert_eq!(locker.tick_state(&missed, due).unwrap(), TickState::Ran);
    assert!(matches!(
        locker.acquire_unrun(&missed, due, true).unwrap(),
        TickAcquire::Taken
    ));
    drop(lease.release());

    let runs = locker.history("report", 10).unwrap().runs;
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert!(runs[0].catch_up && runs[0].succeeded(), "{:?}", runs[0]);
    assert_eq!(runs[0].name, "report@2026-12-05T02:00");

    // Its done-mark expired: the history still proves it ran.
    expire(&server, &missed);
    assert_eq!(locker.tick_state(&missed, due).unwrap(), TickState::Ran);
    assert!(matches!(
        locker.acquire_unrun(&missed, due, true).unwrap(),
        TickAcquire::Ran
    ));
    assert!(
        !server.exists(&key(&missed)),
        "a tick that ran is not taken again"
    );
}

#[test]
fn a_tick_run_the_ordinary_way_is_never_caught_up() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    let ran = tick("report", "2026-12-05T02:00");
    let lease = locker.acquire(&ran).unwrap().won().unwrap();
    drop(lease.release());
    expire(&server, &ran);
    // Another tick of the job, never run, due after the job's first run, is missed; this one ran.
    let due = now_ms();
    assert_eq!(locker.tick_state(&ran, due).unwrap(), TickState::Ran);
    let other = tick("report", "2026-12-05T03:00");
    assert_eq!(locker.tick_state(&other, due).unwrap(), TickState::Missed);
    // A tick whose task failed ran too: catch-up is for ticks nobody ran.
    let failed = tick("report", "2026-12-05T04:00");
    let lease = locker.acquire(&failed).unwrap().won().unwrap();
    drop(lease.release_after(dibs::TaskResult::Failed));
    expire(&server, &failed);
    assert_eq!(locker.tick_state(&failed, due).unwrap(), TickState::Ran);
    let runs = locker.history("report", 10).unwrap().runs;
    assert!(runs.iter().all(|r| !r.catch_up), "{runs:#?}");
}

#[test]
fn racing_instances_run_a_missed_tick_once() {
    let server = RedisServer::start();
    let due = now_ms() - 5_000;
    let racers = 8;
    let start = Arc::new(Barrier::new(racers));
    let won: usize = (0..racers)
        .map(|_| {
            let locker = locker_with(&server, &[]);
            let start = start.clone();
            thread::spawn(move || {
                start.wait();
                let missed = tick("report", "2026-12-05T02:00");
                match locker.acquire_unrun(&missed, due, true).unwrap() {
                    TickAcquire::Won(lease) => {
                        drop(lease.release());
                        1
                    }
                    _ => 0,
                }
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .sum();
    assert_eq!(won, 1);
    // And after its done-mark is gone, a late instance finds its run in the history.
    let late = locker_with(&server, &[]);
    let missed = tick("report", "2026-12-05T02:00");
    expire(&server, &missed);
    assert!(matches!(
        late.acquire_unrun(&missed, due, true).unwrap(),
        TickAcquire::Ran
    ));
    assert_eq!(late.history("report", 100).unwrap().runs.len(), 1);
}

#[test]
fn a_history_that_cannot_prove_a_miss_leaves_the_tick_unknown() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    // More runs than the stream keeps, all recorded just now: trimmed, and not reaching back
    // to a tick due now less the clock skew.
    for i in 0..HISTORY_LENGTH + 20 {
        let params = tick("busy", &format!("n{i}"));
        drop(locker.acquire(&params).unwrap().won().unwrap().release());
    }
    let missed = tick("busy", "2026-12-05T02:00");
    let due = now_ms() - 1_000;
    assert_eq!(locker.tick_state(&missed, due).unwrap(), TickState::Unknown);
    assert!(matches!(
        locker.acquire_unrun(&missed, due, true).unwrap(),
        TickAcquire::Unknown
    ));
    assert!(!server.exists(&key(&missed)));
    // The tick due now is not refused for it: it is taken the ordinary way (its done-mark).
    let now_tick = tick("busy", "2026-12-05T03:00");
    let TickAcquire::Won(lease) = locker.acquire_unrun(&now_tick, due, false).unwrap() else {
        panic!("the tick due now falls back to the ordinary acquire");
    };
    drop(lease.release());
    // A tick due after the oldest entry kept, by more than the skew: the stream reaches back.
    let later = now_ms() + CLOCK_SKEW.as_millis() as u64 + 5_000;
    assert_eq!(
        locker.tick_state(&missed, later).unwrap(),
        TickState::Missed
    );

    // A job without a stream is new; once a job's stream was dropped under this prefix, that
    // proves nothing.
    let quiet = tick("quiet", "2026-12-05T02:00");
    assert_eq!(
        locker.tick_state(&quiet, due).unwrap(),
        TickState::BeforeFirstRun
    );
    let _: () = server
        .admin()
        .set(
            format!("{}\u{1f}{{history}}\u{1f}evicted", dibs::DEFAULT_KEY_PREFIX),
            now_ms(),
        )
        .unwrap();
    assert_eq!(locker.tick_state(&quiet, due).unwrap(), TickState::Unknown);
}

#[test]
fn catch_up_refuses_what_it_cannot_prove_before_any_io() {
    // A port nobody listens on: each error comes before a connection is tried.
    let nowhere = |extra: &[(&str, SpecValue)]| {
        let mut entries = vec![(
            "uri".to_owned(),
            SpecValue::Str("redis://127.0.0.1:1".into()),
        )];
        entries.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
        Locker::new(ConnSpec::from_map(&entries).unwrap()).unwrap()
    };
    let arg = |e: Error| match e {
        Error::InvalidArgument { arg, .. } => arg,
        other => panic!("not an argument error: {other:?}"),
    };
    let locker = nowhere(&[]);
    let plain = LockParams::from_millis("report", 1_000, 0).unwrap();
    assert_eq!(
        arg(locker.tick_state(&plain, now_ms()).unwrap_err()),
        "tick"
    );
    let params = tick("report", "2026-10-01");
    let far = now_ms() + MAX_CATCH_UP_AGE.as_millis() as u64 + 60_000;
    assert_eq!(
        arg(locker.acquire_unrun(&params, far, true).err().unwrap()),
        "due"
    );
    // Beyond the look back: no error, no I/O (nobody listens on the port), not run.
    let old = now_ms() - MAX_CATCH_UP_AGE.as_millis() as u64 - 60_000;
    assert_eq!(
        locker.tick_state(&params, old).unwrap(),
        TickState::BeyondReach
    );
    assert!(matches!(
        locker.acquire_unrun(&params, old, true).unwrap(),
        TickAcquire::BeyondReach
    ));
    let off = nowhere(&[("history", SpecValue::Bool(false))]);
    assert_eq!(
        arg(off.acquire_unrun(&params, now_ms(), true).err().unwrap()),
        "catchUp"
    );
}

#[test]
fn a_tick_before_the_jobs_first_recorded_run_was_not_missed() {
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    let before = now_ms() - 1_000;
    let first = tick("fresh", "2026-12-05T02:00");
    // No run at all: a new job.
    assert_eq!(
        locker.tick_state(&first, before).unwrap(),
        TickState::BeforeFirstRun
    );
    // Its tick due now is run all the same.
    let TickAcquire::Won(lease) = locker.acquire_unrun(&first, before, false).unwrap() else {
        panic!("a new job's tick is won");
    };
    drop(lease.release());
    // A tick due before that first run is still not one it missed; one due after it is.
    let earlier = tick("fresh", "2026-12-05T01:00");
    assert_eq!(
        locker.tick_state(&earlier, before).unwrap(),
        TickState::BeforeFirstRun
    );
    let after = now_ms() + 1_000;
    assert_eq!(
        locker.tick_state(&earlier, after).unwrap(),
        TickState::Missed
    );
}

#[test]
fn a_window_of_the_longest_length_never_keeps_the_tick_due_now_from_running() {
    // A tick listed by a window of exactly MAX_CATCH_UP_AGE is past it by the time it is looked
    // at (a few ms): it was an argument error, and every fire then ran nothing, the tick due
    // now included, until the history expired.
    let server = RedisServer::start();
    let locker = locker_with(&server, &[]);
    let lease = locker
        .acquire_unrun(&tick("monthly", "2026-10-01"), now_ms(), false)
        .unwrap();
    let TickAcquire::Won(lease) = lease else {
        panic!("a first tick is won")
    };
    drop(lease.release());
    let oldest = now_ms() - MAX_CATCH_UP_AGE.as_millis() as u64;
    thread::sleep(Duration::from_millis(5));
    let edge = tick("monthly", "2026-11-05");
    assert_eq!(
        locker.tick_state(&edge, oldest).unwrap(),
        TickState::BeyondReach
    );
    assert!(matches!(
        locker.acquire_unrun(&edge, oldest, true).unwrap(),
        TickAcquire::BeyondReach
    ));
    assert!(!server.exists(&key(&edge)), "not taken");
    // The tick due now runs.
    let TickAcquire::Won(lease) = locker
        .acquire_unrun(&tick("monthly", "2026-12-06"), now_ms(), false)
        .unwrap()
    else {
        panic!("the tick due now runs")
    };
    drop(lease.release());
}

/// A job with a first recorded run, so that catch-up can prove the misses of its later ticks.
fn first_run(locker: &Locker, job: &str) {
    let TickAcquire::Won(lease) = locker
        .acquire_unrun(&tick(job, "2026-12-01"), now_ms() - 5_000, false)
        .unwrap()
    else {
        panic!("a first tick is won")
    };
    drop(lease.release());
}

#[test]
fn retry_failed_ticks_lets_a_later_fire_run_a_failed_tick_with_catch_up_too() {
    let server = RedisServer::start();
    let retrying = &[("retry-failed-ticks", SpecValue::Bool(true))];
    let (a, b) = (
        locker_with(&server, retrying),
        locker_with(&server, retrying),
    );
    first_run(&a, "export");
    let export = tick("export", "2026-12-05");
    let due = now_ms();
    let TickAcquire::Won(lease) = a.acquire_unrun(&export, due, false).unwrap() else {
        panic!("won")
    };
    assert_eq!(
        lease.release_after(TaskResult::Failed).ended,
        Ended::Released
    );
    // Another instance's later fire of the same tick, through catch-up's acquire as a job with
    // catch-up takes its tick due now: it runs it, as the plain executeOnce does.
    let TickAcquire::Won(lease) = b.acquire_unrun(&export, due, false).unwrap() else {
        panic!("a failed tick is run again by a later fire")
    };
    drop(lease.release());
    // Once it succeeded, it ran.
    assert_eq!(b.tick_state(&export, due).unwrap(), TickState::Ran);
    expire(&server, &export);
    assert!(matches!(
        a.acquire_unrun(&export, due, true).unwrap(),
        TickAcquire::Ran
    ));
    // Without retry-failed-ticks, a failed run is the tick's run.
    let once = locker_with(&server, &[]);
    let report = tick("export", "2026-12-06");
    let TickAcquire::Won(lease) = once.acquire_unrun(&report, due, false).unwrap() else {
        panic!("won")
    };
    drop(lease.release_after(TaskResult::Failed));
    expire(&server, &report);
    assert!(matches!(
        once.acquire_unrun(&report, due, false).unwrap(),
        TickAcquire::Ran
    ));
}

/// libfaketime, which moves the clock of the process it is preloaded in.
fn libfaketime() -> std::path::PathBuf {
    std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|d| d.path().join("faketime/libfaketime.so.1"))
        .find(|p| p.exists())
        .expect("libfaketime (apt-get install libfaketime; scripts/ensure-deps.sh installs it)")
}

/// An instance whose clock runs 5 minutes ahead of the server's (this test re-run as a child
/// process under libfaketime: a real clock, not a number in the test) catches up no tick: each
/// look at an earlier tick fails with `ClockAhead`, naming the clock. Before, its due times,
/// minutes in the server's future, were compared with the history's entries as they were, and
/// a tick the job had not yet reached was proven missed. The tick due now still runs (its own
/// lock is its proof), and its lease says why catch-up could not help.
#[test]
fn an_instance_whose_clock_runs_ahead_catches_up_no_tick() {
    const CHILD: &str = "DIBS_TEST_CLOCK_AHEAD_URI";
    if let Some(uri) = std::env::var_os(CHILD) {
        let uri = uri.into_string().unwrap();
        let l = Locker::new(
            ConnSpec::from_map(&[("uri".to_owned(), SpecValue::Str(uri.clone()))]).unwrap(),
        )
        .unwrap();
        let server_ms: (u64, u64) = redis::cmd("TIME")
            .query(&mut redis::Client::open(uri).unwrap().get_connection().unwrap())
            .unwrap();
        let ahead = now_ms() as i64 - (server_ms.0 * 1000 + server_ms.1 / 1000) as i64;
        assert!(
            ahead > 4 * 60_000,
            "libfaketime is in effect: {ahead} ms ahead"
        );
        let earlier = tick("ahead", "2026-12-07T03:00");
        match l.tick_state(&earlier, now_ms() - 60_000) {
            Err(Error::ClockAhead(why)) => {
                assert!(
                    why.contains("more than 60 s ahead") && why.contains("NTP"),
                    "{why}"
                )
            }
            Ok(state) => panic!("judged from a skewed clock: {state:?}"),
            Err(e) => panic!("{e}"),
        }
        assert!(matches!(
            l.acquire_unrun(&earlier, now_ms() - 60_000, true),
            Err(Error::ClockAhead(_))
        ));
        let due_now = tick("ahead", "2026-12-07T03:01");
        let Ok(TickAcquire::Won(mut lease)) = l.acquire_unrun(&due_now, now_ms(), false) else {
            panic!("the tick due now runs")
        };
        let warning = lease.take_warning().unwrap_or_default();
        assert!(warning.contains("ahead of"), "{warning}");
        drop(lease.release());
        println!("CHILD-CHECKED");
        return;
    }
    let server = RedisServer::start();
    first_run(&locker_with(&server, &[]), "ahead");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "catch_up::an_instance_whose_clock_runs_ahead_catches_up_no_tick",
        ])
        .args(["--nocapture", "--test-threads=1"])
        .env(CHILD, server.uri())
        .env("LD_PRELOAD", libfaketime())
        .env("FAKETIME", "+5m")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("CHILD-CHECKED"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !server.exists("dibs:ahead@2026-12-07T03:00"),
        "no earlier tick was taken"
    );
    let runs = locker_with(&server, &[]).history("ahead", 10).unwrap().runs;
    assert_eq!(
        runs.len(),
        2,
        "the first run and the tick due now: {runs:#?}"
    );
}
