//! Should dibs keep its pool of synchronous connections, or use one multiplexed connection?
//! This measures both: `cargo bench -p dibs --bench pool_vs_multiplexed`.
//!
//! Every contender runs the same lock cycle against the same throwaway `redis-server`:
//! `SET key value NX PX 10000`, then EVALSHA of the release script, which deletes the key.
//! - dibs: `Locker::execute`, i.e. the pool plus dibs's own bookkeeping.
//! - multiplexed: one `MultiplexedConnection` shared by every thread; each OS thread calls
//!   `block_on` on one shared multi-thread tokio runtime, as a JVM caller thread would.
//! - raw sync: one plain `redis::Connection` per thread and nothing else: the floor.
//! - redis-benchmark: one `SET` per request from a C client. A cycle is two round trips, so
//!   at 1 thread half its rate (twice its latency) is the best a cycle could do. At 16 threads
//!   it is a reference only: its one client thread, not the server, can be the limit.
//!
//! Workloads: one thread (latency of a cycle), then 16 threads on distinct lock names (cycles
//! per second). Each contender runs `ROUNDS` times in alternating order; the table shows medians.
//! The client and the server are pinned to different CPUs unless `-- --unpinned` is passed.
//!
//! `contenders` holds what each contender does for one cycle, `workloads` the two workloads,
//! timed; here are the rounds, the table and the verdict.

mod contenders;
#[path = "../support/mod.rs"]
mod support;
mod workloads;

use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use contenders::{Contender, Setup, CONTENDERS};
use support::{info_field, Res, Server};
use workloads::{many_threads, single_thread, Sample};

/// Runs of each contender per workload. Two keep the whole program under a minute on 2 cores.
const ROUNDS: usize = 2;
const WARMUP: usize = 2_000;
const CYCLES: usize = 20_000;
const THREADS: usize = 16;
/// Unmeasured time before the 16-thread window opens, long enough for every thread to connect.
const THREAD_WARMUP: Duration = Duration::from_millis(300);
const WINDOW: Duration = Duration::from_secs(3);
const BENCH_REQUESTS: &str = "100000";
/// Ratios closer to 1 than this are called a tie: runs on a 2-core machine spread about as much.
const TIE: f64 = 0.10;
const LOCK_MS: i64 = 10_000;

/// Pins the server to the last CPU and this process (and so every thread and child it starts
/// later) to the others, with util-linux's `taskset`. Unpinned, on 2 cores, a run's latency
/// swings about 3x with whether the scheduler puts the client on the server's CPU. Returns how
/// the CPUs were split, for the header.
fn pin(server: &Server, cores: usize) -> String {
    if cores < 2 {
        return "unpinned (1 CPU)".into();
    }
    let last = cores - 1;
    let client = if last == 1 {
        "0".to_owned()
    } else {
        format!("0-{}", last - 1)
    };
    let taskset = |cpus: &str, pid: u32| {
        Command::new("taskset")
            .args(["-a", "-p", "-c", cpus, &pid.to_string()])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if taskset(&last.to_string(), server.child.id()) && taskset(&client, std::process::id()) {
        format!("client pinned to CPU {client}, redis-server to CPU {last}")
    } else {
        "not pinned (taskset failed)".into()
    }
}

fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.into_iter().collect();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    }
}

/// Calls of `command` so far, from INFO commandstats.
fn calls(setup: &Setup, command: &str) -> Res<u64> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut setup.client.get_connection()?)?;
    let stats = info_field(&info, &format!("cmdstat_{command}:"));
    let calls = stats.and_then(|s| s.split(',').find_map(|kv| kv.strip_prefix("calls=")));
    Ok(calls.map_or(Ok(0), str::parse)?)
}

/// An integer with thousands separators, for rates.
fn grouped(x: f64) -> String {
    let digits = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// How dibs fares, from how many times faster it is (above 1: dibs is faster).
fn judge(speedup: f64) -> &'static str {
    if speedup > 1.0 + TIE {
        "wins"
    } else if speedup < 1.0 / (1.0 + TIE) {
        "loses"
    } else {
        "ties"
    }
}

fn main() -> Res<()> {
    let server = Server::start()?;
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    // Before any thread exists: threads inherit the mask of the thread that starts them.
    let pinning = if std::env::args().any(|a| a == "--unpinned") {
        "unpinned (--unpinned)".to_owned()
    } else {
        pin(&server, cores)
    };
    let setup = Setup::new(&server)?;
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut setup.client.get_connection()?)?;
    println!(
        "redis-server {} on 127.0.0.1:{}, {cores} cores, {pinning}; cycle = SET NX PX + EVALSHA",
        info_field(&info, "redis_version:").unwrap_or("?"),
        server.port
    );

    let mut single: Vec<Vec<Sample>> = vec![Vec::new(); CONTENDERS.len()];
    let mut multi: Vec<Vec<f64>> = vec![Vec::new(); CONTENDERS.len()];
    // Reversed every other round, so that no contender always runs first or last.
    let order = |round: usize| {
        let mut order = CONTENDERS;
        if round % 2 == 1 {
            order.reverse();
        }
        order
    };
    for round in 0..ROUNDS {
        for c in order(round) {
            let s = single_thread(&setup, c)?;
            println!(
                "run {}/{ROUNDS}  1 thread    {:<28} p50 {:6.1} µs  p99 {:6.1} µs  mean {:6.1} µs  {:>7}/s",
                round + 1,
                c.label(),
                s.p50,
                s.p99,
                s.mean,
                grouped(s.rate)
            );
            single[c as usize].push(s);
        }
    }
    for round in 0..ROUNDS {
        for c in order(round) {
            let rate = many_threads(&setup, c)?;
            println!(
                "run {}/{ROUNDS}  {THREADS} threads  {:<28} {:>7}/s",
                round + 1,
                c.label(),
                grouped(rate)
            );
            multi[c as usize].push(rate);
        }
    }
    let eval = calls(&setup, "eval")?;
    if eval != 0 {
        return Err(format!("EVAL ran {eval} times: the script copy differs from dibs's").into());
    }

    let fig = |c: Contender| {
        let runs = &single[c as usize];
        let rate16 = median(multi[c as usize].iter().copied());
        let s = Sample {
            p50: median(runs.iter().map(|s| s.p50)),
            p99: median(runs.iter().map(|s| s.p99)),
            mean: median(runs.iter().map(|s| s.mean)),
            rate: median(runs.iter().map(|s| s.rate)),
        };
        (s, rate16)
    };
    let (dibs, dibs16) = fig(Contender::Dibs);
    let (mux, mux16) = fig(Contender::Multiplexed);
    let (raw, raw16) = fig(Contender::RawSync);
    let (bench, bench16) = fig(Contender::RedisBenchmark);

    println!();
    println!(
        "| medians of {ROUNDS} runs | 1 thread p50 µs | p99 µs | mean µs | cycles/s | {THREADS} threads cycles/s |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (c, s, rate16) in [
        (Contender::Dibs, dibs, dibs16),
        (Contender::Multiplexed, mux, mux16),
        (Contender::RawSync, raw, raw16),
    ] {
        println!(
            "| {} | {:.1} | {:.1} | {:.1} | {} | {} |",
            c.label(),
            s.p50,
            s.p99,
            s.mean,
            grouped(s.rate),
            grouped(rate16)
        );
    }
    println!(
        "| redis-benchmark SET, 1 round trip (-c 1 / -c {THREADS}) | {:.1} | {:.1} | {:.1} | {} req/s | {} req/s |",
        bench.p50,
        bench.p99,
        bench.mean,
        grouped(bench.rate),
        grouped(bench16)
    );
    println!(
        "| redis-benchmark per 2 round trips (2× latency, ½ rate) | {:.1} | – | {:.1} | {} | {} |",
        2.0 * bench.p50,
        2.0 * bench.mean,
        grouped(bench.rate / 2.0),
        grouped(bench16 / 2.0)
    );
    for (name, other, other16) in [("raw sync", raw, raw16), ("multiplexed", mux, mux16)] {
        println!(
            "| dibs / {name} | {:.2}× | {:.2}× | {:.2}× | {:.2}× | {:.2}× |",
            dibs.p50 / other.p50,
            dibs.p99 / other.p99,
            dibs.mean / other.mean,
            dibs.rate / other.rate,
            dibs16 / other16
        );
    }
    println!();
    println!("Ratios: below 1 is dibs faster for latency; above 1 is dibs faster for cycles/s.");

    let at_one = mux.p50 / dibs.p50;
    let at_many = dibs16 / mux16;
    let advice = match (judge(at_one), judge(at_many)) {
        ("loses", "loses") => "switch to the multiplexed connection",
        ("loses", _) | (_, "loses") => "mixed result: weigh which load matters",
        _ => "keep the sync pool",
    };
    println!(
        "Verdict: vs multiplexed, the sync pool {} at 1 thread (p50 {at_one:.2}× as fast) and {} at {THREADS} threads ({at_many:.2}× the cycles/s): {advice}.",
        judge(at_one),
        judge(at_many),
    );
    Ok(())
}
