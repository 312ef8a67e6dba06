//! The two workloads, each run for one contender: one thread (the latency of a cycle), and
//! `THREADS` threads on distinct lock names (cycles per second); redis-benchmark as the reference.

use std::process::Command;
use std::sync::atomic::{AtomicU8, Ordering};
use std::thread;
use std::time::Instant;

use crate::contenders::{Contender, Setup};
use crate::support::Res;
use crate::{BENCH_REQUESTS, CYCLES, THREADS, THREAD_WARMUP, WARMUP, WINDOW};

/// One run's figures: latencies in µs (of a cycle, or of one request for redis-benchmark) and
/// cycles or requests per second.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    pub p50: f64,
    pub p99: f64,
    pub mean: f64,
    pub rate: f64,
}

/// Workload (a): one thread, latency of each cycle.
pub fn single_thread(setup: &Setup, contender: Contender) -> Res<Sample> {
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
pub fn many_threads(setup: &Setup, contender: Contender) -> Res<f64> {
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
