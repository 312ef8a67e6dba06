//! The lock when the server fails it, against a real redis-server: down, killed during the
//! task, restarted, our connections killed, frozen (SIGSTOP), a release's reply lost.

use crate::common;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::RedisServer;
use dibs::{ConnSpec, Ended, Error, LockParams, Locker, Outcome};

fn locker(server: &RedisServer) -> Locker {
    Locker::new(ConnSpec::from_uri(&server.uri()).unwrap()).unwrap()
}

fn ms(name: &str, at_most: i64, at_least: i64) -> LockParams {
    LockParams::from_millis(name, at_most, at_least).unwrap()
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
    let (Ended::ReleaseFailed, Some(err)) = (ending.ended, ending.failure.clone()) else {
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
        .won()
        .unwrap();
    // The release reaches Redis (which spends the token and keeps the key); its reply does not
    // come back, so it is retried on a fresh connection, which finds the spent value.
    proxy.mute_open_connections();
    let ending = locker.release(lease);
    assert!(
        matches!(ending.ended, Ended::KeptForAtLeast),
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
        .won()
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
        .won()
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
        assert_eq!(runs[0].ended, dibs::Ended::Released);
    }

    // Lost again, and the lock taken by a rival between the first try and its retry (the
    // retry waits out the read timeout, 300 ms; the rival takes the key as soon as it is gone).
    let proxy3 = common::proxy::Proxy::start(server.port);
    let locker3 = Locker::new(spec(proxy3.uri())).unwrap();
    locker3.execute(&ms("warm-up", 10_000, 0), || ()).unwrap();
    let lease = locker3
        .acquire(&ms("taken-lost-reply", 30_000, 0))
        .unwrap()
        .won()
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
        .won()
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
            (fence, dibs::Ended::Released)
        );
    }
    let _ = rivals.release();
    (lapsed.ended, deleted.ended, taken.ended)
}

/// A locker through `proxy` with read timeout `read_ms`, one call made (its connection pooled,
/// the replicas counted) before the fault.
fn warm_locker_through(proxy: &Proxy, read_ms: i128) -> Locker {
    let spec = ConnSpec::from_map(&[
        ("uri".into(), dibs::SpecValue::Str(proxy.uri())),
        ("read-timeout-ms".into(), dibs::SpecValue::Int(read_ms)),
    ])
    .unwrap();
    let locker = Locker::new(spec).unwrap();
    assert!(matches!(
        locker.execute(&ms("warm-up", 1_000, 0), || ()).unwrap(),
        Outcome::Ran { .. }
    ));
    locker
}

#[test]
fn a_trickled_reply_is_a_timeout_within_the_read_timeout_from_its_send() {
    let server = RedisServer::start();
    let proxy = Proxy::start(server.port);
    let locker = warm_locker_through(&proxy, 300);
    // Each byte comes well within any read's timeout; the acquire's reply, some 20 bytes, would
    // take seconds.
    proxy.trickle_replies(Duration::from_millis(100));
    let mut ran = false;
    let started = Instant::now();
    let err = locker
        .execute(&ms("trickled", 60_000, 0), || ran = true)
        .unwrap_err();
    let took = started.elapsed();
    eprintln!("a reply trickled a byte per 100 ms, read timeout 300 ms: gave up after {took:?}");
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    assert!(!ran);
    // One try, and the pool's one retry on a fresh connection, each bounded from its send.
    assert!(took < Duration::from_millis(1_200), "{took:?}");
}

#[test]
fn an_acquire_answered_after_half_of_at_most_is_given_back_and_does_not_run() {
    for (delay_ms, at_most_ms) in [(700, 1_000), (1_300, 1_000)] {
        let server = RedisServer::start();
        let proxy = Proxy::start(server.port);
        let locker = warm_locker_through(&proxy, 4_000);
        proxy.delay_replies(Duration::from_millis(delay_ms));
        let mut ran = false;
        let outcome = locker
            .execute(&ms("late", at_most_ms, 0), || ran = true)
            .unwrap();
        assert!(!ran, "the task ran on a lock won {delay_ms} ms late");
        let dibs::Outcome::Unconfirmed(why) = outcome else {
            panic!("{outcome:?}")
        };
        eprintln!("reply {delay_ms} ms late, atMost {at_most_ms} ms: {why}");
        assert!(why.contains("given back"), "{why}");
        assert!(
            !server.exists("dibs:late"),
            "the late lock was not given back"
        );
    }
}
