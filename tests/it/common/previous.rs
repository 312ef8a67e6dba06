//! The lock as the previous version of dibs takes it (0.1.0 before issue 29, commit 8bcf2eb):
//! its acquire and release scripts, verbatim in `previous/`, run on a connection of the test's
//! own. For the rolling deploy: instances of both versions must exclude each other on one lock.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use dibs::{LockParams, Locker, Outcome};
use redis::ConnectionLike;

const ACQUIRE: &str = include_str!("previous/acquire.lua");
const RELEASE: &str = include_str!("previous/release.lua");

/// How a race of the two versions on one lock went.
#[derive(Debug, Default)]
pub struct Race {
    /// Times a task started while the other version's task ran.
    pub overlaps: u32,
    pub previous_ran: u32,
    pub previous_skipped: u32,
    pub current_ran: u32,
    pub current_skipped: u32,
}

/// First each version holds lock `name` while the other tries it (so each has run once and been
/// skipped once, whatever the race below does), then `rounds` tries by each version at once, on
/// threads of their own, each task holding the lock for about a millisecond: which wins the race
/// is the scheduler's choice (one version won all 300 once), that none overlaps is the test. `history`: the previous version records its runs
/// as its default did (a second key, its stream), else it releases with the lock's key alone (as
/// it did on a Cluster).
pub fn race(
    current: &Locker,
    mut previous: impl ConnectionLike + Send,
    name: &str,
    rounds: u32,
    history: bool,
) -> Race {
    let running = AtomicBool::new(false);
    let overlaps = AtomicU32::new(0);
    let task = || {
        if running.swap(true, Ordering::SeqCst) {
            overlaps.fetch_add(1, Ordering::SeqCst);
        }
        std::thread::sleep(Duration::from_millis(1));
        running.store(false, Ordering::SeqCst);
    };
    let key = format!("dibs:{name}");
    let stream = format!("dibs:\u{1f}history:{name}");
    let params = LockParams::from_millis(name, 5_000, 0).unwrap();
    let acquire_previous = |conn: &mut dyn ConnectionLike, value: &str| -> bool {
        let fence: Option<u64> = redis::cmd("EVAL")
            .arg(ACQUIRE)
            .arg(1)
            .arg(&key)
            .arg(value)
            .arg(5_000)
            .arg(0)
            .query(conn)
            .unwrap();
        fence.is_some()
    };
    // The previous version's release, with nothing of atLeast left: its result code.
    let release_previous = |conn: &mut dyn ConnectionLike, value: &str| -> i64 {
        let mut release = redis::cmd("EVAL");
        release.arg(RELEASE);
        if history {
            let record = format!("ok;1;0;1;1764547200000;4242;previous-host;;;{name}");
            release
                .arg(2)
                .arg(&key)
                .arg(&stream)
                .arg(value)
                .arg(0)
                .arg(0)
                .arg(0)
                .arg(100)
                .arg(3_456_000_000u64)
                .arg(record);
        } else {
            release.arg(1).arg(&key).arg(value).arg(0);
        }
        release.query(conn).unwrap()
    };
    // Each version holds the lock while the other tries it.
    let held_by_previous = format!("{};previous-host;4242;1764547200000", uuid::Uuid::new_v4());
    assert!(
        acquire_previous(&mut previous, &held_by_previous),
        "the previous version takes the free lock"
    );
    assert!(
        matches!(current.execute(&params, task).unwrap(), Outcome::Skipped),
        "this version skips the previous version's lock"
    );
    let code = release_previous(&mut previous, &held_by_previous);
    assert_eq!(code & 15, 2, "the previous version released its own lock");
    let lease = current
        .acquire(&params)
        .unwrap()
        .won()
        .expect("this version takes the free lock");
    let other = format!("{};previous-host;4242;1764547200000", uuid::Uuid::new_v4());
    assert!(
        !acquire_previous(&mut previous, &other),
        "the previous version skips this version's lock"
    );
    assert!(lease.release().owned_to_the_end());
    let (mut race, previous_counts) = std::thread::scope(|scope| {
        let old = scope.spawn(|| {
            let (mut ran, mut skipped) = (0, 0);
            for round in 0..rounds {
                let value = format!("{};previous-host;4242;1764547200000", uuid::Uuid::new_v4());
                if !acquire_previous(&mut previous, &value) {
                    skipped += 1;
                    continue;
                }
                task();
                ran += 1;
                let code = release_previous(&mut previous, &value);
                assert_eq!(
                    code & 15,
                    2,
                    "the previous version released its own lock (round {round})"
                );
            }
            (ran, skipped)
        });
        let mut race = Race::default();
        for _ in 0..rounds {
            match current.execute(&params, task).unwrap() {
                Outcome::Ran { ending, .. } => {
                    assert!(ending.owned_to_the_end(), "{ending:?}");
                    race.current_ran += 1;
                }
                Outcome::Skipped => race.current_skipped += 1,
                Outcome::Unconfirmed(why) => panic!("no durable acquire here: {why}"),
            }
        }
        (race, old.join().unwrap())
    });
    (race.previous_ran, race.previous_skipped) = previous_counts;
    // The runs and skips of the turns before the race.
    race.previous_ran += 1;
    race.previous_skipped += 1;
    race.current_ran += 1;
    race.current_skipped += 1;
    race.overlaps = overlaps.load(Ordering::SeqCst);
    race
}
