//! Redis Cluster (3 masters), all on loopback, started by the test: locks over the slots, a
//! reshard, MOVED and ASK, TLS with client certificates, the run history, the previous version,
//! a master frozen during the SET.

use crate::common;
use crate::common::cluster;
use crate::common::replication;
use crate::common::topology;

use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use cluster::{cluster_locker, cluster_ok, owner_of, start_cluster, start_cluster_over};
use common::pki::Pki;
use common::RedisServer;
use dibs::{ConnSpec, Ended, Ending, LockParams, Locker, Outcome};
use topology::{spec_with, wait_until};

#[test]
fn cluster_locks_spread_over_the_slots_and_survive_a_reshard() {
    cluster_reshard(None);
}

/// Every node reached over TLS with a client certificate: the seed, those of the slot map, and
/// those that MOVED redirections name after the reshard.
#[test]
fn cluster_over_tls_with_client_certificates_spreads_and_follows_moved() {
    let pki = Pki::new();
    cluster_reshard(Some(&pki));
}

fn cluster_reshard(pki: Option<&Pki>) {
    let (nodes, addrs) = start_cluster_over(pki, &[], None);

    // One seed is enough: the client learns the slot map from it.
    let locker = cluster_locker(&addrs, pki);
    let held = |name: &str| LockParams::from_secs(name, 60, 60).unwrap();
    for i in 0..100 {
        let outcome = locker.execute(&held(&format!("job-{i}")), || i).unwrap();
        assert!(
            matches!(outcome, Outcome::Ran { value, ending: Ending { ended: Ended::KeptForAtLeast, .. }, .. } if value == i)
        );
    }
    // The locks' keys alone (each run's history is in the history's own slot).
    let counts: Vec<i64> = nodes
        .iter()
        .map(|n| {
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg("dibs:job-*")
                .query(&mut n.admin())
                .unwrap();
            keys.len() as i64
        })
        .collect();
    assert_eq!(counts.iter().sum::<i64>(), 100);
    assert!(
        counts.iter().all(|&c| c > 10),
        "locks spread over the masters: {counts:?}"
    );
    for i in 0..100 {
        assert!(matches!(
            locker.execute(&held(&format!("job-{i}")), || ()).unwrap(),
            Outcome::Skipped
        ));
    }

    // Move 4000 slots from the first master to the second: the locker's slot map goes stale and
    // its commands meet MOVED redirections, which it must follow.
    let id = |n: &RedisServer| -> String {
        redis::cmd("CLUSTER")
            .arg("MYID")
            .query(&mut n.admin())
            .unwrap()
    };
    let status = Command::new(common::redis_cli())
        .args(nodes[0].cli_args())
        .args([
            "--cluster",
            "reshard",
            &addrs[0],
            "--cluster-from",
            &id(&nodes[0]),
            "--cluster-to",
            &id(&nodes[1]),
        ])
        .args(["--cluster-slots", "4000", "--cluster-yes"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    wait_until("the cluster to settle", || nodes.iter().all(cluster_ok));
    for i in 0..100 {
        // Still held, wherever the key now lives.
        assert!(
            matches!(
                locker.execute(&held(&format!("job-{i}")), || ()).unwrap(),
                Outcome::Skipped
            ),
            "job-{i}"
        );
        let fresh = LockParams::from_secs(&format!("new-{i}"), 60, 0).unwrap();
        let outcome = locker.execute(&fresh, || ()).unwrap();
        assert!(
            matches!(
                outcome,
                Outcome::Ran {
                    ending: Ending {
                        ended: Ended::Released,
                        ..
                    },
                    ..
                }
            ),
            "new-{i}"
        );
    }
}

/// Issue 29 (7): on a Redis Cluster the run history records every run (its entry follows the
/// release's reply, to the history's own slot), and `locks` and `jobs` scan every master. Before,
/// a Cluster kept no history, and listing its locks or jobs was refused.
#[test]
fn a_cluster_keeps_the_history_and_lists_the_locks_and_jobs_of_every_master() {
    let (nodes, addrs) = start_cluster(&[], None);
    let locker = cluster_locker(&addrs, None);
    let slot = |key: &str| nodes[0].keyslot(key);
    let mut owners = std::collections::HashSet::new();
    for n in 0..24 {
        let name = format!("job-{n}");
        owners.insert(owner_of(&nodes, slot(&format!("dibs:{name}"))));
        locker
            .execute(&LockParams::from_millis(&name, 10_000, 0).unwrap(), || ())
            .unwrap();
    }
    assert_eq!(owners.len(), 3, "the locks live on every master");
    let failed = locker
        .acquire(&LockParams::from_millis("job-0", 10_000, 0).unwrap())
        .unwrap()
        .won()
        .unwrap()
        .release_after(dibs::TaskResult::Failed);
    assert_eq!(failed.ended, Ended::Released);
    let tick = LockParams::for_tick("nightly", "2026-12-04", 10_000, 1).unwrap();
    locker.execute(&tick, || ()).unwrap();

    let history = locker.history("job-0", 10).unwrap();
    assert_eq!(history.matched, dibs::Matched::Job);
    assert_eq!(history.runs.len(), 2, "{history:?}");
    assert_eq!(history.runs[0].task, Some(dibs::TaskResult::Failed));
    assert!(history.runs[1].succeeded());
    let nightly = locker.history("nightly", 10).unwrap();
    assert_eq!(nightly.runs[0].name, "nightly@2026-12-04");

    let jobs = locker.jobs(100, dibs::SCAN_BUDGET).unwrap();
    assert!(jobs.complete, "{jobs:?}");
    assert_eq!(jobs.items.len(), 25, "{jobs:?}");
    let held: Vec<_> = (0..9)
        .map(|n| {
            let params = LockParams::from_millis(&format!("held-{n}"), 60_000, 0).unwrap();
            locker.acquire(&params).unwrap().won().unwrap()
        })
        .collect();
    let locks = locker.locks("*", 100, dibs::SCAN_BUDGET).unwrap();
    assert!(locks.complete, "{locks:?}");
    let names: Vec<&str> = locks.items.iter().map(|l| l.name.as_str()).collect();
    let mut expected: Vec<String> = (0..9).map(|n| format!("held-{n}")).collect();
    expected.push("nightly@2026-12-04".into());
    expected.sort();
    assert_eq!(names, expected);
    let keys: u64 = nodes
        .iter()
        .map(|n| redis::cmd("DBSIZE").query::<u64>(&mut n.admin()).unwrap())
        .sum();
    assert_eq!(locks.keys, keys, "every master's keys");

    let token = locks.items[0].token.clone().unwrap();
    let forced = locker.force_release("held-0", &token, "ops@test").unwrap();
    assert_eq!(forced, dibs::ForcedRelease::Released);
    let mut held = held.into_iter();
    let ending = held.next().unwrap().release();
    assert_eq!(ending.ended, Ended::NoLongerOurs);
    let runs = locker.history("held-0", 10).unwrap().runs;
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0].ended, dibs::Ended::NoLongerOurs);
    assert_eq!(runs[1].ended, dibs::Ended::Forced);
    for lease in held {
        let _ = lease.release();
    }
}

/// Issue 29 (7): the history now written on a Cluster leaves the lock's key and value as they
/// were: the previous version of dibs and this one exclude each other there too.
#[test]
fn on_a_cluster_the_previous_version_and_this_one_exclude_each_other() {
    let (_nodes, addrs) = start_cluster(&[], None);
    let current = cluster_locker(&addrs, None);
    let seeds: Vec<String> = addrs.iter().map(|a| format!("redis://{a}")).collect();
    let previous = redis::cluster::ClusterClient::new(seeds)
        .unwrap()
        .get_connection()
        .unwrap();
    let race = common::previous::race(&current, previous, "deploy", 200, false);
    eprintln!("{race:?}");
    assert_eq!(race.overlaps, 0, "{race:?}");
    assert!(race.previous_ran > 0 && race.current_ran > 0, "{race:?}");
}

#[test]
fn a_free_lock_in_a_migrating_slot_is_taken_by_following_ask() {
    migrating_slot(None);
}

/// The node an ASK names is one dibs connects to itself: over TLS, with the client certificate,
/// and authenticated before its ASKING (which a server with a password refuses before AUTH).
#[test]
fn over_tls_with_a_password_a_free_lock_in_a_migrating_slot_is_taken_by_following_ask() {
    let pki = Pki::new();
    migrating_slot(Some(&pki));
}

/// Plain, or over TLS with `pki`, then with the password `cluster-pw` too.
fn migrating_slot(pki: Option<&Pki>) {
    let auth = pki.map(|_| "cluster-pw");
    let extra: &[&str] = if auth.is_some() {
        &["--requirepass", "cluster-pw"]
    } else {
        &[]
    };
    let (nodes, addrs) = start_cluster_over(pki, extra, auth);
    let key = "dibs:migrating";
    let slot: u16 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query(&mut nodes[0].admin())
        .unwrap();
    let source = owner_of(&nodes, slot);
    let target = (source + 1) % nodes.len();
    let id = |n: &RedisServer| -> String {
        redis::cmd("CLUSTER")
            .arg("MYID")
            .query(&mut n.admin())
            .unwrap()
    };
    let (source_id, target_id) = (id(&nodes[source]), id(&nodes[target]));
    // The slot starts moving, as a reshard does it: new keys of it belong on the target.
    let _: () = redis::cmd("CLUSTER")
        .arg(&["SETSLOT", &slot.to_string(), "IMPORTING", &source_id])
        .query(&mut nodes[target].admin())
        .unwrap();
    let _: () = redis::cmd("CLUSTER")
        .arg(&["SETSLOT", &slot.to_string(), "MIGRATING", &target_id])
        .query(&mut nodes[source].admin())
        .unwrap();

    let locker = match auth {
        Some(pw) => {
            let scheme = if pki.is_some() {
                "rediss+cluster"
            } else {
                "redis+cluster"
            };
            Locker::new(spec_with(
                &format!("{scheme}://:{pw}@{}", addrs[0]),
                pki,
                &[],
            ))
            .unwrap()
        }
        None => cluster_locker(&addrs, pki),
    };
    let lease = locker
        .acquire(&LockParams::from_secs("migrating", 60, 0).unwrap())
        .unwrap()
        .won()
        .expect("a free lock is won during the migration");
    // Counted by slot: the target does not serve the slot to a plain EXISTS yet.
    let keys_on = |n: &RedisServer| -> i64 {
        redis::cmd("CLUSTER")
            .arg("COUNTKEYSINSLOT")
            .arg(slot)
            .query(&mut n.admin())
            .unwrap()
    };
    assert_eq!(
        keys_on(&nodes[target]),
        1,
        "taken on the target, after ASKING"
    );
    assert_eq!(keys_on(&nodes[source]), 0);
    assert!(matches!(
        locker
            .execute(&LockParams::from_secs("migrating", 60, 0).unwrap(), || ())
            .unwrap(),
        Outcome::Skipped
    ));
    assert_eq!(lease.release().ended, Ended::Released);
    assert_eq!(keys_on(&nodes[target]), 0, "released on the target too");
}

/// A wrong password, and (issue 43's attack) none where one is wanted: both are authentication
/// errors, as on a single server; the missing one was a connection error before.
#[test]
fn a_wrong_or_missing_cluster_password_is_an_authentication_error() {
    let (_nodes, addrs) = start_cluster(&["--requirepass", "right-pw"], Some("right-pw"));
    for uri in [
        format!("redis+cluster://:wrong-pw@{}", addrs[0]),
        format!("redis+cluster://{}", addrs[0]),
    ] {
        let spec = ConnSpec::from_uri(&uri).unwrap();
        let err = Locker::new(spec)
            .unwrap()
            .execute(&LockParams::from_secs("auth", 10, 0).unwrap(), || ())
            .unwrap_err();
        assert!(
            matches!(err, dibs::Error::Authentication(_)),
            "{uri}: {err:?}"
        );
        assert!(!err.message().contains("wrong-pw"), "{err}");
    }
}

/// Issue 18 (5): the lock's master is frozen while the `SET` is on its way, so the call times
/// out; on a single server a token-checked delete queued behind the `SET` on the same socket
/// undoes it when the server thaws, but a cluster connection has no such socket. Before, the
/// thawed master ran the `SET` and the lock stayed held for atMost with nothing running (the
/// next call skipped); now the sweeper deletes it once the node answers again.
#[test]
fn a_cluster_master_frozen_during_the_set_leaves_no_orphan_lock_after_the_thaw() {
    let (nodes, addrs) = start_cluster(&[], None);
    let key = "dibs:frozen-set";
    let slot: u16 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query(&mut nodes[0].admin())
        .unwrap();
    let owner = &nodes[owner_of(&nodes, slot)];
    let spec = ConnSpec::from_map(&[
        (
            "uri".into(),
            dibs::SpecValue::Str(format!("redis+cluster://{}", addrs.join(","))),
        ),
        ("timeout-ms".into(), dibs::SpecValue::Int(500)),
    ])
    .unwrap();
    let locker = Locker::new(spec).unwrap();
    let params = LockParams::from_secs("frozen-set", 60, 0).unwrap();
    locker.execute(&params, || ()).unwrap(); // the cluster connection exists

    owner.signal("-STOP");
    let started = Instant::now();
    let failed = locker.execute(&params, || panic!("ran on a frozen master"));
    let waited = started.elapsed();
    sleep(Duration::from_millis(300));
    owner.signal("-CONT");
    assert!(failed.is_err(), "{failed:?}");
    // The thawed master runs the stuck SET; the sweeper's delete follows within its rounds.
    sleep(Duration::from_millis(1500));
    let pttl: i64 = redis::cmd("PTTL")
        .arg(key)
        .query(&mut owner.admin())
        .unwrap();
    println!("frozen master: the call failed after {waited:?}; 1.5 s after the thaw, PTTL {pttl}");
    assert_eq!(pttl, -2, "an orphan lock held with nothing running");
    assert!(
        matches!(locker.execute(&params, || ()).unwrap(), Outcome::Ran { .. }),
        "the next call runs"
    );
}

/// Catch-up on a Cluster, where a tick's lock and its job's history live in different slots:
/// three instances race for a tick that all missed and one runs it; a tick whose holder died
/// (its release never came, as after a failed release) is run by none of them, nor once its
/// lock's master was killed and replaced by a new one that never saw its done-mark.
#[test]
fn on_a_cluster_catch_up_runs_a_missed_tick_once_and_never_one_that_started() {
    let (mut nodes, addrs) = start_cluster(&[], None);
    let instances: Vec<Locker> = (0..3).map(|_| cluster_locker(&addrs, None)).collect();
    // The job's first run, so that later misses can be proven.
    let first = LockParams::for_tick("settle", "2026-12-01", 60_000, 1).unwrap();
    let dibs::TickAcquire::Won(lease) = instances[0]
        .acquire_unrun(&first, now() - 5_000, false)
        .unwrap()
    else {
        panic!("the first tick is won")
    };
    drop(lease.release());

    // A tick due after that run that nobody ran: all three race; one runs it.
    let missed = LockParams::for_tick("settle", "2026-12-02", 60_000, 1).unwrap();
    let due = now();
    let won: Vec<bool> = std::thread::scope(|scope| {
        let racers: Vec<_> = instances
            .iter()
            .map(|locker| {
                scope.spawn(|| match locker.acquire_unrun(&missed, due, true).unwrap() {
                    dibs::TickAcquire::Won(lease) => {
                        drop(lease.release());
                        true
                    }
                    _ => false,
                })
            })
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    assert_eq!(won.iter().filter(|w| **w).count(), 1, "{won:?}");
    let runs = instances[1].history("settle@2026-12-02", 10).unwrap().runs;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0].succeeded() && runs[0].catch_up, "{runs:?}");

    // A tick whose holder died mid-run: its start is in the history, on another master than its
    // lock (the slots are chosen so); its lock's master is then killed, and the cluster goes on
    // without its slots' done-marks: no instance runs the tick again.
    let slot = |key: &str| nodes[0].keyslot(key);
    let history_owner = owner_of(&nodes, slot("dibs:\u{1f}{history}:settle"));
    let day = (3..40)
        .map(|d| format!("2026-12-{d:02}"))
        .find(|d| owner_of(&nodes, slot(&format!("dibs:settle@{d}"))) != history_owner)
        .expect("a tick whose lock is on another master than the history");
    let died = LockParams::for_tick("settle", &day, 2_000, 1).unwrap();
    let dibs::TickAcquire::Won(lease) = instances[0].acquire_unrun(&died, now(), false).unwrap()
    else {
        panic!("won")
    };
    std::mem::forget(lease); // as a SIGKILL: no release
    let lock_owner = owner_of(&nodes, slot(&format!("dibs:settle@{day}")));
    nodes[lock_owner].kill();
    nodes[lock_owner].restart(); // empty: no persistence, as a master replaced by a new node
    wait_until("the restarted master to serve again", || {
        instances[2]
            .inspect(&format!("settle@{day}"))
            .is_ok_and(|state| state.is_none())
    });
    for instance in &instances {
        assert!(
            matches!(
                instance.acquire_unrun(&died, now(), true).unwrap(),
                dibs::TickAcquire::Ran
            ),
            "a tick that started is not caught up"
        );
    }
    let runs = instances[1]
        .history(&format!("settle@{day}"), 10)
        .unwrap()
        .runs;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].ended, dibs::Ended::Unended);
}

/// A Cluster with a replica per master (durable acquire's default waits for 1 there): the lock
/// of `job`'s tick and its history live on two masters; returns the tick's params, the history's
/// master and its replica. The slots are chosen so.
fn tick_apart_from_history(
    nodes: &[RedisServer],
    job: &str,
) -> (LockParams, replication::NodeLine, replication::NodeLine) {
    let lines = replication::cluster_nodes(nodes[0].port);
    let master_of = |key: &str| {
        let slot = nodes[0].keyslot(key);
        lines
            .iter()
            .find(|l| l.is_master() && l.serves(slot))
            .expect("a master serves the slot")
            .clone()
    };
    let history = master_of(&format!("dibs:\u{1f}{{history}}:{job}"));
    let replica = lines
        .iter()
        .find(|l| l.master == history.id)
        .expect("the history's master has a replica")
        .clone();
    let day = (2..28)
        .map(|d| format!("2026-12-{d:02}"))
        .find(|d| master_of(&format!("dibs:{job}@{d}")).port != history.port)
        .expect("a tick whose lock is on another master than the history");
    (
        LockParams::for_tick(job, &day, 60_000, 1).unwrap(),
        history,
        replica,
    )
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn replicated_cluster_locker(nodes: &[RedisServer], job: &str) -> Locker {
    let addrs: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let l =
        Locker::new(ConnSpec::from_uri(&format!("redis+cluster://{}", addrs.join(","))).unwrap())
            .unwrap();
    let first = LockParams::for_tick(job, "2026-12-01", 60_000, 1).unwrap();
    let dibs::TickAcquire::Won(lease) = l.acquire_unrun(&first, now() - 60_000, false).unwrap()
    else {
        panic!("a first tick is won")
    };
    drop(lease.release());
    l
}

/// The start's `WAIT` is the history's master's: with the replica of a third master (neither the
/// lock's nor the history's) down, the tick due now is won, its lock and start confirmed where
/// they are. Before, the claim's `WAIT`, sent alone on the cluster connection, went to every
/// master and took the least count: every catch-up call failed unconfirmed.
#[test]
fn on_a_cluster_the_start_waits_for_the_history_master_alone() {
    let mut nodes = replication::start_cluster_with_replicas(1000);
    let l = replicated_cluster_locker(&nodes, "routed");
    let (t, history, _) = tick_apart_from_history(&nodes, "routed");
    let lines = replication::cluster_nodes(nodes[0].port);
    let lock_slot = nodes[0].keyslot(&format!("dibs:{}", t.name()));
    let third = lines
        .iter()
        .find(|m| m.is_master() && m.port != history.port && !m.serves(lock_slot))
        .expect("a third master")
        .clone();
    let victim = lines.iter().find(|r| r.master == third.id).unwrap().port;
    let at = nodes.iter().position(|n| n.port == victim).unwrap();
    nodes[at].kill();
    replication::wait_for("its replica gone", Duration::from_secs(10), || {
        replication::info_number(third.port, "connected_slaves") == 0
    });
    match l.acquire_unrun(&t, now(), false) {
        Ok(dibs::TickAcquire::Won(lease)) => drop(lease.release()),
        Ok(_) => panic!("not won"),
        Err(e) => panic!("{e}"),
    }
}

/// The claim retried on a fresh connection after the one whose `WAIT` waited was cut (the
/// history's replication flow dropped by `tc`): the retry finds its own start and writes again
/// (the stream's expiry), so its `WAIT` waits for that start, and the call fails unconfirmed.
/// Before, the retry wrote nothing, and on Redis 7.2+ and Valkey 8 its `WAIT` answered at once:
/// won, with a start its replica never got.
#[test]
fn on_a_cluster_a_claim_retried_after_its_wait_was_cut_is_not_won_without_its_replica() {
    if !replication::tc_available() {
        eprintln!("SKIPPED: `tc` (iproute2) is needed to stall one replication flow");
        return;
    }
    let nodes = replication::start_cluster_with_replicas(1000);
    let l = replicated_cluster_locker(&nodes, "cut");
    let (t, history, replica) = tick_apart_from_history(&nodes, "cut");
    let _stall = replication::LoopbackStall::drop_segments(
        history.port,
        replication::replica_link_port(history.port),
    );
    let outcome = std::thread::scope(|s| {
        let acquire = s.spawn(|| l.acquire_unrun(&t, now(), false));
        assert!(
            replication::kill_client_in(history.port, "wait").is_some(),
            "a WAIT to cut"
        );
        acquire.join().unwrap()
    });
    assert!(
        matches!(outcome, Ok(dibs::TickAcquire::Unconfirmed(_))),
        "{}",
        match &outcome {
            Ok(dibs::TickAcquire::Won(_)) => "won".to_owned(),
            Ok(_) => "not won".to_owned(),
            Err(e) => e.to_string(),
        }
    );
    let stream = "dibs:\u{1f}{history}:cut";
    assert!(
        !replication::exists_on(replica.port, stream, true) || {
            let mut c = replication::connect(replica.port).unwrap();
            let _: () = redis::cmd("READONLY").query(&mut c).unwrap();
            let entries: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
                .arg(stream)
                .arg("-")
                .arg("+")
                .query(&mut c)
                .unwrap();
            entries.iter().all(|(_, f)| !f[0].1.starts_with("started;"))
        }
    );
}
