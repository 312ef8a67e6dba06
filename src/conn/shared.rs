//! One plain TCP connection that many callers share: what they send meanwhile goes out in one
//! write, and their replies come back in one read (auto-pipelining). The server then pays one
//! `read` and one `write` for many commands, where a connection per caller costs it both for
//! each: on a saturated server, most of a lock cycle's time (docs/performance.md).
//!
//! No thread of its own: the callers do the work. A caller that finds nobody writing writes
//! everything queued, its own command and those queued while it wrote; a caller that finds
//! nobody reading reads replies and hands each to its caller, in the order the commands were
//! written, until its own has come, then hands the reading on to the next caller waiting. A
//! lone caller thus writes and reads its own, as on a connection of its own, with no hand-off.
//!
//! Bounds: each write and each read is bounded by the socket's timeouts (the read timeout), and
//! each caller waits for its replies at most the read timeout from when its command was queued;
//! a caller that gives up leaves its place, and its late reply is read and dropped. A server's
//! error reply goes to the one caller whose command it answers. A failed read or write leaves
//! the stream unreadable: every caller waiting on it gets the error, and the connection takes no
//! more commands.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use redis::{RedisResult, Value};

use super::frames::frame_len;

pub(crate) struct Shared {
    socket: TcpStream,
    state: Mutex<State>,
    /// Only the caller that reads holds it.
    reading: Mutex<Reading>,
    db: i64,
}

struct State {
    /// Commands queued and not yet written.
    queued: Vec<u8>,
    /// The buffer the last write used, kept for its capacity.
    spare: Vec<u8>,
    writing: bool,
    reading: bool,
    /// The callers whose replies are due, in the order their commands went out.
    due: VecDeque<Arc<Slot>>,
    /// Why the connection takes no more commands.
    broken: Option<Broken>,
    /// How long a caller waits for its replies (the read timeout).
    wait: Duration,
}

struct Reading {
    /// What was read and not yet handed out: the start of a reply whose rest is still to come.
    buffer: Vec<u8>,
    /// Where each read lands.
    chunk: Vec<u8>,
    /// The socket's read timeout as last set.
    timeout: Duration,
}

/// How far past its deadline a reader's read may end: a tighter read timeout would be set on
/// every hand-over of the reading, a system call each.
const DEADLINE_SLACK: Duration = Duration::from_millis(1);

#[derive(Clone)]
struct Broken(io::ErrorKind, String);

impl Broken {
    fn error(&self) -> redis::RedisError {
        io::Error::new(self.0, self.1.clone()).into()
    }
}

/// One caller's place in line.
struct Slot {
    state: Mutex<SlotState>,
    ready: Condvar,
}

struct SlotState {
    /// Replies still due.
    left: usize,
    replies: Vec<Value>,
    failed: Option<Broken>,
    /// Its caller waits for it (not so for a command sent without waiting, nor once the caller
    /// gave up).
    waiting: bool,
    /// Told to take over the reading.
    lead: bool,
}

impl Slot {
    fn new(count: usize, waiting: bool) -> Arc<Slot> {
        Arc::new(Slot {
            state: Mutex::new(SlotState {
                left: count,
                replies: Vec::with_capacity(count),
                failed: None,
                waiting,
                lead: false,
            }),
            ready: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SlotState {
    fn outcome(&mut self) -> Option<RedisResult<Vec<Value>>> {
        if let Some(broken) = &self.failed {
            return Some(Err(broken.error()));
        }
        (self.left == 0).then(|| Ok(std::mem::take(&mut self.replies)))
    }
}

impl Shared {
    /// Wraps a connected socket (its TCP settings made) of database `db`; the caller sets its
    /// timeouts and runs the handshake.
    pub(crate) fn new(socket: TcpStream, db: i64) -> Shared {
        Shared {
            socket,
            state: Mutex::new(State {
                queued: Vec::new(),
                spare: Vec::new(),
                writing: false,
                reading: false,
                due: VecDeque::new(),
                broken: None,
                wait: Duration::from_secs(1),
            }),
            reading: Mutex::new(Reading {
                buffer: Vec::new(),
                chunk: vec![0; 16 * 1024],
                timeout: Duration::ZERO,
            }),
            db,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Read and write timeouts of the socket, and how long a caller waits for its replies.
    pub(crate) fn set_timeouts(&self, timeout: Duration) -> RedisResult<()> {
        let mut reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        self.socket.set_read_timeout(Some(timeout))?;
        reading.timeout = timeout;
        self.socket.set_write_timeout(Some(timeout))?;
        self.lock().wait = timeout;
        Ok(())
    }

    pub(crate) fn db(&self) -> i64 {
        self.db
    }

    /// Whether it still takes commands.
    pub(crate) fn is_open(&self) -> bool {
        self.lock().broken.is_none()
    }

    /// Sends `packed` (`count` commands) and returns their `count` replies, each as it came (a
    /// server's error reply as a [`Value::ServerError`]).
    pub(crate) fn request(&self, packed: &[u8], count: usize) -> RedisResult<Vec<Value>> {
        let slot = Slot::new(count, true);
        let deadline = self.send(packed, Arc::clone(&slot))?;
        self.receive(&slot, deadline)
    }

    /// Sends `packed` (one command) without waiting for its reply, which is read and dropped.
    pub(crate) fn queue(&self, packed: &[u8]) -> bool {
        self.send(packed, Slot::new(1, false)).is_ok()
    }

    /// Queues `packed` behind what others queued, and writes the lot if nobody is writing.
    /// Returns by when its replies must have come.
    fn send(&self, packed: &[u8], slot: Arc<Slot>) -> RedisResult<Instant> {
        let mut state = self.lock();
        if let Some(broken) = &state.broken {
            return Err(broken.error());
        }
        let deadline = Instant::now() + state.wait;
        state.due.push_back(slot);
        state.queued.extend_from_slice(packed);
        if state.writing {
            return Ok(deadline);
        }
        state.writing = true;
        loop {
            let spare = std::mem::take(&mut state.spare);
            let mut out = std::mem::replace(&mut state.queued, spare);
            drop(state);
            let written = (&self.socket).write_all(&out);
            out.clear();
            state = self.lock();
            state.spare = out;
            if let Err(e) = written {
                state.writing = false;
                let broken = Broken(e.kind(), e.to_string());
                self.fail(&mut state, &broken);
                return Err(broken.error());
            }
            if state.queued.is_empty() {
                state.writing = false;
                return Ok(deadline);
            }
        }
    }

    /// Waits for `slot`'s replies, reading them (and others' before them) when nobody else reads.
    fn receive(&self, slot: &Arc<Slot>, deadline: Instant) -> RedisResult<Vec<Value>> {
        loop {
            let mut state = self.lock();
            let mut mine = slot.lock();
            if let Some(outcome) = mine.outcome() {
                mine.waiting = false;
                return outcome;
            }
            mine.lead = false;
            if Instant::now() >= deadline {
                // Our place stays in line: the late reply is read and dropped. The reading may
                // have been handed to us: hand it on.
                mine.waiting = false;
                drop(mine);
                if !state.reading {
                    pass_lead(&state);
                }
                return Err(io::Error::from(io::ErrorKind::TimedOut).into());
            }
            if !state.reading {
                state.reading = true;
                drop(mine);
                drop(state);
                self.read_until(slot, deadline);
                continue;
            }
            drop(state);
            let left = deadline.saturating_duration_since(Instant::now());
            let (mut mine, _) = slot
                .ready
                .wait_timeout_while(mine, left, |s| s.left > 0 && s.failed.is_none() && !s.lead)
                .unwrap_or_else(|p| p.into_inner());
            if let Some(outcome) = mine.outcome() {
                mine.waiting = false;
                return outcome;
            }
        }
    }

    /// Reads replies, each to its caller, until `own` has all of its own or its deadline passed;
    /// then hands the reading on to the first caller still waiting. Every whole reply that a
    /// read brought in goes to its caller at once, its own or not.
    fn read_until(&self, own: &Arc<Slot>, deadline: Instant) {
        let mut reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        let reading = &mut *reading;
        let left = deadline.saturating_duration_since(Instant::now());
        let mut failed = None;
        let mut extra = 0;
        if reading.timeout > left + DEADLINE_SLACK || reading.timeout + DEADLINE_SLACK < left {
            // The read ends by the deadline of the caller that reads.
            let bound = left.max(DEADLINE_SLACK);
            match self.socket.set_read_timeout(Some(bound)) {
                Ok(()) => reading.timeout = bound,
                Err(e) => failed = Some(Broken(e.kind(), e.to_string())),
            }
        }
        loop {
            let mut state = self.lock();
            let used = self.hand_out(&mut state, &reading.buffer, &mut failed);
            reading.buffer.drain(..used);
            if let Some(why) = failed.take() {
                self.fail(&mut state, &why);
            }
            let done = {
                let mine = own.lock();
                mine.left == 0 || mine.failed.is_some()
            };
            if done
                && extra < 32
                && state.broken.is_none()
                && state.due.iter().any(|s| s.lock().waiting)
            {
                extra += 1;
                drop(state);
                match (&self.socket).read(&mut reading.chunk) {
                    Ok(0) => {
                        let why = "the server closed the connection";
                        failed = Some(Broken(io::ErrorKind::UnexpectedEof, why.into()));
                    }
                    Ok(n) => reading.buffer.extend_from_slice(&reading.chunk[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => failed = Some(Broken(e.kind(), e.to_string())),
                }
                continue;
            }
            if done || state.broken.is_some() || Instant::now() >= deadline {
                state.reading = false;
                pass_lead(&state);
                return;
            }
            drop(state);
            match (&self.socket).read(&mut reading.chunk) {
                Ok(0) => {
                    let why = "the server closed the connection";
                    failed = Some(Broken(io::ErrorKind::UnexpectedEof, why.into()));
                }
                Ok(n) => reading.buffer.extend_from_slice(&reading.chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => failed = Some(Broken(e.kind(), e.to_string())),
            }
        }
    }

    /// Hands every whole reply in `buffer` to its caller, in line; returns the bytes used.
    fn hand_out(&self, state: &mut State, buffer: &[u8], failed: &mut Option<Broken>) -> usize {
        let mut used = 0;
        while failed.is_none() {
            let bad = |why: &str| Some(Broken(io::ErrorKind::InvalidData, why.to_owned()));
            let len = match frame_len(&buffer[used..]) {
                Ok(Some(len)) => len,
                Ok(None) => break,
                Err(why) => {
                    *failed = bad(why);
                    break;
                }
            };
            let value = redis::parse_redis_value(&buffer[used..used + len]);
            used += len;
            match value {
                // RESP3 may put push data between replies: not a reply.
                Ok(Value::Push { .. }) => {}
                Ok(value) => match state.due.front() {
                    Some(first) => {
                        let mut slot = first.lock();
                        slot.replies.push(value);
                        slot.left -= 1;
                        if slot.left == 0 {
                            first.ready.notify_one();
                            drop(slot);
                            state.due.pop_front();
                        }
                    }
                    None => *failed = bad("a reply to no command"),
                },
                Err(e) => *failed = bad(&e.to_string()),
            }
        }
        used
    }

    /// Takes no more commands, and fails every caller waiting.
    fn fail(&self, state: &mut State, broken: &Broken) {
        state.broken.get_or_insert_with(|| broken.clone());
        for slot in state.due.drain(..) {
            slot.lock().failed = Some(broken.clone());
            slot.ready.notify_one();
        }
    }
}

/// Tells the first caller still waiting for a reply to take over the reading.
fn pass_lead(state: &State) {
    for slot in &state.due {
        let mut waiter = slot.lock();
        if waiter.waiting && waiter.left > 0 {
            waiter.lead = true;
            slot.ready.notify_one();
            return;
        }
    }
}
