//! Keep-alive and inspection against a real redis-server.

use crate::common;

use std::thread;
use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::RedisServer;
use dibs::{ConnSpec, Ended, Ending, LockParams, Locker, Outcome, SpecValue};
use redis::Commands;

fn locker(server: &RedisServer, keep_alive: bool) -> Locker {
    Locker::new(
        ConnSpec::from_map(&[
            ("uri".into(), SpecValue::Str(server.uri())),
            ("keep-alive".into(), SpecValue::Bool(keep_alive)),
        ])
        .unwrap(),
    )
    .unwrap()
}

fn ms(name: &str, at_most: i64) -> LockParams {
    LockParams::from_millis(name, at_most, 0).unwrap()
}

#[test]
fn a_task_of_three_times_at_most_keeps_the_lock_throughout() {
    let server = RedisServer::start();
    let holder = locker(&server, true);
    let rival = locker(&server, false);
    let outcome = holder
        .execute(&ms("long", 300), || {
            let started = Instant::now();
            let mut tries = 0;
            while started.elapsed() < Duration::from_millis(900) {
                let rival_won = matches!(
                    rival.execute(&ms("long", 300), || ()).unwrap(),
                    Outcome::Ran { .. }
                );
                assert!(!rival_won, "the rival won after {:?}", started.elapsed());
                let ttl: i64 = server.admin().pttl("dibs:long").unwrap();
                assert!(ttl > 0, "PTTL {ttl} after {:?}", started.elapsed());
                tries += 1;
                thread::sleep(Duration::from_millis(25));
            }
            tries
        })
        .unwrap();
    let Outcome::Ran {
        value: tries,
        ending,
    } = outcome
    else {
        panic!("should run")
    };
    assert!(tries > 20, "{tries}");
    assert!(ending.elapsed >= Duration::from_millis(900));
    assert_eq!(
        ending.ended,
        Ended::Released,
        "owned to the end, never lost"
    );
}

#[test]
fn without_keep_alive_the_lock_lapses_after_at_most() {
    let server = RedisServer::start();
    let outcome = locker(&server, false)
        .execute(&ms("short", 200), || {
            thread::sleep(Duration::from_millis(350))
        })
        .unwrap();
    let Outcome::Ran { ending, .. } = outcome else {
        panic!()
    };
    assert_eq!(
        ending.ended,
        Ended::NoLongerOurs,
        "expired, not lost to keep-alive"
    );
}

#[test]
fn a_lost_lock_is_reported_and_extension_stops() {
    let server = RedisServer::start();
    let holder = locker(&server, true);
    let outcome = holder
        .execute(&ms("stolen", 300), || {
            let _: () = server
                .admin()
                .set_ex("dibs:stolen", "someone-else", 60)
                .unwrap();
            thread::sleep(Duration::from_millis(450));
        })
        .unwrap();
    let Outcome::Ran { ending, .. } = outcome else {
        panic!()
    };
    assert_eq!(
        ending.ended,
        Ended::LostWhileRunning,
        "the extension must notice"
    );
    let value: String = server.admin().get("dibs:stolen").unwrap();
    assert_eq!(value, "someone-else");
    let ttl: i64 = server.admin().ttl("dibs:stolen").unwrap();
    assert!(ttl > 58, "the other holder's expiry is untouched: {ttl}");
}

#[test]
fn extension_stops_the_moment_the_task_ends() {
    let server = RedisServer::start();
    let holder = locker(&server, true);
    holder.execute(&ms("warm", 30_000), || ()).unwrap(); // loads the release script
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut server.admin())
        .unwrap();
    let started = Instant::now();
    let outcome = holder
        .execute(&ms("quick", 30_000), || {
            thread::sleep(Duration::from_millis(20))
        })
        .unwrap();
    assert!(matches!(
        outcome,
        Outcome::Ran {
            ending: Ending {
                ended: Ended::Released,
                ..
            },
            ..
        }
    ));
    // The extender waits 10 s between extensions; the call must not wait for it.
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        (server.calls("evalsha"), server.calls("eval")),
        (2, 0),
        "only the acquire and the release ran (both scripts), no extension"
    );
}

#[test]
fn inspect_reports_the_holder_and_never_changes_the_lock() {
    let server = RedisServer::start();
    let locker = locker(&server, false);
    assert_eq!(locker.inspect("free").unwrap(), None);

    let before_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let lease = locker.acquire(&ms("held", 60_000)).unwrap().won().unwrap();
    let state = locker.inspect("held").unwrap().expect("held");
    let remaining = state.remaining_ms.unwrap();
    assert!((59_000..=60_000).contains(&remaining), "{remaining}");
    let holder = state.holder.unwrap();
    assert_eq!(holder.pid, std::process::id());
    assert!(!holder.host.is_empty());
    assert!(
        holder.acquired_at_unix_ms >= before_ms && holder.acquired_at_unix_ms < before_ms + 5_000
    );
    let value: String = server.admin().get("dibs:held").unwrap();
    assert_eq!(value, lease.value(), "inspection leaves the value");
    assert_eq!(
        server.calls("pexpire") + server.calls("set"),
        1,
        "only the acquire wrote"
    );
    assert_eq!(locker.release(lease).ended, Ended::Released);

    let _: () = server.admin().set("dibs:foreign", "not ours").unwrap();
    let state = locker.inspect("foreign").unwrap().unwrap();
    assert_eq!((state.remaining_ms, state.holder), (None, None));
    assert!(locker.inspect("").is_err(), "the name is validated");
}

#[test]
fn a_failed_extension_is_retried_soon_and_the_lock_survives_a_short_freeze() {
    let server = RedisServer::start();
    let holder = keep_alive_locker(&server, 100);
    // timeout-ms 100: one attempt waits at most 300 ms (read, then connect + read on a fresh
    // connection). atMost 1200 ms: the first extension is due at 400 ms, into a freeze from 250
    // to 650 ms. It fails at about 600 ms; waiting a whole third again (1000 ms) would leave no
    // room for an attempt before the lapse at 1200 ms, so it must be retried soon. Attempts may
    // start until 900 ms: about 250 ms for a loaded machine's late sleeps and `kill` processes.
    let outcome = holder
        .execute(&ms("frozen-extension", 1200), || {
            thread::sleep(Duration::from_millis(250));
            server.signal("-STOP");
            thread::sleep(Duration::from_millis(400));
            server.signal("-CONT");
            thread::sleep(Duration::from_millis(1500));
        })
        .unwrap();
    let Outcome::Ran { ending, .. } = outcome else {
        panic!()
    };
    assert_eq!(
        ending.ended,
        Ended::Released,
        "held throughout {:?}",
        ending.elapsed
    );
}

#[test]
fn a_lock_that_cannot_be_extended_is_known_lost_before_it_lapses() {
    let server = RedisServer::start();
    let holder = keep_alive_locker(&server, 100);
    // atMost 1500 ms, one attempt at most 300 ms: attempts run from 500 ms until the next one
    // would start later than 1200 ms; the lease is lost then, before the lapse at 1500 ms.
    let mut lease = holder
        .acquire(&ms("known-lost", 1500))
        .unwrap()
        .won()
        .unwrap();
    let acquired = Instant::now();
    assert_eq!(
        lease.take_warning(),
        None,
        "a schedule that holds is not warned about"
    );
    thread::sleep(Duration::from_millis(100));
    server.signal("-STOP");
    while !lease.is_lost() && acquired.elapsed() < Duration::from_secs(3) {
        thread::sleep(Duration::from_millis(5));
    }
    let seen = acquired.elapsed();
    server.signal("-CONT");
    eprintln!(
        "keep-alive: Redis frozen from 100 ms; the lease known lost at {seen:?} (lapse at 1500 ms)"
    );
    assert!(lease.is_lost(), "never known lost");
    assert!(
        seen >= Duration::from_millis(1100) && seen < Duration::from_millis(1500),
        "known lost at {seen:?}: should be after the last attempt that can end in time (~1200 ms) and before the lapse (1500 ms)"
    );
    assert_eq!(lease.release().ended, Ended::LostWhileRunning);
}

#[test]
fn a_keep_alive_schedule_that_cannot_hold_is_warned_at_acquire_once_per_at_most() {
    let server = RedisServer::start();
    // timeout-ms 1000: one extension may wait 3000 ms, so atMost below 9000 ms is too short.
    let holder = keep_alive_locker(&server, 1000);
    let take = |name: &str, at_most: i64| {
        let mut lease = holder.acquire(&ms(name, at_most)).unwrap().won().unwrap();
        let warning = lease.take_warning();
        assert_eq!(lease.take_warning(), None, "a warning is given once");
        lease.release();
        warning
    };
    let warning = take("tight", 6000).expect("atMost 6000 ms with 1 s timeouts is warned");
    assert!(
        warning.contains("lock 'tight'")
            && warning.contains("atMost 6000 ms")
            && warning.contains("3000 ms")
            && warning.contains("at least 9000 ms"),
        "{warning}"
    );
    assert_eq!(take("tight", 6000), None, "once per atMost, not every tick");
    assert!(
        take("other", 3000).is_some(),
        "another atMost is warned too"
    );
    assert_eq!(take("roomy", 9000), None);
    let plain = locker(&server, false);
    let mut lease = plain.acquire(&ms("plain", 100)).unwrap().won().unwrap();
    assert_eq!(
        lease.take_warning(),
        None,
        "no keep-alive, no schedule to warn about"
    );
    lease.release();
}

fn keep_alive_locker(server: &RedisServer, timeout_ms: i128) -> Locker {
    Locker::new(
        ConnSpec::from_map(&[
            ("uri".into(), SpecValue::Str(server.uri())),
            ("keep-alive".into(), SpecValue::Bool(true)),
            ("timeout-ms".into(), SpecValue::Int(timeout_ms)),
        ])
        .unwrap(),
    )
    .unwrap()
}

/// A keep-alive locker that reaches `server` through `proxy`.
fn proxied_locker(proxy: &Proxy, read_timeout_ms: i128) -> Locker {
    Locker::new(
        ConnSpec::from_map(&[
            ("uri".into(), SpecValue::Str(proxy.uri())),
            ("keep-alive".into(), SpecValue::Bool(true)),
            ("conn-timeout-ms".into(), SpecValue::Int(500)),
            ("read-timeout-ms".into(), SpecValue::Int(read_timeout_ms)),
        ])
        .unwrap(),
    )
    .unwrap()
}

/// Waits until the extender's EXTEND is held back by the proxy: an extension in flight.
fn until_an_extension_is_held(proxy: &Proxy) {
    let started = Instant::now();
    while proxy.held_bytes() == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "no extension came"
        );
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn an_extension_that_lands_after_the_release_does_not_lengthen_the_lock() {
    let server = RedisServer::start();
    let proxy = Proxy::start(server.port);
    let holder = proxied_locker(&proxy, 500);
    // atMost 6000 ms: the extension is due at 2000 ms; atLeast 5000 ms keeps the key after the
    // release for about 3000 ms, less than the 6000 ms a late extension would set.
    let mut lease = holder
        .acquire(&LockParams::from_millis("late-extend", 6000, 5000).unwrap())
        .unwrap()
        .won()
        .unwrap();
    // Caches EXTEND on the server, so that the held EVALSHA would run when it lands.
    assert!(lease.extend(6000, 5000).unwrap());
    proxy.hold_open_connections();
    until_an_extension_is_held(&proxy);
    let ending = holder.release(lease);
    let (Ended::KeptForAtLeast, Some(remaining_ms)) = (ending.ended, ending.kept_ms) else {
        panic!("{:?}", ending.ended)
    };
    // The held EXTEND reaches Redis after the release, as one stuck on a slow path would.
    proxy.let_through();
    thread::sleep(Duration::from_millis(200));
    let ttl: i64 = server.admin().pttl("dibs:late-extend").unwrap();
    eprintln!("late EXTEND after a release kept for {remaining_ms} ms: PTTL {ttl} ms");
    assert!(
        ttl > 0 && ttl <= remaining_ms as i64,
        "PTTL {ttl} ms after the late extension; the release kept {remaining_ms} ms"
    );
    // Inspection still says who held it.
    let state = holder.inspect("late-extend").unwrap().expect("kept");
    assert_eq!(state.holder.expect("a holder").pid, std::process::id());
}

#[test]
fn the_release_does_not_wait_for_an_extension_in_flight() {
    let server = RedisServer::start();
    let proxy = Proxy::start(server.port);
    // read-timeout 2000 ms: an extension in flight would hold a joining release that long.
    let holder = proxied_locker(&proxy, 2000);
    let lease = holder
        .acquire(&ms("in-flight", 3000))
        .unwrap()
        .won()
        .unwrap();
    proxy.hold_open_connections();
    until_an_extension_is_held(&proxy);
    let started = Instant::now();
    let ending = holder.release(lease);
    let took = started.elapsed();
    eprintln!("release with an extension in flight took {took:?}");
    assert!(
        took < Duration::from_millis(300),
        "the release waited {took:?}"
    );
    assert_eq!(ending.ended, Ended::Released);
    proxy.let_through();
    thread::sleep(Duration::from_millis(200));
    assert!(
        !server.exists("dibs:in-flight"),
        "the late extension found nothing"
    );
}
