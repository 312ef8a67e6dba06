//! The lock model against a real redis-server.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

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
    let lease = locker.acquire(&ms("job", 60_000, 0)).unwrap().expect("won");
    assert_eq!(lease.key(), "dibs:job");
    let stored: String = server.admin().get("dibs:job").unwrap();
    assert_eq!(stored, lease.value());
    let ttl = server.pttl("dibs:job");
    assert!((59_000..=60_000).contains(&ttl), "PTTL {ttl}");
    assert_eq!(server.calls("set"), 1);

    assert_eq!(locker.release(lease).ended, Ended::Released);
    let again = locker.acquire(&ms("job", 60_000, 0)).unwrap().expect("won");
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
    let lease = a.acquire(&ms("tick", 300, 0)).unwrap().expect("a wins");
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
    let Ended::KeptForAtLeast { remaining_ms } = ending.ended else {
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
    let lease = locker.acquire(&ms("crashed", 250, 0)).unwrap().unwrap();
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
fn a_release_failure_is_reported_beside_the_tasks_value() {
    let mut server = RedisServer::start();
    let locker = locker(&server);
    let outcome = locker
        .execute(&ms("k", 10_000, 0), || {
            server.kill();
            "task value"
        })
        .unwrap();
    let Outcome::Ran { value, ending } = outcome else {
        panic!()
    };
    assert_eq!(value, "task value");
    let Ended::ReleaseFailed(err) = ending.ended else {
        panic!("the release should fail: {ending:?}")
    };
    assert!(matches!(err, Error::Connection(_)), "{err:?}");
    assert!(err.message().contains("releasing lock 'k'"), "{err}");
}

#[test]
fn redis_down_is_a_connection_error_within_the_timeout_and_the_task_does_not_run() {
    let port = common::free_port();
    let spec = ConnSpec::from_map(&[
        ("port".into(), dibs::SpecValue::Int(port as i128)),
        ("timeout-ms".into(), dibs::SpecValue::Int(500)),
    ])
    .unwrap();
    let locker = Locker::new(spec).unwrap();
    let mut ran = false;
    let started = Instant::now();
    let err = locker
        .execute(&ms("down", 1_000, 0), || ran = true)
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_millis(1_500));
    assert!(!ran);
    assert!(matches!(err, Error::Connection(_)), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains(&format!("127.0.0.1:{port}")) && message.contains("acquiring lock 'down'"),
        "{message}"
    );
}

#[test]
fn after_a_restart_the_next_call_succeeds() {
    let mut server = RedisServer::start();
    let locker = locker(&server);
    assert!(matches!(
        locker.execute(&ms("r", 10_000, 0), || ()).unwrap(),
        Outcome::Ran { .. }
    ));
    server.kill();
    let err = locker.execute(&ms("r", 10_000, 0), || ()).unwrap_err();
    assert!(matches!(err, Error::Connection(_)), "{err:?}");
    server.restart();
    assert!(matches!(
        locker.execute(&ms("r", 10_000, 0), || ()).unwrap(),
        Outcome::Ran { .. }
    ));
}

#[test]
fn a_restart_between_calls_is_invisible() {
    let mut server = RedisServer::start();
    let locker = locker(&server);
    for _ in 0..3 {
        assert!(matches!(
            locker.execute(&ms("r", 10_000, 0), || ()).unwrap(),
            Outcome::Ran { .. }
        ));
        server.restart(); // the pooled connection is now dead
    }
}

#[test]
fn client_kill_of_our_connections_is_invisible() {
    let server = RedisServer::start();
    let locker = locker(&server);
    locker.execute(&ms("c", 10_000, 0), || ()).unwrap();
    let killed: i64 = redis::cmd("CLIENT")
        .arg(&["KILL", "TYPE", "normal", "SKIPME", "yes"])
        .query(&mut server.admin())
        .unwrap();
    assert!(killed >= 1);
    assert!(matches!(
        locker.execute(&ms("c", 10_000, 0), || ()).unwrap(),
        Outcome::Ran { .. }
    ));
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

#[test]
fn a_frozen_server_is_a_timeout_and_a_full_pool_makes_callers_wait_boundedly() {
    let server = RedisServer::start();
    let spec = ConnSpec::from_map(&[
        ("uri".into(), dibs::SpecValue::Str(server.uri())),
        ("read-timeout-ms".into(), dibs::SpecValue::Int(600)),
        ("conn-timeout-ms".into(), dibs::SpecValue::Int(200)),
        (
            "pool".into(),
            dibs::SpecValue::Map(vec![("max-total".into(), dibs::SpecValue::Int(1))]),
        ),
    ]);
    // A pool key beside spec keys is not Carmine's shape: it must sit in a conn map.
    assert!(spec.is_err());
    let spec = ConnSpec::from_map(&[
        (
            "spec".into(),
            dibs::SpecValue::Map(vec![
                ("uri".into(), dibs::SpecValue::Str(server.uri())),
                ("read-timeout-ms".into(), dibs::SpecValue::Int(600)),
                ("conn-timeout-ms".into(), dibs::SpecValue::Int(200)),
            ]),
        ),
        (
            "pool".into(),
            dibs::SpecValue::Map(vec![("max-total".into(), dibs::SpecValue::Int(1))]),
        ),
    ])
    .unwrap();
    let locker = Arc::new(Locker::new(spec).unwrap());
    locker.execute(&ms("warm", 10_000, 0), || ()).unwrap();

    server.signal("-STOP");
    let frozen = {
        let locker = locker.clone();
        thread::spawn(move || {
            let started = Instant::now();
            (
                locker.execute(&ms("f", 10_000, 0), || ()),
                started.elapsed(),
            )
        })
    };
    // f has 200 ms to take the one connection; g's wait for it (conn-timeout, 200 ms) then ends
    // 200 ms before f's read timeout gives it back.
    thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let waited = locker.execute(&ms("g", 10_000, 0), || ());
    let waited_for = started.elapsed();
    let (frozen, frozen_for) = frozen.join().unwrap();
    server.signal("-CONT");

    let err = frozen.unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    assert!(
        frozen_for >= Duration::from_millis(550) && frozen_for < Duration::from_millis(1_500),
        "{frozen_for:?}"
    );
    let err = waited.unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    assert!(
        err.message().contains("pooled connections stayed busy"),
        "{err}"
    );
    assert!(waited_for < Duration::from_millis(700), "{waited_for:?}");
    // Thawed, the pool recovers: the timed-out connection was dropped, not reused.
    assert!(matches!(
        locker.execute(&ms("h", 10_000, 0), || ()).unwrap(),
        Outcome::Ran { .. }
    ));
}

#[test]
fn a_new_connection_to_a_frozen_server_gives_up_within_the_connect_timeout() {
    let server = RedisServer::start_with(&["--requirepass", "right-secret"]);
    let uri = format!("redis://app:right-secret@127.0.0.1:{}/1", server.port);
    let spec = ConnSpec::from_map(&[
        ("uri".into(), dibs::SpecValue::Str(uri)),
        ("timeout-ms".into(), dibs::SpecValue::Int(500)),
    ])
    .unwrap();
    let locker = Locker::new(spec).unwrap();
    server.signal("-STOP");
    let started = Instant::now();
    let result = locker.execute(&ms("cold", 10_000, 0), || ());
    let took = started.elapsed();
    server.signal("-CONT");
    let err = result.unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    assert!(err.message().contains("no answer within 500 ms"), "{err}");
    // TCP connects to a stopped process (the kernel accepts); AUTH and SELECT share one budget.
    assert!(took < Duration::from_millis(900), "took {took:?}");
}

#[test]
fn a_release_kept_for_at_least_whose_reply_was_lost_is_still_reported_kept() {
    let server = RedisServer::start();
    let proxy = common::proxy::Proxy::start(server.port);
    let locker = Locker::new(
        ConnSpec::from_map(&[
            ("uri".into(), dibs::SpecValue::Str(proxy.uri())),
            ("timeout-ms".into(), dibs::SpecValue::Int(300)),
        ])
        .unwrap(),
    )
    .unwrap();
    // Caches the release script, so that the first try runs it rather than get NOSCRIPT.
    locker.execute(&ms("warm-up", 10_000, 0), || ()).unwrap();
    let lease = locker
        .acquire(&ms("kept-lost-reply", 10_000, 5_000))
        .unwrap()
        .unwrap();
    // The release reaches Redis (which spends the token and keeps the key); its reply does not
    // come back, so it is retried on a fresh connection, which finds the spent value.
    proxy.mute_open_connections();
    let ending = locker.release(lease);
    assert!(
        matches!(ending.ended, Ended::KeptForAtLeast { .. }),
        "{:?}",
        ending.ended
    );
    let ttl = server.pttl("dibs:kept-lost-reply");
    assert!((4_000..=5_000).contains(&ttl), "PTTL {ttl}");
}

/// Issue 18 (5): a release whose reply is lost is retried on a fresh connection; when the retry
/// finds no key, the first try may have deleted it, or the lock may have lapsed while the task
/// ran (and been taken, and released, by another instance). Before, that was told as
/// "released", owned to the end, hiding a possible double run; now it is its own ending.
///
/// Issue 20: with the run history, the first try's record (written in the same script as its
/// `DEL`) tells the retry what that try did: the lapsed lock is then proven no longer ours, and
/// the deleted one proven released. Without the history both stay unproven.
///
/// Issue 29 (4): a retry that finds the next holder's value (the first try deleted the key, and
/// another instance took it before the retry came) looks for the first try's record too. Before,
/// it said "no longer ours" at once, with a warning that the lock expired while the task ran (63
/// ms after its acquisition, of an atMost of 30 s), and the history held two entries for one
/// token; now it is proven released with the history, and unproven without.
#[test]
fn a_retried_release_that_finds_no_key_is_unproven_unless_its_first_try_recorded_it() {
    for (history, lapsed, deleted, taken) in [
        (false, Ended::Unproven, Ended::Unproven, Ended::Unproven),
        (true, Ended::NoLongerOurs, Ended::Released, Ended::Released),
    ] {
        let found = lost_reply_endings(history);
        assert_eq!(found, (lapsed, deleted, taken), "history {history}");
    }
}

/// How a release that lost its reply ends: for a lock that lapsed (and was taken and released
/// by a rival) while the task ran, for one the first try deleted, and for one the first try
/// deleted and a rival took before the retry.
fn lost_reply_endings(history: bool) -> (Ended, Ended, Ended) {
    let server = RedisServer::start();
    let proxy = common::proxy::Proxy::start(server.port);
    let spec = |uri: String| {
        ConnSpec::from_map(&[
            ("uri".into(), dibs::SpecValue::Str(uri)),
            ("timeout-ms".into(), dibs::SpecValue::Int(300)),
            ("history".into(), dibs::SpecValue::Bool(history)),
        ])
        .unwrap()
    };
    let locker = Locker::new(spec(proxy.uri())).unwrap();
    let rival = Locker::new(spec(server.uri())).unwrap();
    locker.execute(&ms("warm-up", 10_000, 0), || ()).unwrap();

    // The lock lapses while the task runs; a rival takes it and releases it; then our release
    // loses its reply. It was not ours to the end, and must never be told so.
    let lease = locker
        .acquire(&ms("lapsed-lost-reply", 300, 0))
        .unwrap()
        .unwrap();
    thread::sleep(Duration::from_millis(400));
    let rivals = rival
        .execute(&ms("lapsed-lost-reply", 10_000, 0), || ())
        .unwrap();
    assert!(matches!(rivals, Outcome::Ran { .. }), "the rival ran too");
    proxy.mute_open_connections();
    let lapsed = locker.release(lease);
    assert!(!lapsed.owned_to_the_end());
    let warning = lapsed.warning().unwrap();
    match lapsed.ended {
        Ended::Unproven => assert!(warning.contains("cannot be proven"), "{warning}"),
        _ => assert!(warning.contains("no longer ours"), "{warning}"),
    }

    // The same reply lost after a release that did delete the key.
    let proxy2 = common::proxy::Proxy::start(server.port);
    let locker2 = Locker::new(spec(proxy2.uri())).unwrap();
    locker2.execute(&ms("warm-up", 10_000, 0), || ()).unwrap();
    let lease = locker2
        .acquire(&ms("deleted-lost-reply", 10_000, 0))
        .unwrap()
        .unwrap();
    proxy2.mute_open_connections();
    let deleted = locker2.release(lease);
    assert_eq!(
        server.pttl("dibs:deleted-lost-reply"),
        -2,
        "the key is gone all the same"
    );
    if history {
        // One record per run: the retry wrote none of its own.
        let runs = locker2.history("deleted-lost-reply", 10).unwrap().runs;
        assert_eq!(runs.len(), 1, "{runs:#?}");
        assert_eq!(runs[0].ended, dibs::RunEnded::Released);
    }

    // Lost again, and the lock taken by a rival between the first try and its retry (the
    // retry waits out the read timeout, 300 ms; the rival takes the key as soon as it is gone).
    let proxy3 = common::proxy::Proxy::start(server.port);
    let locker3 = Locker::new(spec(proxy3.uri())).unwrap();
    locker3.execute(&ms("warm-up", 10_000, 0), || ()).unwrap();
    let lease = locker3
        .acquire(&ms("taken-lost-reply", 30_000, 0))
        .unwrap()
        .unwrap();
    let fence = lease.fence();
    proxy3.mute_open_connections();
    let releasing = thread::spawn(move || locker3.release(lease));
    let deadline = std::time::Instant::now() + Duration::from_millis(300);
    while server.exists("dibs:taken-lost-reply") {
        assert!(
            std::time::Instant::now() < deadline,
            "the first try never ran"
        );
        thread::sleep(Duration::from_millis(1));
    }
    let rivals = rival
        .acquire(&ms("taken-lost-reply", 30_000, 0))
        .unwrap()
        .expect("the rival takes the free lock");
    let taken = releasing.join().unwrap();
    assert!(
        !taken
            .warning()
            .is_some_and(|w| w.contains("no longer ours")),
        "no claim that it expired: {:?}",
        taken.warning()
    );
    assert!(
        server.exists("dibs:taken-lost-reply"),
        "the rival's lock stays"
    );
    if history {
        let runs = rival.history("taken-lost-reply", 10).unwrap().runs;
        assert_eq!(runs.len(), 1, "one entry for one token: {runs:#?}");
        assert_eq!(
            (runs[0].fence, runs[0].ended),
            (fence, dibs::RunEnded::Released)
        );
    }
    let _ = rivals.release();
    (lapsed.ended, deleted.ended, taken.ended)
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
/// rolling deploy instances of both versions exclude each other on one lock: 300 tries each, at
/// once, never two tasks at a time, and each version wins some and skips some.
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
