//! Connection specs, credentials and error kinds against a real redis-server.

use crate::common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::RedisServer;
use dibs::{
    ConnSpec, Ended, Error, LockParams, Locker, Outcome, SpecValue, TickAcquire, TickState,
};
use redis::Commands;

fn params(name: &str) -> LockParams {
    LockParams::from_secs(name, 60, 0).unwrap()
}

fn held(locker: &Locker, name: &str) -> bool {
    let lease = locker.acquire(&params(name)).unwrap().won().expect("won");
    // Keep the key so the test can look at where it landed.
    std::mem::forget(lease);
    true
}

#[test]
fn password_in_uri_and_map_and_db_selection() {
    let server = RedisServer::start_with(&["--requirepass", "p@ss:w/rd"]);
    let uri = format!("redis://:p%40ss:w/rd@127.0.0.1:{}/3", server.port);
    assert!(held(
        &Locker::new(ConnSpec::from_uri(&uri).unwrap()).unwrap(),
        "in-db-3"
    ));
    let mut admin = server.admin();
    let _: () = redis::cmd("SELECT").arg(3).query(&mut admin).unwrap();
    assert!(admin.exists::<_, bool>("dibs:in-db-3").unwrap());

    let spec = ConnSpec::from_map(&[
        ("port".into(), SpecValue::Int(server.port as i128)),
        ("password".into(), SpecValue::Str("p@ss:w/rd".into())),
    ])
    .unwrap();
    assert!(held(&Locker::new(spec).unwrap(), "via-map"));
}

#[test]
fn a_wrong_password_is_an_authentication_error_without_the_password() {
    let server = RedisServer::start_with(&["--requirepass", "right-secret"]);
    let uri = format!("redis://:wrong-secret-42@127.0.0.1:{}", server.port);
    let err = Locker::new(ConnSpec::from_uri(&uri).unwrap())
        .unwrap()
        .execute(&params("x"), || ())
        .unwrap_err();
    assert!(matches!(err, Error::Authentication(_)), "{err:?}");
    let message = err.to_string();
    assert!(
        !message.contains("wrong-secret-42") && !message.contains("right-secret"),
        "{message}"
    );
    assert!(
        message.contains(&format!("127.0.0.1:{}", server.port)),
        "{message}"
    );
}

#[test]
fn acl_users_and_permission_errors() {
    let server = RedisServer::start();
    let mut admin = server.admin();
    // The minimal ACL of the README: SET, GET and the scripts, on dibs's keys only.
    let _: () = redis::cmd("ACL")
        .arg(&[
            "SETUSER",
            "locker",
            "on",
            ">locker-pw",
            "resetkeys",
            "~dibs:*",
            "resetchannels",
            "-@all",
        ])
        .arg(&[
            "+set", "+get", "+evalsha", "+eval", "+pexpire", "+del", "+time", "+info", "+wait",
            "+ping", "+hello", "+select",
        ])
        .query(&mut admin)
        .unwrap();
    let _: () = redis::cmd("ACL")
        .arg(&[
            "SETUSER",
            "nobody",
            "on",
            ">nobody-pw",
            "~other:*",
            "-@all",
            "+ping",
            "+hello",
        ])
        .query(&mut admin)
        .unwrap();
    let ok = format!("redis://locker:locker-pw@127.0.0.1:{}", server.port);
    let locker = Locker::new(ConnSpec::from_uri(&ok).unwrap()).unwrap();
    for _ in 0..2 {
        let outcome = locker.execute(&params("acl"), || ()).unwrap();
        let Outcome::Ran { ending, .. } = outcome else {
            panic!("should run")
        };
        assert_eq!(ending.ended, Ended::Released);
    }
    let denied = format!("redis://nobody:nobody-pw@127.0.0.1:{}", server.port);
    let err = Locker::new(ConnSpec::from_uri(&denied).unwrap())
        .unwrap()
        .execute(&params("acl"), || ())
        .unwrap_err();
    assert!(matches!(err, Error::Permission(_)), "{err:?}");
    assert!(err.to_string().contains("acquiring lock 'acl'"), "{err}");
}

#[test]
fn an_acl_without_time_is_warned_about_once_and_every_token_is_0() {
    let server = RedisServer::start();
    // The README's minimal ACL less +time: the lock works, but its token cannot be minted.
    let _: () = redis::cmd("ACL")
        .arg(&[
            "SETUSER",
            "no-time",
            "on",
            ">pw",
            "resetkeys",
            "~dibs:*",
            "-@all",
            "+set",
            "+get",
            "+evalsha",
            "+eval",
            "+pexpire",
            "+del",
            "+info",
            "+wait",
            "+ping",
            "+hello",
            "+select",
        ])
        .query(&mut server.admin())
        .unwrap();
    let uri = format!("redis://no-time:pw@127.0.0.1:{}", server.port);
    let locker = Locker::new(ConnSpec::from_uri(&uri).unwrap()).unwrap();
    let mut first = locker
        .acquire(&params("no-time"))
        .unwrap()
        .won()
        .expect("won");
    assert_eq!(first.fence(), 0);
    let warning = first.take_warning().expect("a warning");
    assert!(
        warning.contains("refused TIME") && warning.contains("+time"),
        "{warning}"
    );
    assert!(!warning.contains("pw@"), "{warning}");
    assert_eq!(first.release().ended, Ended::Released);
    let mut second = locker
        .acquire(&params("no-time"))
        .unwrap()
        .won()
        .expect("won");
    assert_eq!(second.fence(), 0);
    assert_eq!(second.take_warning(), None, "warned once");
    let _ = second.release();
    // With +time, a token and no warning.
    let _: () = redis::cmd("ACL")
        .arg(&["SETUSER", "no-time", "+time"])
        .query(&mut server.admin())
        .unwrap();
    let mut third = Locker::new(ConnSpec::from_uri(&uri).unwrap())
        .unwrap()
        .acquire(&params("no-time"))
        .unwrap()
        .won()
        .expect("won");
    assert!(third.fence() > 0);
    assert_eq!(third.take_warning(), None);
    let _ = third.release();
}

#[test]
fn unix_socket() {
    let sock = std::env::temp_dir().join(format!("dibs-{}.sock", std::process::id()));
    let sock = sock.to_str().unwrap().to_owned();
    let _server = RedisServer::start_with(&["--unixsocket", &sock]);
    // redis-server opens the socket after its TCP port, which is what the fixture waits for.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !std::path::Path::new(&sock).exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let spec = ConnSpec::from_uri(&format!("unix://{sock}")).unwrap();
    let outcome = Locker::new(spec)
        .unwrap()
        .execute(&params("unix"), || 7)
        .unwrap();
    assert!(matches!(outcome, Outcome::Ran { value: 7, .. }));
    drop(_server);
    let _ = std::fs::remove_file(&sock); // a killed server leaves it behind
}

#[test]
fn key_prefix_is_configurable() {
    let server = RedisServer::start();
    let spec = ConnSpec::from_map(&[
        ("uri".into(), SpecValue::Str(server.uri())),
        ("key-prefix".into(), SpecValue::Str("app:locks:".into())),
    ])
    .unwrap();
    let locker = Locker::new(spec).unwrap();
    assert_eq!(locker.key("n"), "app:locks:n");
    assert!(held(&locker, "n"));
    assert!(server.exists("app:locks:n"));
}

#[test]
fn making_a_locker_does_no_network_io() {
    let port = common::free_port();
    let spec = ConnSpec::from_uri(&format!("redis://127.0.0.1:{port}")).unwrap();
    assert!(Locker::new(spec).is_ok());
}

/// A unix socket whose listen backlog is full, as a frozen server's is: a connect waits for ever.
#[cfg(unix)]
#[test]
fn a_unix_socket_with_a_full_backlog_is_a_timeout_within_the_connect_timeout() {
    use redis::io::tcp::socket2::{Domain, SockAddr, Socket, Type};
    let dir = std::env::temp_dir().join(format!("dibs-backlog-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("full.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap(); // never accepts
    let mut fillers = Vec::new();
    loop {
        let s = Socket::new(Domain::UNIX, Type::STREAM, None).unwrap();
        s.set_nonblocking(true).unwrap();
        match s.connect(&SockAddr::unix(&path).unwrap()) {
            Ok(()) => fillers.push(s),
            Err(_) => break, // the backlog is full
        }
        assert!(fillers.len() < 100_000, "the backlog never filled");
    }
    let spec = ConnSpec::from_map(&[
        (
            "uri".into(),
            SpecValue::Str(format!("unix://{}", path.display())),
        ),
        ("timeout-ms".into(), SpecValue::Int(500)),
    ])
    .unwrap();
    let started = Instant::now();
    let err = Locker::new(spec)
        .unwrap()
        .execute(&params("backlog"), || ())
        .unwrap_err();
    let waited = started.elapsed();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    assert!(
        waited >= Duration::from_millis(450) && waited < Duration::from_millis(900),
        "{waited:?}"
    );
    drop(listener);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_shared_pool_closes_its_connections_once_idle_past_the_idle_timeout() {
    let server = RedisServer::start();
    // One admin connection for every count, counted out: a fresh one per count would leave the
    // last one's close racing the next CLIENT LIST (a clean-clone run counted it once so).
    let admin = std::cell::RefCell::new(server.admin());
    let clients = || -> usize {
        let list: String = redis::cmd("CLIENT")
            .arg("LIST")
            .query(&mut *admin.borrow_mut())
            .unwrap();
        list.lines().count() - 1
    };
    let spec = |idle_ms: i128| {
        ConnSpec::from_map(&[
            ("uri".into(), SpecValue::Str(server.uri())),
            ("idle-timeout-ms".into(), SpecValue::Int(idle_ms)),
        ])
        .unwrap()
    };
    // As a password rotation would leave one: a shared locker that is used, then never again.
    let locker = Locker::shared(spec(300)).unwrap();
    assert!(matches!(
        locker.execute(&params("reaped"), || ()).unwrap(),
        Outcome::Ran { .. }
    ));
    assert_eq!(clients(), 1, "the pooled connection is open after the call");
    let started = Instant::now();
    while clients() > 0 && started.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let closed_after = started.elapsed();
    eprintln!(
        "idle-timeout-ms 300: the unused shared pool's connection closed after {closed_after:?}"
    );
    assert_eq!(clients(), 0, "still open after {closed_after:?}");
    assert!(
        closed_after >= Duration::from_millis(250),
        "{closed_after:?}"
    );

    // The control: within its idle timeout, a pool keeps its connection for the next call.
    let kept = Locker::shared(spec(60_000)).unwrap();
    assert!(matches!(
        kept.execute(&params("kept"), || ()).unwrap(),
        Outcome::Ran { .. }
    ));
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(clients(), 1, "a connection idle within its timeout is kept");
}

/// Issue 43, item 2: every feature runs as exactly the user of the README's ACL line (read from
/// the README): a lock with its history, `atLeast`, the fencing token, keep-alive's extension, a
/// tick, catch-up of a missed tick, a start taken back, inspect, the listings, history, and a
/// forced release. Before, the line lacked `+exists`, and every catch-up call was refused.
#[test]
fn every_feature_runs_as_the_user_of_the_readmes_acl_line() {
    let server = RedisServer::start();
    let readme = include_str!("../../README.md");
    let line = readme
        .lines()
        .find(|l| l.starts_with("ACL SETUSER dibs "))
        .expect("the README's ACL line");
    let _: () = redis::cmd("ACL")
        .arg(line.split_whitespace().skip(1).collect::<Vec<_>>())
        .query(&mut server.admin())
        .unwrap();
    let uri = format!("redis://dibs:secret@127.0.0.1:{}", server.port);
    let l = Locker::new(ConnSpec::from_uri(&uri).unwrap()).unwrap();
    let Outcome::Ran { ending, .. } = l.execute(&params("plain"), || ()).unwrap() else {
        panic!("runs")
    };
    assert_eq!(ending.ended, Ended::Released);
    let kept = LockParams::from_secs("kept", 60, 30).unwrap();
    let Outcome::Ran { ending, .. } = l.execute(&kept, || ()).unwrap() else {
        panic!("runs")
    };
    assert!(matches!(ending.ended, Ended::KeptForAtLeast), "{ending:?}");

    let mut lease = l.acquire(&params("fenced")).unwrap().won().expect("won");
    assert!(lease.fence() > 0);
    assert_eq!(lease.take_warning(), None, "nothing refused");
    assert!(lease.extend(60_000, 0).unwrap(), "keep-alive's extension");
    assert!(l.inspect("fenced").unwrap().is_some());
    let running = l.running("fenced", Duration::from_secs(5)).unwrap();
    assert!(running.complete && running.items.len() == 1);
    let token = running.items[0].token.clone().expect("its token");
    assert!(l.locks("*", 100, Duration::from_secs(5)).unwrap().complete);
    assert_eq!(
        l.force_release("fenced", &token, "ops").unwrap(),
        dibs::ForcedRelease::Released
    );
    drop(lease.release());

    // A tick, then catch-up of one no instance ran, looked at and run.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let first = LockParams::for_tick("nightly", "2026-12-01", 60_000, 1).unwrap();
    let TickAcquire::Won(run) = l.acquire_unrun(&first, now - 60_000, false).unwrap() else {
        panic!("the tick due now is won")
    };
    drop(run.release());
    // Due after the first run was recorded: the history's clock is the server's.
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(&mut server.admin()).unwrap();
    let later = secs * 1000 + micros / 1000 + 1;
    let missed = LockParams::for_tick("nightly", "2026-12-02", 60_000, 1).unwrap();
    assert!(matches!(
        l.tick_state(&missed, later).unwrap(),
        TickState::Missed
    ));
    let TickAcquire::Won(caught_up) = l.acquire_unrun(&missed, later, true).unwrap() else {
        panic!("the missed tick is caught up")
    };
    drop(caught_up.release());
    let runs = l.history("nightly", 10).unwrap().runs;
    assert_eq!(runs.len(), 2, "{runs:#?}");
    assert!(l
        .jobs(10, Duration::from_secs(5))
        .unwrap()
        .items
        .iter()
        .any(|j| j.name == "nightly"));
}
