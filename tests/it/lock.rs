//! The lock model against a real redis-server (the server failing it: `lock_faults.rs`).

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use common::RedisServer;
use dibs::{ConnSpec, Ended, Error, LockParams, Locker, Outcome};
use redis::Commands;

fn locker(server: &RedisServer) -> Locker {
    Locker::new(ConnSpec::from_uri(&server.uri()).unwrap()).unwrap()
}

fn ms(name: &str, at_most: i64, at_least: i64) -> LockParams {
    LockParams::from_millis(name, at_most, at_least).unwrap()
}

#[test]
fn acquire_is_one_set_nx_px_with_a_fresh_token_per_call() {
    let server = RedisServer::start();
    let locker = locker(&server);
    let lease = locker
        .acquire(&ms("job", 60_000, 0))
        .unwrap()
        .won()
        .expect("won");
    assert_eq!(lease.key(), "dibs:job");
    let stored: String = server.admin().get("dibs:job").unwrap();
    assert_eq!(stored, lease.value());
    let ttl = server.pttl("dibs:job");
    assert!((59_000..=60_000).contains(&ttl), "PTTL {ttl}");
    assert_eq!(server.calls("set"), 1);

    assert_eq!(locker.release(lease).ended, Ended::Released);
    let again = locker
        .acquire(&ms("job", 60_000, 0))
        .unwrap()
        .won()
        .expect("won");
    let token = |v: &str| v.split(';').next().unwrap().to_owned();
    let stored_again: String = server.admin().get("dibs:job").unwrap();
    assert_ne!(
        token(&stored),
        token(&stored_again),
        "token must be new per call"
    );
    let fields: Vec<&str> = stored_again.split(';').collect();
    assert_eq!(fields[2], std::process::id().to_string());
    let _ = locker.release(again);
}

#[test]
fn a_second_acquirer_is_skipped_while_held_and_wins_after_the_ttl() {
    let server = RedisServer::start();
    let a = locker(&server);
    let b = locker(&server);
    let lease = a
        .acquire(&ms("tick", 300, 0))
        .unwrap()
        .won()
        .expect("a wins");
    let mut ran = false;
    assert!(matches!(
        b.execute(&ms("tick", 300, 0), || ran = true).unwrap(),
        Outcome::Skipped
    ));
    assert!(!ran);
    thread::sleep(Duration::from_millis(350));
    assert!(matches!(
        b.execute(&ms("tick", 300, 0), || ran = true).unwrap(),
        Outcome::Ran { .. }
    ));
    assert!(ran);
    assert_eq!(a.release(lease).ended, Ended::NoLongerOurs);
}

#[test]
fn a_holder_whose_ttl_expired_does_not_touch_the_new_holders_key() {
    let server = RedisServer::start();
    let a = locker(&server);
    let b = locker(&server);
    let outcome = a
        .execute(&ms("slow", 200, 0), || {
            thread::sleep(Duration::from_millis(300));
            b.acquire(&ms("slow", 60_000, 0))
                .unwrap()
                .won()
                .expect("b wins after a's TTL")
        })
        .unwrap();
    let Outcome::Ran {
        value: b_lease,
        ending,
    } = outcome
    else {
        panic!("a should run")
    };
    assert_eq!(ending.ended, Ended::NoLongerOurs);
    assert!(ending.elapsed >= Duration::from_millis(300));
    let stored: String = server.admin().get("dibs:slow").unwrap();
    assert_eq!(
        stored,
        b_lease.value(),
        "b's value must survive a's release"
    );
    assert!(
        server.pttl("dibs:slow") > 59_000,
        "b's expiry must be untouched"
    );
    assert_eq!(b.release(b_lease).ended, Ended::Released);
}

#[test]
fn at_least_keeps_the_key_for_the_remaining_time_and_zero_deletes_it() {
    let server = RedisServer::start();
    let locker = locker(&server);
    let outcome = locker
        .execute(&ms("kept", 10_000, 2_000), || {
            thread::sleep(Duration::from_millis(500))
        })
        .unwrap();
    let Outcome::Ran { ending, .. } = outcome else {
        panic!()
    };
    let (Ended::KeptForAtLeast, Some(remaining_ms)) = (ending.ended, ending.kept_ms) else {
        panic!("expected Kept")
    };
    assert!(
        (1_400..=1_500).contains(&remaining_ms),
        "remaining {remaining_ms}"
    );
    let ttl = server.pttl("dibs:kept");
    assert!((1_300..=1_500).contains(&ttl), "PTTL {ttl}");
    // Still held: another call is skipped until atLeast has passed.
    assert!(matches!(
        locker.execute(&ms("kept", 10_000, 0), || ()).unwrap(),
        Outcome::Skipped
    ));

    let outcome = locker.execute(&ms("gone", 10_000, 0), || ()).unwrap();
    let Outcome::Ran { ending, .. } = outcome else {
        panic!()
    };
    assert_eq!(ending.ended, Ended::Released);
    assert!(!server.exists("dibs:gone"));
}

#[test]
fn the_lock_expires_after_at_most_even_if_never_released() {
    let server = RedisServer::start();
    let locker = locker(&server);
    let lease = locker
        .acquire(&ms("crashed", 250, 0))
        .unwrap()
        .won()
        .unwrap();
    std::mem::forget(lease); // as if the process died
    thread::sleep(Duration::from_millis(300));
    assert!(!server.exists("dibs:crashed"));
}

#[test]
fn scripts_survive_script_flush_with_one_extra_round_trip_each() {
    // Two scripts per call: the acquire's and the release's.
    let server = RedisServer::start();
    let locker = locker(&server);
    locker.execute(&ms("s", 10_000, 0), || ()).unwrap();
    assert_eq!(
        (server.calls("evalsha"), server.calls("eval")),
        (2, 2),
        "first call loads both scripts"
    );
    locker.execute(&ms("s", 10_000, 0), || ()).unwrap();
    assert_eq!(
        (server.calls("evalsha"), server.calls("eval")),
        (4, 2),
        "then EVALSHA alone"
    );

    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut server.admin())
        .unwrap();
    let outcome = locker.execute(&ms("s", 10_000, 0), || ()).unwrap();
    let Outcome::Ran { ending, .. } = outcome else {
        panic!()
    };
    assert_eq!(ending.ended, Ended::Released);
    assert_eq!(
        (server.calls("evalsha"), server.calls("eval")),
        (6, 4),
        "each: EVALSHA, then one EVAL"
    );
    assert!(!server.exists("dibs:s"));
}

#[test]
fn the_tasks_error_and_panic_pass_through_and_release_still_runs() {
    let server = RedisServer::start();
    let locker = locker(&server);
    let outcome = locker
        .execute(&ms("e", 10_000, 0), || Err::<(), _>("task failed"))
        .unwrap();
    let Outcome::Ran { value, ending } = outcome else {
        panic!()
    };
    assert_eq!(value, Err("task failed"));
    assert_eq!(ending.ended, Ended::Released);

    let caught = std::panic::catch_unwind(|| {
        let _ = locker.execute(&ms("p", 10_000, 0), || -> () {
            std::panic::panic_any(42_u32)
        });
    });
    assert_eq!(
        *caught.unwrap_err().downcast::<u32>().unwrap(),
        42,
        "the very panic payload"
    );
    assert!(!server.exists("dibs:p"), "released despite the panic");
}

#[test]
fn connections_are_reused() {
    let server = RedisServer::start();
    let locker = locker(&server);
    for _ in 0..200 {
        locker.execute(&ms("reuse", 10_000, 0), || ()).unwrap();
    }
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(&mut server.admin())
        .unwrap();
    // Every client but the one asking is ours (lib-name needs Redis 7.2, so count instead). The
    // asker's command reads `client|list` since Redis 7.0, `client` before.
    let ours = list
        .lines()
        .filter(|l| {
            !l.split_whitespace()
                .any(|f| f == "cmd=client|list" || f == "cmd=client")
        })
        .count();
    assert_eq!(ours, 1, "{list}");
}

#[test]
fn sixteen_threads_on_one_name_never_overlap() {
    let server = RedisServer::start();
    let locker = Arc::new(locker(&server));
    let counter = Arc::new(AtomicU64::new(0));
    let wins = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(16));
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let (locker, counter, wins, start) =
                (locker.clone(), counter.clone(), wins.clone(), start.clone());
            thread::spawn(move || {
                start.wait();
                for _ in 0..100 {
                    let outcome = locker
                        .execute(&ms("hammer", 10_000, 0), || {
                            // A non-atomic read-modify-write: overlapping holders lose updates.
                            let seen = counter.load(Ordering::SeqCst);
                            thread::sleep(Duration::from_micros(200));
                            counter.store(seen + 1, Ordering::SeqCst);
                        })
                        .unwrap();
                    if let Outcome::Ran { ending, .. } = outcome {
                        assert_eq!(ending.ended, Ended::Released);
                        wins.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let wins = wins.load(Ordering::SeqCst);
    assert!(wins > 0);
    assert_eq!(counter.load(Ordering::SeqCst), wins);
    println!("16 threads x 100 attempts: {wins} wins, 0 overlaps");
}

#[test]
fn shared_lockers_are_one_per_distinct_spec() {
    let server = RedisServer::start();
    let a = Locker::shared(ConnSpec::from_uri(&server.uri()).unwrap()).unwrap();
    let b = Locker::shared(ConnSpec::from_uri(&format!("{}/0", server.uri())).unwrap()).unwrap();
    let c = Locker::shared(ConnSpec::from_uri(&format!("{}/1", server.uri())).unwrap()).unwrap();
    assert!(std::ptr::eq(a, b));
    assert!(!std::ptr::eq(a, c));
}

#[test]
fn shared_lockers_that_differ_only_in_prefix_or_keep_alive_share_one_pool() {
    let server = RedisServer::start();
    // One admin connection throughout, so that the count below has no closing ones in it.
    let mut admin = server.admin();
    let spec = |prefix: &str, keep_alive: bool| {
        ConnSpec::from_map(&[
            ("uri".into(), dibs::SpecValue::Str(server.uri())),
            ("key-prefix".into(), dibs::SpecValue::Str(prefix.into())),
            ("keep-alive".into(), dibs::SpecValue::Bool(keep_alive)),
        ])
        .unwrap()
    };
    let a = Locker::shared(spec("one:", false)).unwrap();
    let b = Locker::shared(spec("two:", false)).unwrap();
    let c = Locker::shared(spec("one:", true)).unwrap();
    assert!(!std::ptr::eq(a, b) && !std::ptr::eq(a, c));
    // Kept for atLeast, so that each key stays to show the prefix it was written under.
    for (locker, name) in [(a, "a"), (b, "b"), (c, "c")] {
        let params = LockParams::from_secs(name, 60, 60).unwrap();
        assert!(matches!(
            locker.execute(&params, || ()).unwrap(),
            Outcome::Ran { .. }
        ));
    }
    let exist: usize = admin.exists(&["one:a", "two:b", "one:c"]).unwrap();
    assert_eq!(exist, 3);
    // Three calls one after another, through three lockers: one pooled connection in all (and
    // the admin's).
    let clients: String = redis::cmd("CLIENT").arg("LIST").query(&mut admin).unwrap();
    assert_eq!(clients.lines().count(), 2, "{clients}");
}

/// Issue 18 (4): a tick's lock is `<name>@<tick>` and stays for all of atMost, released or not,
/// as the tick's done marker: the same tick is skipped after its run however fast the task was,
/// the next tick runs. Ticks that could make two (name, tick) pairs share a key are refused.
#[test]
fn a_ticks_lock_stays_as_its_done_marker_for_all_of_at_most() {
    let server = RedisServer::start();
    let locker = Locker::new(ConnSpec::from_uri(&server.uri()).unwrap()).unwrap();
    let tick = |t: &str| LockParams::for_tick("report", t, 3_000, 1).unwrap();
    let ran = locker.execute(&tick("2026-12-01"), || ()).unwrap();
    let Outcome::Ran { ending, .. } = ran else {
        panic!("the first instance runs the tick")
    };
    assert!(ending.owned_to_the_end());
    let ttl = server.pttl("dibs:report@2026-12-01");
    assert!((2_500..=3_000).contains(&ttl), "kept as done: PTTL {ttl}");
    assert!(matches!(
        locker.execute(&tick("2026-12-01"), || ()).unwrap(),
        Outcome::Skipped
    ));
    assert!(matches!(
        locker.execute(&tick("2026-12-02"), || ()).unwrap(),
        Outcome::Ran { .. }
    ));
    for bad in ["", "a@b", "new\nline", &"x".repeat(129)] {
        let err = LockParams::for_tick("report", bad, 3_000, 1).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { arg: "tick", .. }),
            "{bad:?}: {err:?}"
        );
    }
}

/// Issue 29 (7): the lock's key and value are as the previous version of dibs wrote them, so in a
/// rolling deploy instances of both versions exclude each other on one lock: each is skipped
/// while the other holds it, and in 300 tries each, at once, never two tasks run at a time.
#[test]
fn instances_of_the_previous_version_and_this_one_exclude_each_other() {
    let server = RedisServer::start();
    let current = Locker::new(ConnSpec::from_uri(&server.uri()).unwrap()).unwrap();
    let race = common::previous::race(&current, server.admin(), "deploy", 300, true);
    eprintln!("{race:?}");
    assert_eq!(race.overlaps, 0, "{race:?}");
    assert!(race.previous_ran > 0 && race.current_ran > 0, "{race:?}");
    assert!(
        race.previous_skipped > 0 && race.current_skipped > 0,
        "{race:?}"
    );
}
