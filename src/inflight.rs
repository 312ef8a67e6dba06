//! Blocking steps that have no timeout of their own (a unix connect, the cluster client's
//! connect, the system resolver), run on a helper thread and waited for up to a deadline.
//!
//! A step given up on cannot be cancelled: its thread (and its socket) live until it returns,
//! which for a frozen server is when it thaws. So that retries do not pile them up, at most one
//! step per key is in flight: a caller that finds one running waits on it (up to its own
//! deadline) instead of starting another, and takes its result if that is a success, so that a
//! late connection is not wasted. Concurrent callers of one key thus wait for each other's
//! steps, one at a time.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use redis::{RedisError, RedisResult};

pub(crate) struct InFlight<K, T> {
    steps: Mutex<HashMap<K, Arc<Step<T>>>>,
}

struct Step<T> {
    state: Mutex<State<T>>,
    ended: Condvar,
}

enum State<T> {
    Running,
    Done(RedisResult<T>),
    /// A caller took the result.
    Taken,
}

/// What a caller found when it stopped waiting on a step.
enum Waited<T> {
    /// Still running at the caller's deadline.
    Running,
    Took(RedisResult<T>),
    /// Its result is not for this caller: taken by another, or an error of another's step.
    Gone,
}

impl<K: Eq + Hash + Clone, T: Send + 'static> InFlight<K, T> {
    pub(crate) fn new() -> Self {
        InFlight {
            steps: Mutex::new(HashMap::new()),
        }
    }

    /// The result of `step` for `key` by `deadline`, or a timeout error. Starts `step` only when
    /// no step of `key` is in flight; else waits on that one.
    pub(crate) fn run<F>(&self, key: &K, deadline: Instant, step: &F) -> RedisResult<T>
    where
        F: Fn() -> RedisResult<T> + Clone + Send + 'static,
    {
        loop {
            if deadline <= Instant::now() {
                return Err(timed_out());
            }
            let (current, mine) = {
                let mut steps = self.lock();
                match steps.get(key) {
                    Some(current) => (current.clone(), false),
                    None => {
                        let started = Step::start(step.clone())?;
                        steps.insert(key.clone(), started.clone());
                        (started, true)
                    }
                }
            };
            let waited = current.wait(deadline, mine);
            if !matches!(waited, Waited::Running) {
                // Ended: the next caller starts afresh (unless another has already).
                let mut steps = self.lock();
                if steps.get(key).is_some_and(|s| Arc::ptr_eq(s, &current)) {
                    steps.remove(key);
                }
            }
            match waited {
                Waited::Running => return Err(timed_out()),
                Waited::Took(result) => return result,
                Waited::Gone => {} // try again, with a step of our own if none runs
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, Arc<Step<T>>>> {
        self.steps.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<T: Send + 'static> Step<T> {
    fn start(work: impl FnOnce() -> RedisResult<T> + Send + 'static) -> RedisResult<Arc<Step<T>>> {
        let step = Arc::new(Step {
            state: Mutex::new(State::Running),
            ended: Condvar::new(),
        });
        let done = step.clone();
        std::thread::Builder::new()
            .name("dibs-connect".into())
            .spawn(move || {
                let result = work();
                *done.lock() = State::Done(result);
                done.ended.notify_all();
            })
            .map_err(RedisError::from)?;
        Ok(step)
    }

    /// Waits until the step ends or `deadline`. The caller that started it takes whatever it
    /// returns; another caller only a success (an error of someone else's step may be stale).
    fn wait(&self, deadline: Instant, mine: bool) -> Waited<T> {
        let mut state = self.lock();
        loop {
            match &*state {
                State::Running => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Waited::Running;
                    }
                    state = self
                        .ended
                        .wait_timeout(state, deadline - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
                State::Done(Err(_)) if !mine => return Waited::Gone,
                State::Done(_) => {
                    let State::Done(result) = std::mem::replace(&mut *state, State::Taken) else {
                        unreachable!("matched Done above")
                    };
                    return Waited::Took(result);
                }
                State::Taken => return Waited::Gone,
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn timed_out() -> RedisError {
    std::io::Error::from(std::io::ErrorKind::TimedOut).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// A step that blocks until `gate` opens, counting its starts, returning `value`.
    fn gated(
        gate: &Arc<(Mutex<bool>, Condvar)>,
        starts: &Arc<AtomicUsize>,
        value: RedisResult<u32>,
    ) -> impl Fn() -> RedisResult<u32> + Clone + Send + 'static {
        let (gate, starts) = (gate.clone(), starts.clone());
        move || {
            starts.fetch_add(1, Ordering::SeqCst);
            let (open, opened) = &*gate;
            let mut open = open.lock().unwrap();
            while !*open {
                open = opened.wait(open).unwrap();
            }
            value.clone()
        }
    }

    fn open(gate: &Arc<(Mutex<bool>, Condvar)>) {
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_millis(30)
    }

    #[test]
    fn a_step_still_running_is_waited_on_not_started_again_and_its_success_adopted() {
        let flights = InFlight::<(), u32>::new();
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let starts = Arc::new(AtomicUsize::new(0));
        let step = gated(&gate, &starts, Ok(7));
        for _ in 0..20 {
            assert!(flights.run(&(), soon(), &step).unwrap_err().is_timeout());
        }
        assert_eq!(
            starts.load(Ordering::SeqCst),
            1,
            "one step in flight, not 20"
        );
        open(&gate);
        assert_eq!(
            flights.run(&(), soon(), &step).unwrap(),
            7,
            "the late result is adopted"
        );
        assert_eq!(starts.load(Ordering::SeqCst), 1);
        // Taken: the next call starts a step of its own.
        assert_eq!(flights.run(&(), soon(), &step).unwrap(), 7);
        assert_eq!(starts.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn an_old_error_of_an_abandoned_step_is_not_handed_on() {
        let flights = InFlight::<(), u32>::new();
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let starts = Arc::new(AtomicUsize::new(0));
        let failing = gated(&gate, &starts, Err((redis::ErrorKind::Io, "old").into()));
        assert!(flights.run(&(), soon(), &failing).unwrap_err().is_timeout());
        open(&gate);
        std::thread::sleep(Duration::from_millis(20)); // the abandoned step ends, failed
        let ok = gated(&gate, &starts, Ok(1));
        assert_eq!(flights.run(&(), soon(), &ok).unwrap(), 1, "started afresh");
        assert_eq!(starts.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn keys_do_not_wait_on_each_other() {
        let flights = InFlight::<&str, u32>::new();
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let starts = Arc::new(AtomicUsize::new(0));
        let stuck = gated(&gate, &starts, Ok(1));
        assert!(flights.run(&"a", soon(), &stuck).unwrap_err().is_timeout());
        let free = Arc::new((Mutex::new(true), Condvar::new()));
        assert_eq!(
            flights
                .run(&"b", soon(), &gated(&free, &starts, Ok(2)))
                .unwrap(),
            2
        );
        open(&gate);
    }
}
