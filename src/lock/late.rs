//! A lock won too late to run a task under: its reply came after half of `atMost` from the send
//! of its `SET`. The server may have set the key at the send, so the lock may lapse under the
//! task, and the keep-alive's first extension (a third of `atMost` after the send) may come
//! after it did: the lock is given back, and the call is unconfirmed.

use std::time::{Duration, Instant};

use super::tick_start::TickStart;
use super::Locker;

impl Locker {
    /// Gives the lock back and says why, if its reply came too late (see the module docs).
    pub(super) fn refuse_late(
        &self,
        (name, key, value): (&str, &str, &str),
        start: Option<&TickStart>,
        sent: Instant,
        at_most_ms: u64,
    ) -> Option<String> {
        let took = sent.elapsed();
        if !late(took, at_most_ms) {
            return None;
        }
        self.take_back(name, key, value, start);
        Some(format!(
            "lock '{name}' was won, but its reply came {} ms after it was asked for, over half of \
             atMost ({at_most_ms} ms) on {}: the lock could lapse before the task ends, so it was \
             given back and the task did not run",
            took.as_millis(),
            self.spec.endpoint()
        ))
    }
}

/// Whether `took` from the send is over half of `at_most_ms` (compared in µs).
fn late(took: Duration, at_most_ms: u64) -> bool {
    took.as_micros() * 2 > u128::from(at_most_ms) * 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_of_at_most_is_the_line_to_the_microsecond() {
        assert!(!late(Duration::from_micros(500), 1));
        assert!(late(Duration::from_micros(501), 1));
        assert!(late(Duration::from_micros(990), 1));
        assert!(!late(Duration::from_millis(500), 1_000));
        assert!(late(Duration::from_millis(700), 1_000));
    }
}
