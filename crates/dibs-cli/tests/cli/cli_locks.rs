//! The held locks, against a real redis-server: `dibs status`, `dibs locks` and `dibs release`.

// The core's test fixtures (a redis-server of the test's own, a throwaway PKI), shared.
use crate::common;
use crate::support;

use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::RedisServer;
use redis::Commands;
use support::{dibs, ops, text};

#[test]
fn status_prints_the_holder_and_the_remaining_ttl() {
    let server = RedisServer::start();
    let uri = server.uri();
    let out = dibs(&["status", "--redis", &uri, "--lock", "s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "lock 's' is free\n");

    let mut holder = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args([
            "run",
            "--redis",
            &uri,
            "--lock",
            "s",
            "--at-most",
            "10m",
            "--",
            "sleep",
            "3",
        ])
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !server.exists("dibs:s") {
        assert!(started.elapsed() < Duration::from_secs(5));
        thread::sleep(Duration::from_millis(20));
    }
    let out = dibs(&["status", "--redis", &uri, "--lock", "s"]);
    let line = text(&out.stdout);
    assert!(line.contains(&format!("pid {}", holder.id())), "{line}");
    assert!(
        line.contains("expires in 9 min") || line.contains("expires in 10 min"),
        "{line}"
    );
    holder.kill().unwrap();
    let _ = holder.wait();
}

#[test]
fn locks_lists_the_held_locks_and_release_forces_one_into_the_history() {
    let server = RedisServer::start();
    let uri = server.uri();
    assert_eq!(
        text(&ops(&uri, &["locks"]).stdout),
        "no lock held (matching '*')\n"
    );
    let holder = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args([
            "run",
            "--redis",
            &uri,
            "--lock",
            "stuck-job",
            "--at-most",
            "60s",
            "--",
            "sleep",
            "5",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !server.exists("dibs:stuck-job") {
        assert!(Instant::now() < deadline, "the holder never took the lock");
        thread::sleep(Duration::from_millis(20));
    }
    let out = ops(&uri, &["locks"]);
    let listed = text(&out.stdout);
    assert!(listed.starts_with("NAME "), "{listed}");
    assert!(
        listed.contains(&format!("stuck-job  {} pid {}", hostname(), holder.id())),
        "{listed}"
    );
    assert!(!listed.contains("TOKEN"), "no token unless asked: {listed}");
    let value: String = server.admin().get("dibs:stuck-job").unwrap();
    let token = &value[..36];
    assert!(!listed.contains(token), "{listed}");
    let with_tokens = text(&ops(&uri, &["locks", "stuck*", "--show-tokens"]).stdout);
    assert!(with_tokens.contains(token), "{with_tokens}");

    // Asked first: a "no" touches nothing.
    let release = |answer: &str, extra: &[&str]| {
        let mut args = vec!["release", "stuck-job", "--redis", &uri];
        args.extend_from_slice(extra);
        let mut child = Command::new(env!("CARGO_BIN_EXE_dibs"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(answer.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let no = release("n\n", &[]);
    assert_eq!(no.status.code(), Some(1));
    assert!(
        text(&no.stderr).contains("release lock 'stuck-job', held by"),
        "{}",
        text(&no.stderr)
    );
    assert!(server.exists("dibs:stuck-job"));
    // A token that is not the holder's: left alone.
    let wrong = format!(
        "{}{}",
        &token[..35],
        if token.ends_with('0') { '1' } else { '0' }
    );
    let other = release("", &["--token", &wrong]);
    assert_eq!(other.status.code(), Some(1), "{}", text(&other.stdout));
    assert!(server.exists("dibs:stuck-job"));
    let yes = release("y\n", &[]);
    assert_eq!(yes.status.code(), Some(0), "{}", text(&yes.stderr));
    assert!(text(&yes.stdout).contains("recorded in its job's history as forced by"));
    assert!(!server.exists("dibs:stuck-job"));
    let again = release("", &["--yes"]);
    assert_eq!(
        text(&again.stdout),
        "lock 'stuck-job' is not held; nothing to release\n"
    );

    let holder = holder.wait_with_output().unwrap();
    assert!(
        text(&holder.stderr).contains("was no longer ours"),
        "{}",
        text(&holder.stderr)
    );
    let history = text(&ops(&uri, &["history", "stuck-job"]).stdout);
    let lines: Vec<&str> = history.lines().collect();
    assert_eq!(lines.len(), 4, "{history}");
    assert!(lines[2].ends_with("no-longer-ours"), "{history}");
    assert!(lines[3].contains("forced by "), "{history}");
    assert!(!history.contains(token), "{history}");
}

/// Issue 29 (3): `dibs locks` on a server whose keyspace is mostly other keys (a cache sharing
/// the server: 1,000,000 of them) lists every held lock, or says that its list is partial and
/// exits 3. Before, the scan stopped after 100 `SCAN` calls and said "no lock held" while 5 were.
#[test]
fn locks_among_a_million_other_keys_lists_every_held_lock_or_says_it_is_partial() {
    let server = RedisServer::start();
    let uri = server.uri();
    let mut admin = server.admin();
    for batch in 0..10 {
        let _: () = redis::cmd("EVAL")
            .arg("for i = 1, 100000 do redis.call('SET', 'cache:' .. ARGV[1] .. ':' .. i, 'x') end")
            .arg(0)
            .arg(batch)
            .query(&mut admin)
            .unwrap();
    }
    let locker = dibs::Locker::new(dibs::ConnSpec::from_uri(&uri).unwrap()).unwrap();
    let held: Vec<_> = (1..=5)
        .map(|n| {
            let params = dibs::LockParams::from_millis(&format!("held-{n}"), 60_000, 0).unwrap();
            locker.acquire(&params).unwrap().won().unwrap()
        })
        .collect();
    let started = Instant::now();
    let out = ops(&uri, &["locks"]);
    let took = started.elapsed();
    let listed = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{listed}");
    for n in 1..=5 {
        assert!(listed.contains(&format!("held-{n} ")), "{listed}");
    }
    assert!(!listed.contains("partial"), "{listed}");
    eprintln!("dibs locks over 1,000,005 keys: {} ms", took.as_millis());

    let out = ops(&uri, &["locks", "--budget", "20ms"]);
    let partial = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{partial}");
    assert!(partial.contains("partial: scanned about "), "{partial}");
    assert!(partial.contains(" of 1000005 keys"), "{partial}");
    assert!(!partial.contains("no lock held"), "{partial}");
    for lease in held {
        let _ = lease.release();
    }
}

/// Issue 30 (5): a value under the prefix that dibs did not write, such as the one that made
/// `dibs locks` and `dibs status` panic (exit 101), is shown as such; the value is never printed.
#[test]
fn a_foreign_value_under_the_prefix_is_shown_as_a_value_dibs_did_not_write() {
    let server = RedisServer::start();
    let uri = server.uri();
    let value = "0123456789abcdef0123456789abcdef;hhé;1;2";
    let mut admin = server.admin();
    let _: () = admin.set("dibs:foreign", value).unwrap();
    let _: () = admin
        .set(b"dibs:\xffbytes".as_slice(), b"\xfe\xff;x".as_slice())
        .unwrap();
    let status = dibs(&["status", "--redis", &uri, "--lock", "foreign"]);
    assert_eq!(status.status.code(), Some(0), "{}", text(&status.stderr));
    let said = text(&status.stdout);
    assert!(
        said.contains("held (by a value dibs did not write)"),
        "{said}"
    );
    let locks = ops(&uri, &["locks", "--show-tokens"]);
    assert_eq!(locks.status.code(), Some(0), "{}", text(&locks.stderr));
    let listed = text(&locks.stdout);
    assert!(
        listed.contains("foreign") && listed.contains("(a value dibs did not write)"),
        "{listed}"
    );
    assert!(
        listed.contains("\u{fffd}bytes"),
        "a key of other bytes, shown: {listed}"
    );
    for out in [&status, &locks] {
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(
            !all.contains("hhé") && !all.contains("0123456789abcdef0123"),
            "{all}"
        );
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_owned()
}

/// Runs `dibs ARGS --redis URI` and returns its stdout and its peak resident set (KiB), from the
/// kernel's own count (`wait4`'s `ru_maxrss`).
#[allow(clippy::zombie_processes)] // reaped by wait4, which also gives its rusage
fn dibs_measured(uri: &str, args: &[&str]) -> (String, i64) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args(args)
        .args(["--redis", uri])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data, filled in by wait4 for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    (stdout, usage.ru_maxrss)
}

/// Issue 43, item 5: a 300 MB value under the prefix (made on the server with `SETRANGE`) is
/// never loaded whole: `status`, `locks` and `history` stay under 64 MB of RSS and call it a
/// value dibs did not write. Before, `status` took 618 MB and `locks` 926 MB.
#[test]
fn a_huge_value_under_the_prefix_is_never_read_whole() {
    let server = RedisServer::start();
    let uri = server.uri();
    let _: i64 = redis::cmd("SETRANGE")
        .arg("dibs:huge")
        .arg(300 * 1024 * 1024 - 1)
        .arg("x")
        .query(&mut server.admin())
        .unwrap();
    for args in [
        &["status", "--lock", "huge"][..],
        &["locks"][..],
        &["history", "huge"][..],
    ] {
        let (stdout, max_rss_kib) = dibs_measured(&uri, args);
        println!("dibs {args:?}: peak RSS {max_rss_kib} KiB");
        assert!(
            max_rss_kib < 64 * 1024,
            "{args:?}: {max_rss_kib} KiB\n{stdout}"
        );
        if args[0] != "history" {
            assert!(
                stdout.contains("a value dibs did not write"),
                "{args:?}: {stdout}"
            );
        }
    }
}

/// The second attack on issue 43: `dibs locks | head -1` made dibs panic ("failed printing to
/// stdout: Broken pipe", a backtrace, exit 101). A listing whose reader went away ends quietly,
/// by SIGPIPE, as `ls | head` does.
#[test]
fn a_listing_whose_reader_goes_away_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    let server = RedisServer::start();
    // More than a pipe holds: 3,000 rows.
    let _: () = redis::cmd("EVAL")
        .arg("for i = 1, 3000 do redis.call('SET', 'dibs:held-' .. i, 'x', 'PX', 600000) end")
        .arg(0)
        .query(&mut server.admin())
        .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dibs"))
        .args(["locks", "--redis", &server.uri(), "--limit", "10000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader is dropped here, as `head -1` exits.
    let out = child.wait_with_output().unwrap();
    let said = text(&out.stderr);
    assert!(!said.contains("panicked"), "{said}");
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}: {said}",
        out.status
    );
}
