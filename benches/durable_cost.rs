//! What durable acquire costs: `cargo bench -p dibs --bench durable_cost`.
//!
//! The lock cycle (`Locker::execute`, no-op task) and the skip path on 1 thread, against:
//! a lone redis-server (the default pays nothing there: no replica, no WAIT); a master with one
//! local replica, durable acquire on by default (the SET and its WAIT in one round trip); and
//! the same master with `durable` off. The three are interleaved over `ROUNDS` rounds, each
//! `CYCLES` calls after `WARMUP`, and the medians of the rounds' p50s are printed with their
//! ratios. Client and servers share CPU 0, as in `core_cycle`.

use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use dibs::{ConnSpec, LockParams, Locker, Outcome, SpecValue};
use redis::Client;

mod support;

use support::{Res, Server};

const WARMUP: usize = 1_000;
const CYCLES: usize = 10_000;
const ROUNDS: usize = 5;

fn pin() -> bool {
    Command::new("taskset")
        .args(["-a", "-p", "-c", "0", &std::process::id().to_string()])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn p50(call: impl FnMut()) -> f64 {
    support::measure(WARMUP, CYCLES, call)[0]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn locker(server: &Server, durable: &str) -> Res<Locker> {
    Ok(Locker::new(ConnSpec::from_map(&[
        ("uri".into(), SpecValue::Str(server.uri())),
        ("durable".into(), SpecValue::Str(durable.into())),
    ])?)?)
}

fn cycle(locker: &Locker) -> f64 {
    p50(|| {
        let params = LockParams::from_secs("durable-cost", 10, 0).unwrap();
        let outcome = locker.execute(&params, || ()).expect("execute");
        assert!(matches!(outcome, Outcome::Ran { .. }), "{outcome:?}");
    })
}

fn skip(locker: &Locker) -> f64 {
    p50(|| {
        let params = LockParams::from_secs("durable-cost-held", 10, 0).unwrap();
        let outcome = locker.execute(&params, || ()).expect("execute");
        assert!(matches!(outcome, Outcome::Skipped), "{outcome:?}");
    })
}

fn hold(server: &Server) -> Res<()> {
    let mut conn = Client::open(server.uri())?.get_connection()?;
    redis::cmd("SET")
        .arg("dibs:durable-cost-held")
        .arg("someone-else")
        .arg("PX")
        .arg(3_600_000)
        .query::<()>(&mut conn)?;
    Ok(())
}

fn main() -> Res<()> {
    let pinned = pin();
    let lone = Server::start()?;
    let master = Server::start()?;
    let port = master.port.to_string();
    let _replica = Server::start_with(&["--replicaof", "127.0.0.1", &port])?;
    let mut admin = Client::open(master.uri())?.get_connection()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info: String = redis::cmd("INFO").arg("replication").query(&mut admin)?;
        if info.contains("state=online") {
            break;
        }
        if Instant::now() > deadline {
            return Err("the replica never connected".into());
        }
        thread::sleep(Duration::from_millis(50));
    }
    hold(&lone)?;
    hold(&master)?;
    thread::sleep(Duration::from_millis(200)); // the replica has the held key too
    println!(
        "redis-server {}: a lone one, and a master with 1 local replica; {}",
        lone.version,
        if pinned {
            "all pinned to CPU 0"
        } else {
            "not pinned (taskset failed)"
        }
    );
    let (lone_auto, master_auto, master_off) = (
        locker(&lone, "auto")?,
        locker(&master, "auto")?,
        locker(&master, "off")?,
    );
    let mut rows: [(&str, Vec<f64>); 6] = [
        ("cycle, lone server, default (no WAIT)", vec![]),
        ("cycle, master + 1 replica, default (WAIT 1)", vec![]),
        ("cycle, master + 1 replica, durable off", vec![]),
        ("skip, lone server, default", vec![]),
        ("skip, master + 1 replica, default", vec![]),
        ("skip, master + 1 replica, durable off", vec![]),
    ];
    for _ in 0..ROUNDS {
        rows[0].1.push(cycle(&lone_auto));
        rows[1].1.push(cycle(&master_auto));
        rows[2].1.push(cycle(&master_off));
        rows[3].1.push(skip(&lone_auto));
        rows[4].1.push(skip(&master_auto));
        rows[5].1.push(skip(&master_off));
    }
    let base = median(rows[0].1.clone());
    println!();
    println!("| 1 thread, {CYCLES} calls after {WARMUP}, median of {ROUNDS} interleaved rounds | p50 µs | × lone cycle |");
    println!("|---|---:|---:|");
    for (what, p50s) in rows {
        let m = median(p50s);
        println!("| {what} | {m:.1} | {:.2}× |", m / base);
    }
    Ok(())
}
