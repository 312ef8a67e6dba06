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

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dibs::{
    ConnSpec, Ended, Ending, LockParams, Locker, Outcome, DEFAULT_KEY_PREFIX,
    DEFAULT_READ_TIMEOUT_MS,
};
use redis::aio::MultiplexedConnection;
use redis::io::tcp::TcpSettings;
use redis::{AsyncConnectionConfig, Client, Cmd, IntoConnectionInfo};
use tokio::runtime::Runtime;

mod support;

use support::{info_field, Res, Server};

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

/// The release script of src/lock.rs, copied because it is private there. If the copy drifted,
/// dibs would get NOSCRIPT and fall back to EVAL; `main` checks that EVAL never ran.
const RELEASE_SCRIPT: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local remaining = tonumber(ARGV[2])
if remaining > 0 then
  redis.call('PEXPIRE', KEYS[1], remaining)
  return 1
end
redis.call('DEL', KEYS[1])
return 2
"#;

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

/// The value after `prefix` on its own line of an INFO reply.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contender {
    Dibs,
    Multiplexed,
    RawSync,
    RedisBenchmark,
}

const CONTENDERS: [Contender; 4] = [
    Contender::Dibs,
    Contender::Multiplexed,
    Contender::RawSync,
    Contender::RedisBenchmark,
];

impl Contender {
    fn label(self) -> &'static str {
        match self {
            Contender::Dibs => "dibs (sync pool)",
            Contender::Multiplexed => "multiplexed (1 conn, tokio)",
            Contender::RawSync => "raw sync (1 conn/thread)",
            Contender::RedisBenchmark => "redis-benchmark SET",
        }
    }
}

/// One run's figures: latencies in µs (of a cycle, or of one request for redis-benchmark) and
/// cycles or requests per second.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    p50: f64,
    p99: f64,
    mean: f64,
    rate: f64,
}

/// What the contenders share, made once, so that no run pays for connecting or loading.
struct Setup {
    port: u16,
    locker: Locker,
    client: Client,
    rt: Runtime,
    mux: MultiplexedConnection,
    sha: String,
}

impl Setup {
    fn new(server: &Server) -> Res<Setup> {
        let locker = Locker::new(ConnSpec::from_uri(&server.uri())?)?;
        // TCP_NODELAY as dibs's pool sets it: the redis crate leaves Nagle on.
        let info = server
            .uri()
            .into_connection_info()?
            .set_tcp_settings(TcpSettings::default().set_nodelay(true));
        let client = Client::open(info)?;
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(RELEASE_SCRIPT)
            .query(&mut client.get_connection()?)?;
        // Default worker count (one per core): what a runtime started inside a JVM would get.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        // dibs's read timeout rather than the crate's 500 ms, so both fail alike under load.
        let config = AsyncConnectionConfig::new()
            .set_response_timeout(Some(Duration::from_millis(DEFAULT_READ_TIMEOUT_MS)));
        let mux = rt.block_on(client.get_multiplexed_async_connection_with_config(&config))?;
        Ok(Setup {
            port: server.port,
            locker,
            client,
            rt,
            mux,
            sha,
        })
    }

    /// One lock cycle on lock `name`, as `contender` does it. Make it on the thread that runs it.
    fn cycle<'a>(&'a self, contender: Contender, name: &str) -> Res<Box<dyn FnMut() + 'a>> {
        let key = format!("{DEFAULT_KEY_PREFIX}{name}");
        Ok(match contender {
            Contender::Dibs => {
                let name = name.to_owned();
                // Params are built per call, as the JNI entry point does.
                Box::new(move || {
                    let params = LockParams::from_millis(&name, LOCK_MS, 0).expect("lock params");
                    let outcome = self.locker.execute(&params, || ()).expect("dibs cycle");
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
                        "dibs: {outcome:?}"
                    );
                })
            }
            Contender::Multiplexed => {
                // A clone is a handle on the same connection, not a new one.
                let mut mux = self.mux.clone();
                Box::new(move || {
                    self.rt.block_on(async {
                        let value = holder_value();
                        let won = set_nx(&key, &value).query_async(&mut mux).await;
                        let code = release(&self.sha, &key, &value).query_async(&mut mux).await;
                        check(won.expect("SET"), code.expect("EVALSHA"));
                    })
                })
            }
            Contender::RawSync => {
                let mut conn = self.client.get_connection()?;
                Box::new(move || {
                    let value = holder_value();
                    let won = set_nx(&key, &value).query(&mut conn).expect("SET");
                    let code = release(&self.sha, &key, &value).query(&mut conn);
                    check(won, code.expect("EVALSHA"));
                })
            }
            Contender::RedisBenchmark => unreachable!("redis-benchmark is its own process"),
        })
    }
}

fn set_nx(key: &str, value: &str) -> Cmd {
    let mut cmd = redis::cmd("SET");
    cmd.arg(key).arg(value).arg("NX").arg("PX").arg(LOCK_MS);
    cmd
}

/// The release with nothing of `atLeast` left: the script deletes the key.
fn release(sha: &str, key: &str, value: &str) -> Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(sha).arg(1).arg(key).arg(value).arg(0);
    cmd
}

/// Every cycle must win the lock and delete it, or the figures would not be of a lock cycle.
fn check(won: Option<String>, code: i64) {
    assert!(won.is_some(), "SET NX did not win a free lock");
    assert_eq!(code, 2, "release script did not delete the key");
}

/// Shaped like dibs's holder value (`uuid;host;pid;unix-ms`) so the floor moves the same bytes
/// and does the same per-call work.
fn holder_value() -> String {
    let unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!(
        "{};bench-host;{};{unix_ms}",
        uuid::Uuid::new_v4(),
        std::process::id()
    )
}

/// Workload (a): one thread, latency of each cycle.
fn single_thread(setup: &Setup, contender: Contender) -> Res<Sample> {
    if contender == Contender::RedisBenchmark {
        return redis_benchmark(setup.port, 1);
    }
    let mut cycle = setup.cycle(contender, "bench-0")?;
    for _ in 0..WARMUP {
        cycle();
    }
    let mut micros = Vec::with_capacity(CYCLES);
    for _ in 0..CYCLES {
        let start = Instant::now();
        cycle();
        micros.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let total: f64 = micros.iter().sum();
    micros.sort_by(f64::total_cmp);
    Ok(Sample {
        p50: percentile(&micros, 0.50),
        p99: percentile(&micros, 0.99),
        mean: total / CYCLES as f64,
        rate: CYCLES as f64 * 1e6 / total,
    })
}

/// Workload (b): `THREADS` threads on distinct lock names for `WINDOW`; cycles per second.
fn many_threads(setup: &Setup, contender: Contender) -> Res<f64> {
    if contender == Contender::RedisBenchmark {
        return Ok(redis_benchmark(setup.port, THREADS)?.rate);
    }
    // 0: warming up, 1: counting, 2: stop. A phase flag, not a barrier, so that a thread that
    // panics early cannot leave the others (and main) waiting forever.
    let phase = AtomicU8::new(0);
    thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let phase = &phase;
                s.spawn(move || {
                    let mut cycle = setup
                        .cycle(contender, &format!("bench-{t}"))
                        .expect("connect");
                    let mut counted = 0u64;
                    loop {
                        // A cycle counts if it started inside the window.
                        let now = phase.load(Ordering::Relaxed);
                        if now == 2 {
                            return counted;
                        }
                        cycle();
                        counted += u64::from(now == 1);
                    }
                })
            })
            .collect();
        thread::sleep(THREAD_WARMUP);
        phase.store(1, Ordering::Relaxed);
        let start = Instant::now();
        thread::sleep(WINDOW);
        phase.store(2, Ordering::Relaxed);
        let window = start.elapsed().as_secs_f64();
        let cycles: u64 = workers
            .into_iter()
            .map(|w| w.join().expect("worker thread panicked"))
            .sum();
        Ok(cycles as f64 / window)
    })
}

/// `redis-benchmark -t set` with `clients` connections against our server.
fn redis_benchmark(port: u16, clients: usize) -> Res<Sample> {
    let out = Command::new("redis-benchmark")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(["-t", "set", "-n", BENCH_REQUESTS])
        .args(["-c", &clients.to_string(), "-P", "1", "-q", "--csv"])
        .output()
        .map_err(|e| format!("cannot run redis-benchmark (package redis-tools): {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("redis-benchmark failed: {err}").into());
    }
    // --csv: a line of quoted column names, then a line of quoted values per test.
    let text = String::from_utf8(out.stdout)?;
    let mut rows = text.lines().map(|l| {
        l.split(',')
            .map(|f| f.trim_matches('"'))
            .collect::<Vec<_>>()
    });
    let header = rows.next().ok_or("redis-benchmark printed nothing")?;
    let row = rows
        .find(|r| r.first() == Some(&"SET"))
        .ok_or("redis-benchmark printed no SET row")?;
    let column = |name: &str| -> Res<f64> {
        let i = header.iter().position(|h| *h == name);
        let field = i.and_then(|i| row.get(i));
        Ok(field
            .ok_or(format!("no {name} in redis-benchmark output"))?
            .parse()?)
    };
    Ok(Sample {
        p50: column("p50_latency_ms")? * 1e3,
        p99: column("p99_latency_ms")? * 1e3,
        mean: column("avg_latency_ms")? * 1e3,
        rate: column("rps")?,
    })
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
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
