//! One Rust process of the cross-process, cross-language mutual exclusion stress test
//! (`java/src/test/java/dibs/ExclusionStressTest.java`), the twin of the Java
//! `dibs.stress.ExclusionWorker`: same arguments, same protocol, same output.
//!
//! ```sh
//! cargo build --release -p dibs-test-tools
//! target/release/exclusion_worker <redis-uri> <dir> <name,name,...> <threads> <attempts-per-thread>
//! ```
//!
//! It prints `READY` once a connection is up, then waits until the file `<dir>/go` exists (the
//! start barrier shared by every process). Each thread then makes its quota of
//! `Locker::execute` calls, each on a lock name picked at random from the list, with atMost
//! 10 s and atLeast 0, so a holder releases at once and the others compete often. The task is
//! the overlap detector, which works across processes: it creates `<dir>/<name>.held`
//! exclusively, sleeps `HOLD`, and deletes it. If the file already exists, another holder of
//! the same lock is inside its task right now: an overlap, counted (the run goes on).
//!
//! Any error is counted, and so is a release that did not delete our own key (it failed, or
//! found the lock gone or someone else's: neither can happen here with a 10 s atMost). The last
//! line is `RESULT attempts=.. wins=.. skips=.. overlaps=.. errors=.. startMs=.. endMs=..` (the
//! times in Unix milliseconds). Exit status: 0 when clean, 1 with overlaps or errors, 2 when
//! the run could not happen at all.

use std::fs::{self, OpenOptions};
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dibs::{ConnSpec, Ended, LockParams, Locker, Outcome};

/// How long a winner stays inside its task: the window in which an overlap shows.
const HOLD: Duration = Duration::from_micros(300);
const AT_MOST_MS: i64 = 10_000;
const AT_LEAST_MS: i64 = 0;
/// How long to wait for the go file before giving up.
const GO_TIMEOUT: Duration = Duration::from_secs(120);
/// Errors whose message is printed; the rest are only counted.
const ERRORS_SHOWN: u64 = 5;

#[derive(Default)]
struct Counts {
    attempts: AtomicU64,
    wins: AtomicU64,
    skips: AtomicU64,
    overlaps: AtomicU64,
    errors: AtomicU64,
}

impl Counts {
    fn error(&self, what: impl std::fmt::Display) {
        if self.errors.fetch_add(1, Ordering::Relaxed) < ERRORS_SHOWN {
            println!("ERROR {what}");
        }
    }

    fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 5 {
        eprintln!(
            "usage: exclusion_worker <redis-uri> <dir> <name,name,...> <threads> <attempts-per-thread>"
        );
        return ExitCode::from(2);
    }
    let dir = PathBuf::from(&args[1]);
    let names: Vec<String> = args[2].split(',').map(str::to_owned).collect();
    let (Ok(threads), Ok(per_thread)) = (args[3].parse::<u64>(), args[4].parse::<u64>()) else {
        eprintln!("threads and attempts-per-thread must be whole numbers");
        return ExitCode::from(2);
    };

    // Connect before the start line, as the JVMs load their native library before theirs.
    let warmup = ConnSpec::from_uri(&args[0]).and_then(|spec| {
        let locker = Locker::shared(spec)?;
        let params = LockParams::from_millis(
            &format!("exclusion-warmup-{}", std::process::id()),
            AT_MOST_MS,
            AT_LEAST_MS,
        )?;
        locker.execute(&params, || ())?;
        Ok(locker)
    });
    let locker = match warmup {
        Ok(locker) => locker,
        Err(e) => {
            println!("FAILED warm-up: {e}");
            return ExitCode::from(2);
        }
    };
    let params: Vec<LockParams> = names
        .iter()
        .map(|name| LockParams::from_millis(name, AT_MOST_MS, AT_LEAST_MS))
        .collect::<Result<_, _>>()
        .expect("the lock names and durations are valid");

    println!("READY");
    if !await_go_file(&dir.join("go")) {
        println!(
            "FAILED no {} within {} s",
            dir.join("go").display(),
            GO_TIMEOUT.as_secs()
        );
        return ExitCode::from(2);
    }

    let counts = Counts::default();
    let start_ms = unix_ms();
    thread::scope(|scope| {
        for t in 0..threads {
            let (counts, params, dir) = (&counts, &params, &dir);
            scope.spawn(move || {
                let mut rng = Rng::new(t);
                for _ in 0..per_thread {
                    let p = &params[rng.below(params.len())];
                    attempt(locker, p, dir, counts);
                }
            });
        }
    });
    let end_ms = unix_ms();

    let overlaps = Counts::get(&counts.overlaps);
    let errors = Counts::get(&counts.errors);
    println!(
        "RESULT attempts={} wins={} skips={} overlaps={overlaps} errors={errors} startMs={start_ms} endMs={end_ms}",
        Counts::get(&counts.attempts),
        Counts::get(&counts.wins),
        Counts::get(&counts.skips),
    );
    if overlaps == 0 && errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn attempt(locker: &Locker, params: &LockParams, dir: &Path, counts: &Counts) {
    counts.attempts.fetch_add(1, Ordering::Relaxed);
    match locker.execute(params, || critical(dir, params.name(), counts)) {
        Ok(Outcome::Skipped) => {
            counts.skips.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Outcome::Ran { value, ending }) => {
            counts.wins.fetch_add(1, Ordering::Relaxed);
            if let Err(e) = value {
                counts.error(format!("task on '{}': {e}", params.name()));
            }
            if ending.ended != Ended::Released {
                counts.error(format!(
                    "release of '{}': {:?}",
                    params.name(),
                    ending.ended
                ));
            }
        }
        Ok(Outcome::Unconfirmed(why)) => counts.error(format!("'{}': {why}", params.name())),
        Err(e) => counts.error(format!("'{}': {e}", params.name())),
    }
}

/// The task: proves no one else is inside a task of the same lock name.
fn critical(dir: &Path, name: &str, counts: &Counts) -> io::Result<()> {
    let held = dir.join(format!("{name}.held"));
    match OpenOptions::new().write(true).create_new(true).open(&held) {
        Ok(file) => drop(file),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            counts.overlaps.fetch_add(1, Ordering::Relaxed);
            return Ok(()); // the file is the other holder's: theirs to delete
        }
        Err(e) => return Err(e),
    }
    thread::sleep(HOLD);
    fs::remove_file(&held)
}

fn await_go_file(go: &Path) -> bool {
    let deadline = Instant::now() + GO_TIMEOUT;
    while !go.exists() {
        if Instant::now() > deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(1));
    }
    true
}

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// xorshift64*: enough to spread the threads over the lock names, with no extra dependency.
struct Rng(u64);

impl Rng {
    fn new(thread: u64) -> Rng {
        let seed = unix_ms() as u64 ^ (u64::from(std::process::id()) << 32) ^ (thread + 1);
        // Never zero: zero is xorshift's one fixed point.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize % n
    }
}
