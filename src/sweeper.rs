//! The orphan sweeper, for Cluster and durable acquire. A `SET` that timed out may still run when
//! its frozen node thaws, and then hold the lock for `atMost` with nothing running. On a single
//! connection dibs queues a token-checked delete behind the `SET` on the same socket
//! (`Conn::queue`); a cluster connection routes per command and has no such socket, and a delete
//! queued behind durable acquire's `WAIT` is dropped (the server blocks the connection at the
//! `WAIT` and finds it closed meanwhile), so the delete is made here instead, on one process-wide
//! thread: the doomed value is deleted (token-checked, so never someone else's
//! lock) as soon as the node answers, and again until the node has been seen answering twice,
//! some time apart, without the value there. Redis reads every ready socket in an event-loop
//! pass, so by the second answer it has read the stuck `SET` too.
//!
//! A job gives up after [`GIVE_UP`] with the node still silent: a node frozen longer than that
//! (beyond any cluster's failover) can still leave its lock held for `atMost` after it thaws.

use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::conn::Conn;
use crate::pool::Pool;
use crate::script;

/// How long a job retries a node that stays silent.
pub(crate) const GIVE_UP: Duration = Duration::from_secs(600);
/// Between two rounds of deletes.
const ROUND: Duration = Duration::from_millis(100);
/// Two answers at least this far apart end a job.
const SETTLED: Duration = Duration::from_millis(200);

struct Job {
    pool: Arc<Pool>,
    key: String,
    value: String,
    /// A tick's: its job's stream (in the lock's slot) and the lock's name, for the start's entry
    /// that the same script wrote (`script::UNSTART`).
    start: Option<(String, String)>,
    since: Instant,
    /// When the node last answered without our value there, after its last silence.
    answered: Option<Instant>,
}

#[derive(Default)]
struct Queue {
    jobs: Mutex<Vec<Job>>,
    wake: Condvar,
}

fn queue() -> &'static Queue {
    static QUEUE: OnceLock<Queue> = OnceLock::new();
    QUEUE.get_or_init(Queue::default)
}

/// Deletes `key` if it ever holds `value` (a `SET` of ours that timed out), until that is sure;
/// with `start` (a tick's stream and lock name), the start's entry written with it too.
/// If no thread can be had, nothing is swept: the lock then lapses within its `atMost`.
pub(crate) fn sweep(pool: Arc<Pool>, key: String, value: String, start: Option<(String, String)>) {
    static STARTED: OnceLock<bool> = OnceLock::new();
    let started = *STARTED.get_or_init(|| {
        thread::Builder::new()
            .name("dibs-sweeper".into())
            .spawn(run)
            .is_ok()
    });
    if !started {
        return;
    }
    let q = queue();
    q.jobs.lock().unwrap_or_else(|p| p.into_inner()).push(Job {
        pool,
        key,
        value,
        start,
        since: Instant::now(),
        answered: None,
    });
    q.wake.notify_one();
}

fn run() {
    let q = queue();
    loop {
        let mut jobs = {
            let mut waiting = q.jobs.lock().unwrap_or_else(|p| p.into_inner());
            while waiting.is_empty() {
                waiting = q.wake.wait(waiting).unwrap_or_else(|p| p.into_inner());
            }
            std::mem::take(&mut *waiting)
        };
        jobs.retain_mut(|job| !round(job));
        let mut waiting = q.jobs.lock().unwrap_or_else(|p| p.into_inner());
        waiting.extend(jobs);
        drop(waiting);
        thread::sleep(ROUND);
    }
}

/// One delete of `job`'s value; true when the job is done.
fn round(job: &mut Job) -> bool {
    let delete = |conn: &mut Conn| match &job.start {
        Some((stream, name)) => script::UNSTART.run_with::<i64>(
            conn,
            &[job.key.as_str(), stream.as_str()],
            job.value.len() + name.len() + 8,
            |cmd| {
                cmd.arg(&job.value).arg(name);
            },
        ),
        None => script::RELEASE.run::<i64>(conn, &job.key, &job.value, 0),
    };
    let key = &job.key;
    let found = job
        .pool
        .run(&format_args!("sweeping lock key '{key}'"), delete, delete);
    let now = Instant::now();
    match found {
        Ok(2) => true, // it had landed: deleted now
        Ok(_) => match job.answered {
            Some(first) => now.duration_since(first) >= SETTLED,
            None => {
                job.answered = Some(now);
                false
            }
        },
        Err(_) => {
            job.answered = None; // silent again: start counting afresh
            now.duration_since(job.since) >= GIVE_UP
        }
    }
}
