//! A tick's run is recorded from its start (`script::tick`), against a real redis-server and a
//! Cluster, and against the faults that could make that record lie: a release that fails, a
//! holder that dies, a lost or late reply of the acquire, durable acquire that cannot confirm, a
//! claim retried on a Cluster, an operator's forced release. The start is there exactly when
//! the task may have run: catch-up never runs a tick twice, and never takes a tick whose task
//! did not run for one that did.

use crate::common;
use crate::common::cluster;
use crate::common::replication;
use crate::common::topology;

use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::proxy::Proxy;
use common::RedisServer;
use dibs::{
    ConnSpec, Ended, LockParams, Locker, SpecValue, TaskResult, TickAcquire, TickState, Verdict,
};
use replication::{replica_of, wait_for_replicas};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn locker(uri: &str, extra: &[(&str, SpecValue)]) -> Locker {
    let mut entries = vec![("uri".to_owned(), SpecValue::Str(uri.to_owned()))];
    entries.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
    Locker::new(ConnSpec::from_map(&entries).unwrap()).unwrap()
}

fn locker_with(server: &RedisServer, extra: &[(&str, SpecValue)]) -> Locker {
    locker(&server.uri(), extra)
}

/// The key of a lock under the default prefix.
fn key(params: &LockParams) -> String {
    format!("{}{}", dibs::DEFAULT_KEY_PREFIX, params.name())
}

/// The entries of a job's stream, oldest first: `id run`.
fn stream(admin: &mut redis::Connection, job: &str) -> Vec<String> {
    let entries: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
        .arg(format!("dibs:\u{1f}{{history}}:{job}"))
        .arg("-")
        .arg("+")
        .query(admin)
        .unwrap();
    entries
        .into_iter()
        .map(|(id, f)| format!("{id} {}", f[0].1))
        .collect()
}

/// The start entries left in a job's stream.
fn starts(admin: &mut redis::Connection, job: &str) -> usize {
    stream(admin, job)
        .iter()
        .filter(|e| e.contains(" started;"))
        .count()
}

/// A job with a first recorded run, so that catch-up can prove the misses of its later ticks.
fn first_run(locker: &Locker, job: &str) {
    let first = LockParams::for_tick(job, "2026-12-01", 60_000, 1).unwrap();
    let TickAcquire::Won(lease) = locker
        .acquire_unrun(&first, now_ms() - 60_000, false)
        .unwrap()
    else {
        panic!("a first tick is won")
    };
    drop(lease.release());
}

/// Freezes `server` (SIGSTOP) for `ms`, from another thread, then thaws it.
fn freeze(server: &RedisServer, ms: u64) -> thread::JoinHandle<()> {
    let pid = server.pid();
    server.signal("-STOP");
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(ms)); // the fault's length, not a wait for an event
        let _ = std::process::Command::new("kill")
            .args(["-CONT", &pid.to_string()])
            .status();
    })
}

/// Waits for the lock of `params` to expire, as a tick's done-mark does after atMost.
fn wait_gone(server: &RedisServer, params: &LockParams) {
    let start = std::time::Instant::now();
    // A 300 ms atMost; 30 s is 100 times that.
    while server.exists(&key(params)) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the lock never expired"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_tick_that_started_is_never_caught_up_whatever_became_of_its_release() {
    let server = RedisServer::start();
    let proxy = Proxy::start(server.port);
    let spec = |uri: String, extra: &[(&str, SpecValue)]| {
        let mut entries = vec![
            ("uri".to_owned(), SpecValue::Str(uri)),
            ("timeout-ms".to_owned(), SpecValue::Int(300)),
        ];
        entries.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
        Locker::new(ConnSpec::from_map(&entries).unwrap()).unwrap()
    };
    let cut_off = spec(proxy.uri(), &[]);
    let other = locker_with(&server, &[]);
    first_run(&other, "billing");

    // The tick due now runs on an instance whose path to Redis is cut as its task ends: the
    // release fails, no ending is recorded, and its done-mark expires after atMost.
    let billing = LockParams::for_tick("billing", "2026-12-05", 300, 1).unwrap();
    let due = now_ms();
    let TickAcquire::Won(lease) = cut_off.acquire_unrun(&billing, due, false).unwrap() else {
        panic!("the tick due now is won")
    };
    proxy.cut();
    assert!(matches!(lease.release().ended, Ended::ReleaseFailed));
    wait_gone(&server, &billing);

    // Another instance's catch-up finds its start: the tick ran, and is not run again.
    assert_eq!(other.tick_state(&billing, due).unwrap(), TickState::Ran);
    assert!(matches!(
        other.acquire_unrun(&billing, due, true).unwrap(),
        TickAcquire::Ran
    ));
    assert!(matches!(
        other.acquire_unrun(&billing, due, false).unwrap(),
        TickAcquire::Ran
    ));
    // The history says what it knows: it started, and its end is not recorded.
    let history = other.history("billing", 10).unwrap();
    let unended = &history.runs[0];
    assert_eq!(unended.name, "billing@2026-12-05");
    assert_eq!(unended.ended, Ended::Unended);
    assert_eq!(unended.task, Some(TaskResult::Unknown));
    assert!(unended.fence > 0);
    // Whether its tick ran to success cannot be told (`dibs check billing@2026-12-05`); the
    // job's first run, a success, still counts for the job.
    let tick_history = other.history("billing@2026-12-05", 10).unwrap();
    assert!(matches!(
        tick_history.verdict(
            "billing@2026-12-05",
            now_ms(),
            &common::within(Duration::from_secs(60))
        ),
        Verdict::Unknown { .. }
    ));
    assert!(matches!(
        history.verdict(
            "billing",
            now_ms(),
            &common::within(Duration::from_secs(60))
        ),
        Verdict::Ran(_)
    ));
    // A holder that died mid-run leaves the same: its start, and no catch-up.
    let died = LockParams::for_tick("billing", "2026-12-06", 300, 1).unwrap();
    let TickAcquire::Won(lease) = other.acquire_unrun(&died, now_ms(), false).unwrap() else {
        panic!("won")
    };
    std::mem::forget(lease); // as a SIGKILL: no release, no drop
    wait_gone(&server, &died);
    assert!(matches!(
        other.acquire_unrun(&died, now_ms(), true).unwrap(),
        TickAcquire::Ran
    ));

    // Rerunning such a tick is an explicit choice.
    let rerun = locker_with(&server, &[("retry-unended-ticks", SpecValue::Bool(true))]);
    let TickAcquire::Won(lease) = rerun.acquire_unrun(&billing, due, true).unwrap() else {
        panic!("retry-unended-ticks runs the tick again")
    };
    assert!(matches!(lease.release().ended, Ended::KeptForAtLeast));
    let runs = rerun.history("billing@2026-12-05", 10).unwrap().runs;
    assert_eq!(runs.len(), 2, "{runs:#?}");
    assert!(runs[0].succeeded() && runs[0].catch_up, "{runs:#?}");
    assert_eq!(runs[1].ended, Ended::Unended);
}

/// A lost reply of the acquire (the proxy drops what the server answers): the first try timed
/// out, its lock is taken back with its start (`script::UNSTART`, queued behind it), and the
/// retry on a fresh connection writes the one start of the run. Before, the first try's start
/// stayed: a plain tick showed two runs (one unended for ever), and catch-up found its own
/// orphan start and answered Ran for a tick it never ran.
#[test]
fn a_lost_reply_of_the_acquire_leaves_one_start_and_no_orphan() {
    for catch_up in [false, true] {
        for i in 0..5 {
            let server = RedisServer::start();
            let proxy = Proxy::start(server.port);
            let l = locker(&proxy.uri(), &[("read-timeout-ms", SpecValue::Int(300))]);
            first_run(&l, "lr");
            // Both scripts cached, as on a server that has run a while.
            let warm = LockParams::for_tick("lr", "2026-11-30", 60_000, 1).unwrap();
            drop(l.acquire(&warm).unwrap().won().unwrap().release());
            let t =
                LockParams::for_tick("lr", &format!("2026-12-02T{i:02}:00"), 60_000, 1).unwrap();
            proxy.mute_open_connections();
            let acquire = || {
                if catch_up {
                    l.acquire_unrun(&t, now_ms() + 10, true).unwrap()
                } else {
                    l.acquire(&t)
                        .unwrap()
                        .won()
                        .map_or(TickAcquire::Taken, TickAcquire::Won)
                }
            };
            let found = match acquire() {
                TickAcquire::Won(lease) => TickAcquire::Won(lease),
                // The retry, on a new connection, may reach the server before the take-back
                // queued on the first one (the proxy forwards each connection on a thread of
                // its own): it finds the first try's lock. Once the take-back has landed, the
                // tick is free and unrun.
                _ => {
                    let key = format!("{}{}", dibs::DEFAULT_KEY_PREFIX, t.name());
                    replication::wait_for("the take-back", Duration::from_secs(10), || {
                        !server.exists(&key)
                    });
                    acquire()
                }
            };
            let TickAcquire::Won(lease) = found else {
                panic!("catch_up {catch_up}: the retry wins the tick, nobody ran it")
            };
            drop(lease.release());
            let mut admin = server.admin();
            let of_tick: Vec<String> = stream(&mut admin, "lr")
                .into_iter()
                .filter(|e| e.ends_with(t.name()))
                .collect();
            assert_eq!(
                of_tick.len(),
                1,
                "catch_up {catch_up}: one run, one entry: {of_tick:#?}"
            );
            assert!(!of_tick[0].contains(" started;"), "{of_tick:#?}");
        }
    }
}

/// A server frozen during the acquire past the read timeout: the call fails, and when the
/// server thaws, the doomed SET's lock and its start are taken back together. The tick is then
/// missed, not ran: catch-up runs it.
#[test]
fn an_acquire_that_timed_out_leaves_no_start_once_the_server_thaws() {
    let server = RedisServer::start();
    let l = locker_with(&server, &[("read-timeout-ms", SpecValue::Int(400))]);
    first_run(&l, "exp");
    let t = LockParams::for_tick("exp", "2026-12-02T00:00", 60_000, 1).unwrap();
    let due = now_ms() + 10; // after the first run: a tick it could miss
    let thaw = freeze(&server, 1_500);
    let found = l.acquire_unrun(&t, due, true);
    thaw.join().unwrap();
    if let Ok(TickAcquire::Won(lease)) = found {
        // A retry on a fresh connection may win after the thaw: then it is the tick's run.
        drop(lease.release());
        assert_eq!(l.tick_state(&t, due).unwrap(), TickState::Ran);
        return;
    }
    let mut admin = server.admin();
    // The queued take-back runs in the server's order, right after the SET it follows.
    let gone = || !server.exists(&key(&t)) && starts(&mut server.admin(), "exp") == 0;
    topology::wait_until("the doomed lock and its start taken back", gone);
    assert_eq!(
        starts(&mut admin, "exp"),
        0,
        "{:#?}",
        stream(&mut admin, "exp")
    );
    assert_eq!(l.tick_state(&t, due).unwrap(), TickState::Missed);
    assert!(matches!(
        l.acquire_unrun(&t, due, true).unwrap(),
        TickAcquire::Won(_)
    ));
}

/// Durable acquire that cannot confirm a tick's lock (its replica cut off) gives the lock back
/// and does not run the task: its start goes with it, so the tick stays missed.
#[test]
fn an_unconfirmed_acquire_leaves_no_start() {
    let master = RedisServer::start();
    let proxy = Proxy::start(master.port);
    let _replica = replica_of(master.port, Some(proxy.port));
    wait_for_replicas(&master, "1");
    let l = locker_with(&master, &[("read-timeout-ms", SpecValue::Int(1000))]);
    first_run(&l, "bill");
    proxy.mute_open_connections();
    let t = LockParams::for_tick("bill", "2026-12-02T00:00", 60_000, 1).unwrap();
    let due = now_ms() + 10; // after the first run: a tick it could miss
    let found = l.acquire_unrun(&t, due, true);
    assert!(
        matches!(found, Ok(TickAcquire::Unconfirmed(_))),
        "{:?}",
        found.map(|f| matches!(f, TickAcquire::Won(_)))
    );
    let mut admin = master.admin();
    assert!(!master.exists(&key(&t)));
    assert_eq!(
        starts(&mut admin, "bill"),
        0,
        "{:#?}",
        stream(&mut admin, "bill")
    );
    let off = locker_with(&master, &[("durable", SpecValue::Str("off".into()))]);
    assert_eq!(off.tick_state(&t, due).unwrap(), TickState::Missed);
}

/// An operator's forced release mid-run stands for the run: the holder's start goes, so one run
/// reads as the forced entry (and its holder's own ending after), never as an unended run too.
#[test]
fn a_forced_release_takes_the_place_of_the_runs_start() {
    let server = RedisServer::start();
    let l = locker_with(&server, &[]);
    first_run(&l, "f");
    let t = LockParams::for_tick("f", "2026-12-02T00:00", 60_000, 1).unwrap();
    let lease = l.acquire(&t).unwrap().won().unwrap();
    let token = lease.value()[..36].to_owned();
    assert_eq!(
        l.force_release(t.name(), &token, "ops").unwrap(),
        dibs::ForcedRelease::Released
    );
    let runs = l.history(t.name(), 10).unwrap().runs;
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0].ended, Ended::Forced);
    // The holder dies: nothing reads as unended, and catch-up counts the tick as run.
    std::mem::forget(lease);
    assert_eq!(starts(&mut server.admin(), "f"), 0);
    assert_eq!(l.tick_state(&t, now_ms()).unwrap(), TickState::Ran);
}

/// On a Cluster, the history's master frozen during the claim: its first try lands at the thaw
/// and the retry finds it. It is its own start, not another run's: the tick is won (or, where
/// the call failed, left missed, with no start of a run that never was), never given up as Ran.
#[test]
fn on_a_cluster_a_retried_claim_finds_its_own_start() {
    let (nodes, addrs) = cluster::start_cluster(&[], None);
    let l = locker(
        &format!("redis+cluster://{}", addrs.join(",")),
        &[("timeout-ms", SpecValue::Int(500))],
    );
    let slot = |key: &str| nodes[0].keyslot(key);
    let history_owner = cluster::owner_of(&nodes, slot("dibs:\u{1f}{history}:pay"));
    first_run(&l, "pay");
    let day = (3..28)
        .map(|d| format!("2026-12-{d:02}"))
        .find(|d| cluster::owner_of(&nodes, slot(&format!("dibs:pay@{d}"))) != history_owner)
        .expect("a tick whose lock is on another master than the history");
    // The lock's master's connection made first, so that the freeze falls on the claim.
    let warm = LockParams::from_secs(&format!("pay@{day}x"), 1, 0).unwrap();
    let _ = l.execute(&warm, || ());
    let t = LockParams::for_tick("pay", &day, 60_000, 1).unwrap();
    let due = now_ms() + 10; // after the first run: a tick it could miss
    let thaw = freeze(&nodes[history_owner], 650);
    let found = l.acquire_unrun(&t, due, true);
    thaw.join().unwrap();
    match found {
        Ok(TickAcquire::Won(lease)) => {
            drop(lease.release());
            let runs = l.history(t.name(), 10).unwrap().runs;
            assert_eq!(runs.len(), 1, "{runs:#?}");
            assert!(runs[0].succeeded() && runs[0].catch_up, "{runs:#?}");
        }
        Ok(TickAcquire::Ran) => panic!("a tick nobody ran was given up as run"),
        other => {
            // The call failed: the tick is left missed, its start (if it landed) taken back.
            eprintln!("catch-up's acquire: {:?}", other.map(|_| ()));
            topology::wait_until("the claim's start taken back", || {
                l.tick_state(&t, due).is_ok_and(|s| s == TickState::Missed)
            });
        }
    }
}

/// On a Cluster with a replica per master: a tick whose holder died mid-run (no release, as
/// after a failed one), then its lock's master killed and its replica promoted: 3 instances'
/// catch-up after the lock lapsed runs it 0 times, from the start on the history's master.
#[test]
fn on_a_cluster_a_tick_whose_holder_died_is_not_run_again_after_a_failover() {
    let mut nodes = replication::start_cluster_with_replicas(1000);
    let addrs: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let uri = format!("redis+cluster://{}", addrs.join(","));
    let instances: Vec<Locker> = (0..3).map(|_| locker(&uri, &[])).collect();
    first_run(&instances[0], "fo");
    let slot = |key: &str| nodes[0].keyslot(key);
    let master_of = |slot: u16| -> u16 {
        replication::cluster_nodes(nodes[0].port)
            .iter()
            .find(|l| l.is_master() && l.serves(slot))
            .expect("a master serves the slot")
            .port
    };
    let history_master = master_of(slot("dibs:\u{1f}{history}:fo"));
    let day = (2..28)
        .map(|d| format!("2026-12-{d:02}"))
        .find(|d| master_of(slot(&format!("dibs:fo@{d}"))) != history_master)
        .expect("a tick whose lock is on another master than the history");
    let t = LockParams::for_tick("fo", &day, 2_000, 1).unwrap();
    let lock_slot = slot(&key(&t));
    let lock_master = master_of(lock_slot);
    let due = now_ms();
    let TickAcquire::Won(lease) = instances[0].acquire_unrun(&t, due, false).unwrap() else {
        panic!("the tick due now is won")
    };
    std::mem::forget(lease); // the holder dies: no release, no record of its end

    let killed = nodes.iter().position(|n| n.port == lock_master).unwrap();
    nodes[killed].kill();
    let others: Vec<u16> = nodes
        .iter()
        .filter(|n| n.port != lock_master)
        .map(|n| n.port)
        .collect();
    replication::wait_for("the replica's promotion", Duration::from_secs(30), || {
        others.iter().all(|&port| {
            replication::cluster_ok(port)
                && replication::cluster_nodes(port)
                    .iter()
                    .any(|l| l.port != lock_master && l.is_master() && l.serves(lock_slot))
        })
    });
    // The done-mark lapses after its atMost (2 s) on the new master too.
    replication::wait_for("the tick's lock to lapse", Duration::from_secs(30), || {
        instances[1]
            .inspect(t.name())
            .is_ok_and(|state| state.is_none())
    });
    for instance in &instances {
        assert!(
            matches!(
                instance.acquire_unrun(&t, due, true).unwrap(),
                TickAcquire::Ran
            ),
            "a tick that started is not run again"
        );
    }
    let runs = instances[2].history(t.name(), 10).unwrap().runs;
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0].ended, Ended::Unended);
}

/// On a Cluster with a replica per master and durable acquire (its default, `auto`, waits for
/// 1 replica there): a tick whose lock is confirmed, but whose start's entry the history's
/// replica never got (that replication flow dropped by a `tc` filter), is given back: the call
/// fails unconfirmed, its task does not run, and neither its lock nor its start is left. Before,
/// the start was not waited for: the tick ran, and a failover of the history's master could lose
/// the proof that it started, for catch-up to run it again.
#[test]
fn on_a_cluster_a_tick_start_its_replica_did_not_get_is_given_back() {
    if !replication::tc_available() {
        eprintln!("SKIPPED: `tc` (iproute2) is needed to stall one replication flow");
        return;
    }
    let nodes = replication::start_cluster_with_replicas(1000);
    let addrs: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let l = locker(&format!("redis+cluster://{}", addrs.join(",")), &[]);
    first_run(&l, "wt");
    let slot = |key: &str| nodes[0].keyslot(key);
    let lines = replication::cluster_nodes(nodes[0].port);
    let master_of = |slot: u16| {
        lines
            .iter()
            .find(|l| l.is_master() && l.serves(slot))
            .expect("a master serves the slot")
            .clone()
    };
    let stream_key = "dibs:\u{1f}{history}:wt";
    let history = master_of(slot(stream_key));
    let day = (2..28)
        .map(|d| format!("2026-12-{d:02}"))
        .find(|d| master_of(slot(&format!("dibs:wt@{d}"))).port != history.port)
        .expect("a tick whose lock is on another master than the history");
    let t = LockParams::for_tick("wt", &day, 60_000, 1).unwrap();
    let link_port = replication::replica_link_port(history.port);
    let before = stream(&mut replication::connect(history.port).unwrap(), "wt").len();
    assert_eq!(
        starts(&mut replication::connect(history.port).unwrap(), "wt"),
        0
    );
    {
        let _stall = replication::LoopbackStall::drop_segments(history.port, link_port);
        match l.acquire_unrun(&t, now_ms(), false) {
            Ok(TickAcquire::Unconfirmed(why)) => {
                assert!(why.contains("0 of 1 replicas"), "{why}")
            }
            Ok(TickAcquire::Won(_)) => panic!("won: its start is on the history's master alone"),
            Ok(_) => panic!("not won, yet not unconfirmed"),
            Err(e) => panic!("{e}"),
        }
        assert!(!replication::exists_on(
            master_of(slot(&key(&t))).port,
            &key(&t),
            true
        ));
        let entries = stream(&mut replication::connect(history.port).unwrap(), "wt");
        assert!(
            entries.iter().all(|e| !e.contains(" started;")) && entries.len() <= before + 1,
            "no start is left (a taken-back entry may stand in its place): {entries:#?}"
        );
    }
    // The flow back: the tick is won, its start confirmed.
    let TickAcquire::Won(lease) = l.acquire_unrun(&t, now_ms(), false).unwrap() else {
        panic!("won once the replica gets the stream again")
    };
    drop(lease.release());
}

/// A start taken back right after its `XADD` trimmed the stream to its length: the stream must
/// not shrink below it, or catch-up reads it as never trimmed and proves a miss of a tick that
/// ran (it answered BeforeFirstRun, or Missed and ran it again). One-entry stream nodes make
/// `MAXLEN ~` trim to the length exactly, as a whole node does on a busy job.
#[test]
fn a_start_taken_back_after_a_trim_leaves_the_stream_trimmed() {
    let master = RedisServer::start_with(&["--stream-node-max-entries", "1"]);
    let proxy = Proxy::start(master.port);
    let _replica = replica_of(master.port, Some(proxy.port));
    wait_for_replicas(&master, "1");
    let l = locker_with(&master, &[("read-timeout-ms", SpecValue::Int(1000))]);
    first_run(&l, "u");
    let x = LockParams::for_tick("u", "X", 300, 1).unwrap();
    let due = now_ms() + 10;
    let TickAcquire::Won(lease) = l.acquire_unrun(&x, due, false).unwrap() else {
        panic!("won")
    };
    drop(lease.release());
    for n in 0..120 {
        let t = LockParams::for_tick("u", &format!("t{n}"), 60_000, 1).unwrap();
        drop(l.acquire(&t).unwrap().won().unwrap().release());
    }
    let mut admin = master.admin();
    assert!(
        !stream(&mut admin, "u").iter().any(|e| e.ends_with(";u@X")),
        "X's run trimmed"
    );
    proxy.mute_open_connections();
    let t = LockParams::for_tick("u", "taken-back", 60_000, 1).unwrap();
    assert!(matches!(l.acquire(&t), Ok(dibs::Acquire::Unconfirmed(_))));
    assert!(stream(&mut admin, "u").len() >= dibs::HISTORY_LENGTH as usize);
    topology::wait_until("X's done-mark to lapse", || !master.exists(&key(&x)));
    let off = locker_with(&master, &[("durable", SpecValue::Str("off".into()))]);
    assert_eq!(off.tick_state(&x, due).unwrap(), TickState::Unknown);
    assert!(matches!(
        off.acquire_unrun(&x, due, true).unwrap(),
        TickAcquire::Unknown
    ));
}

/// `dibs check JOB@TICK` for a tick of a job whose history was trimmed past it: unknown, never
/// overdue (it said "no success of it is recorded", exit 1, for a run that succeeded).
#[test]
fn a_lock_trimmed_from_its_jobs_history_is_unknown_not_overdue() {
    let server = RedisServer::start();
    let l = locker_with(&server, &[]);
    let old = LockParams::for_tick("rep", "2026-12-01", 600_000, 1).unwrap();
    drop(l.acquire(&old).unwrap().won().unwrap().release());
    for n in 0..150 {
        let t = LockParams::for_tick("rep", &format!("n{n}"), 600_000, 1).unwrap();
        drop(l.acquire(&t).unwrap().won().unwrap().release());
    }
    let history = l.history(old.name(), 10).unwrap();
    assert_eq!(
        history.matched,
        dibs::Matched::Lock {
            job: "rep".to_owned()
        }
    );
    assert!(history.runs.is_empty(), "{history:?}");
    assert!(matches!(
        history.verdict(
            old.name(),
            now_ms(),
            &common::within(Duration::from_secs(3600))
        ),
        Verdict::Unknown { .. }
    ));
}

/// Entries under the prefix that are not dibs's (another field, another first word) do not make
/// catch-up skip a tick, as `dibs history` does not list them.
#[test]
fn foreign_entries_in_a_jobs_stream_are_no_runs_for_catch_up() {
    let server = RedisServer::start();
    let l = locker_with(&server, &[]);
    first_run(&l, "forge");
    let mut admin = server.admin();
    let stream_key = "dibs:\u{1f}{history}:forge";
    for (field, value) in [
        ("run", "x;forge@H"),
        ("other", "started;unknown;0;0;1;0;1;h;;;forge@H"),
        ("run", "bogus;ok;0;0;1;0;1;h;;;forge@H"),
    ] {
        let _: String = redis::cmd("XADD")
            .arg(stream_key)
            .arg("*")
            .arg(field)
            .arg(value)
            .query(&mut admin)
            .unwrap();
    }
    let h = LockParams::for_tick("forge", "H", 60_000, 1).unwrap();
    assert_eq!(l.tick_state(&h, now_ms() + 10).unwrap(), TickState::Missed);
}
