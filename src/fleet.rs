//! The fleet operations: what an operator asks of all instances at once (each job's history,
//! the jobs, the held locks, a forced release), read from Redis, never from one instance.
//!
//! A listing scans the keyspace to its end, on every master of a Cluster, within a time budget;
//! past the budget it says it is partial, and how far it got, rather than pass for complete.

use std::time::{Duration, Instant};

use redis::{RedisResult, Value};

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::history::{self, Ended, HeldLock, Job, Run};
use crate::holder::Holder;
use crate::lock::{validate_name, Locker};
use crate::script;

/// Keys asked of each `SCAN`.
const SCAN_BATCH: usize = 1000;

/// How long a listing scans by default (the CLI's `--budget`, the JVM's listings).
pub const SCAN_BUDGET: Duration = Duration::from_secs(5);

/// The most runs a history read, or items a listing, gives (the CLI's `--limit`, Java's `limit`).
pub const MAX_LIMIT: usize = 10_000;

/// Checks a history's or a listing's limit, before any I/O: 1 to [`MAX_LIMIT`].
pub fn validate_limit(limit: i64) -> Result<usize> {
    usize::try_from(limit)
        .ok()
        .filter(|n| (1..=MAX_LIMIT).contains(n))
        .ok_or_else(|| {
            Error::invalid(
                "limit",
                format!("limit must be 1 to {MAX_LIMIT}, got {limit}"),
            )
        })
}

/// The longest a listing may scan.
pub const MAX_SCAN_BUDGET: Duration = Duration::from_secs(3600);

/// Checks a listing's time budget, before any I/O: more than 0, at most [`MAX_SCAN_BUDGET`].
pub fn validate_budget(budget: Duration) -> Result<()> {
    if budget.is_zero() || budget > MAX_SCAN_BUDGET {
        return Err(Error::invalid(
            "budget",
            format!(
                "budget must be more than 0 and at most 1 h, got {} ms",
                budget.as_millis()
            ),
        ));
    }
    Ok(())
}

/// What a name given to [`Locker::history`] matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Matched {
    /// The job of that name: all its runs.
    Job,
    /// A lock of that name, whose runs are recorded under `job`: those runs only.
    Lock { job: String },
    /// No run is recorded under that name as a job, nor as a lock.
    Nothing,
}

/// What the history holds of a job, or of one lock of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct History {
    pub matched: Matched,
    /// The runs, the newest first.
    pub runs: Vec<Run>,
    /// Every run of the name recorded since then (Unix ms, by the server's clock) is in `runs`:
    /// before it, runs may be missing from them: trimmed (a stream keeps the last
    /// [`HISTORY_LENGTH`](crate::HISTORY_LENGTH)), expired (a stream outlives its last entry
    /// by [`HISTORY_TTL`](crate::HISTORY_TTL)), or dropped with their job's stream to stay
    /// within [`HISTORY_JOBS`](crate::HISTORY_JOBS) jobs. And every success since then is
    /// known: it is just after the newest run whose outcome dibs did not see
    /// ([`Run::outcome_unknown`]), which may have succeeded.
    pub complete_since_unix_ms: u64,
    /// When the history last dropped a job's stream to stay within its jobs, if it did within
    /// its TTL.
    pub evicted_at_unix_ms: Option<u64>,
    /// When this job's own stream was dropped so, if it was (within the TTL, and among the last
    /// [`HISTORY_JOBS`](crate::HISTORY_JOBS) dropped) and has recorded no run since.
    pub job_evicted_at_unix_ms: Option<u64>,
}

/// A list found by scanning the keyspace: complete, or cut short by its time budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing<T> {
    pub items: Vec<T>,
    /// Whether the scan reached the end of the keyspace on every master. When false, `items`
    /// holds what the part scanned held: another match may exist.
    pub complete: bool,
    /// Whether more matched than the limit (then `items` are the first of them, in order).
    pub truncated: bool,
    /// About how many keys the scan looked at (`SCAN`'s batches), of the `keys` there are
    /// (`DBSIZE`, summed over the masters).
    pub scanned: u64,
    pub keys: u64,
}

/// What [`Locker::force_release`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForcedRelease {
    /// The lock held that token, and was deleted.
    Released,
    /// No lock of that name was held.
    Free,
    /// The lock holds another token now (released and taken again since): left alone.
    OtherHolder,
}

impl Locker {
    /// The last `limit` recorded runs of `name`, the newest first: of the job of that name, or
    /// else of the lock of that name within its job's history (the job [`crate::job_of`] gives
    /// it, or for `job@tick` the job before the `@`). It says which it matched. One round trip
    /// for a job, up to three for a lock.
    pub fn history(&self, name: &str, limit: usize) -> Result<History> {
        validate_name(name)?;
        let limit = limit.max(1);
        let read = self.runs_of(name, limit)?;
        if !read.runs.is_empty() {
            return Ok(read.history(Matched::Job, limit, |_| true));
        }
        for job in crate::job::jobs_of_lock(name) {
            let all = self.runs_of(job, history::HISTORY_LENGTH as usize)?;
            // Its job's history, even with no run of the lock in it, where that history may
            // have lost one (trimmed, or dropped): then what it proves is its own to say.
            let incomplete = all.full || all.evicted_at_unix_ms.is_some();
            if all.runs.iter().any(|run| run.name == name) || (incomplete && !all.runs.is_empty()) {
                let matched = Matched::Lock {
                    job: job.to_owned(),
                };
                return Ok(all.history(matched, limit, |run| run.name == name));
            }
        }
        Ok(read.history(Matched::Nothing, limit, |_| true))
    }

    /// The last `count` entries of `job`'s stream, and the eviction's mark: one round trip (one
    /// slot on a Cluster).
    fn runs_of(&self, job: &str, count: usize) -> Result<Read> {
        let prefix = self.spec.key_prefix();
        let (stream, evicted) = (
            history::stream_key(prefix, job),
            history::evicted_key(prefix),
        );
        let read = |conn: &mut Conn| -> RedisResult<(Value, Option<Vec<u8>>)> {
            redis::pipe()
                .cmd("XREVRANGE")
                .arg(&stream)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(count)
                .get(&evicted)
                .query(conn)
        };
        let (reply, evicted) =
            self.pool
                .run(&format_args!("reading the history of '{job}'"), read, read)?;
        let entries = history::entries(&reply);
        // The mark as dibs writes it, a number; anything else under that key marks nothing.
        let evicted_at_unix_ms = evicted
            .and_then(|v| String::from_utf8(v).ok())
            .and_then(|v| v.parse().ok());
        let at = |id: &str| id.split('-').next().and_then(|ms| ms.parse::<u64>().ok());
        let mut runs = Vec::with_capacity(entries.len());
        let mut unreadable_unix_ms = None;
        for (id, fields) in &entries {
            match Run::parse(id, fields) {
                Some(run) => runs.push(run),
                // A tick's start taken back (`script::tick`): dibs's own, and no run.
                None if matches!(fields.as_slice(), [f, v] if f == "run" && v == "taken-back") => {}
                // Not a run this version reads (another's, or foreign): it may be one that
                // succeeded. Entries are newest first: the first is the newest.
                None => {
                    unreadable_unix_ms = unreadable_unix_ms.or(Some(at(id).unwrap_or(u64::MAX)))
                }
            }
        }
        let oldest_entry_unix_ms = entries.last().map(|(id, _)| at(id).unwrap_or(0));
        self.running_starts(&mut runs)?;
        // Only a job with no stream can have been evicted: its own mark is read then alone, and
        // a server that refuses it (an ACL of an earlier dibs, without +zscore) just leaves it
        // untold.
        let job_evicted_at_unix_ms = match (entries.is_empty(), evicted_at_unix_ms) {
            (true, Some(_)) => {
                let jobs = history::evicted_jobs_key(prefix);
                let score = |conn: &mut Conn| -> RedisResult<Option<f64>> {
                    redis::cmd("ZSCORE").arg(&jobs).arg(job).query(conn)
                };
                let what = format_args!("reading the eviction of '{job}'");
                self.pool
                    .run(&what, score, score)
                    .ok()
                    .flatten()
                    .map(|ms| ms as u64)
            }
            _ => None,
        };
        Ok(Read {
            full: entries.len() >= count,
            oldest_entry_unix_ms,
            unreadable_unix_ms,
            runs,
            evicted_at_unix_ms,
            job_evicted_at_unix_ms,
        })
    }

    /// Tells the runs of which only the start is recorded that still run (their holder holds
    /// their lock: [`Ended::Running`]) from those whose end was never recorded (left
    /// [`Ended::Unended`]): one read of each such lock, most often none.
    fn running_starts(&self, runs: &mut [Run]) -> Result<()> {
        for run in runs.iter_mut().filter(|r| r.ended == Ended::Unended) {
            let key = self.key(&run.name);
            let end = crate::holder::MAX_VALUE_BYTES as isize;
            let read = |conn: &mut Conn| {
                let value: Vec<u8> = redis::cmd("GETRANGE")
                    .arg(&key)
                    .arg(0)
                    .arg(end)
                    .query(conn)?;
                Ok::<_, redis::RedisError>(crate::holder::bounded(value, 0))
            };
            let name = &run.name;
            let value = self
                .pool
                .run(&format_args!("reading lock '{name}'"), read, read)?;
            let holds = value
                .as_deref()
                .and_then(Holder::parse_with_token)
                .is_some_and(|(holder, token)| {
                    !crate::holder::is_spent(token)
                        && holder.pid == run.pid
                        && holder.host == run.host
                        && holder.acquired_at_unix_ms == run.started_at_unix_ms
                });
            if holds {
                run.ended = Ended::Running;
            }
        }
        Ok(())
    }

    /// The jobs with a recorded run, the most recently recorded first, at most `limit` of them:
    /// found by `SCAN` over the history's streams for at most `budget`, and the last entry of
    /// each, pipelined.
    pub fn jobs(&self, limit: usize, budget: Duration) -> Result<Listing<Job>> {
        let prefix = self.spec.key_prefix();
        let glob = history::stream_glob(prefix);
        let (mut jobs, scanned) = self.scan(&glob, budget, "listing the jobs", |conn, keys| {
            let mut jobs = Vec::with_capacity(keys.len());
            let mut pipe = redis::pipe();
            for key in &keys {
                pipe.cmd("XREVRANGE")
                    .arg(key)
                    .arg("+")
                    .arg("-")
                    .arg("COUNT")
                    .arg(1);
            }
            // Each reply as it is: a key of another type under the prefix is no job.
            let lasts: Vec<RedisResult<Value>> = pipe.ignore_errors().query(conn)?;
            for (key, last) in keys.iter().zip(lasts) {
                let key = String::from_utf8_lossy(key);
                let last = last.map(|v| history::entries(&v)).unwrap_or_default();
                let (Some(job), Some((id, _))) = (history::job_of_key(prefix, &key), last.first())
                else {
                    continue; // expired meanwhile, or not dibs's
                };
                jobs.push(Job {
                    name: job.to_owned(),
                    last_recorded_unix_ms: id
                        .split('-')
                        .next()
                        .and_then(|ms| ms.parse().ok())
                        .unwrap_or(0),
                });
            }
            Ok(jobs)
        })?;
        jobs.sort_by(|a, b| {
            (b.last_recorded_unix_ms, &a.name).cmp(&(a.last_recorded_unix_ms, &b.name))
        });
        jobs.dedup_by(|a, b| a.name == b.name);
        Ok(scanned.with(jobs, limit))
    }

    /// The locks of `job` that a run holds now, found within `budget`: its own name, and the
    /// names whose runs its history holds (its ticks' `job@TICK`, and the names whose job
    /// [`crate::job_of`] says it is), each with a fresh token (a lock kept after its release, or
    /// a tick's done-mark, has a spent one). The listing says whether the scan was complete. A
    /// scan of the keyspace: for operators and the starter's rules, not for the path of a lock
    /// call. Every run found is listed, however many other locks share the job's name as a
    /// prefix: the job's own are kept as the scan finds them, before any count (a listing cut
    /// at 1,000 names sorted, `sync-tenant-N` before `sync@...`, missed a hung run).
    pub fn running(&self, job: &str, budget: Duration) -> Result<Listing<HeldLock>> {
        validate_name(job)?;
        let mut pattern = history::escape_glob(job);
        pattern.push('*');
        let (found, scanned) = self.held(&pattern, budget, |lock| {
            (lock.name == job || crate::job::jobs_of_lock(&lock.name).contains(&job))
                && lock.is_running()
        })?;
        Ok(scanned.with(found, usize::MAX))
    }

    /// The locks held now whose names match the glob `pattern` (`*` for all), by `SCAN` over the
    /// key prefix for at most `budget`: at most `limit` of them, sorted by name.
    pub fn locks(
        &self,
        pattern: &str,
        limit: usize,
        budget: Duration,
    ) -> Result<Listing<HeldLock>> {
        let (found, scanned) = self.held(pattern, budget, |_| true)?;
        Ok(scanned.with(found, limit))
    }

    /// The locks held now under `pattern` that `keep` keeps, sorted by name, and how far the
    /// scan got.
    fn held(
        &self,
        pattern: &str,
        budget: Duration,
        keep: impl Fn(&HeldLock) -> bool,
    ) -> Result<(Vec<HeldLock>, Scanned)> {
        let prefix = self.spec.key_prefix();
        let mut glob = history::escape_glob(prefix);
        glob.push_str(pattern);
        let (mut found, scanned) =
            self.scan(&glob, budget, "listing the held locks", |conn, keys| {
                let keys: Vec<Vec<u8>> = keys
                    .into_iter()
                    .filter(|k| !history::is_history_key(prefix, &String::from_utf8_lossy(k)))
                    .collect();
                let mut found = Vec::with_capacity(keys.len());
                if keys.is_empty() {
                    return Ok(found);
                }
                let mut pipe = redis::pipe();
                let end = crate::holder::MAX_VALUE_BYTES as isize;
                for key in &keys {
                    pipe.getrange(key, 0, end).pttl(key);
                }
                let replies: Vec<RedisResult<Value>> = pipe.ignore_errors().query(conn)?;
                for (key, pair) in keys.iter().zip(replies.chunks_exact(2)) {
                    // A key of another type (WRONGTYPE) is not a lock.
                    let value = pair[0]
                        .as_ref()
                        .ok()
                        .and_then(|v| redis::from_redis_value::<Vec<u8>>(v.clone()).ok());
                    let pttl = pair[1]
                        .as_ref()
                        .ok()
                        .and_then(|v| redis::from_redis_value::<i64>(v.clone()).ok())
                        .unwrap_or(-1);
                    // Gone since the scan, or longer than a value of dibs's (read in part).
                    let Some(value) = value.and_then(|v| crate::holder::bounded(v, pttl)) else {
                        continue;
                    };
                    let name = String::from_utf8_lossy(&key[prefix.len()..]);
                    let lock = HeldLock::read(&name, &value, pttl);
                    if keep(&lock) {
                        found.push(lock);
                    }
                }
                Ok(found)
            })?;
        found.sort_by(|a, b| a.name.cmp(&b.name));
        Ok((found, scanned))
    }

    /// `SCAN` over `glob` on every master (this server, or each master of a Cluster, on a
    /// connection of its own), [`SCAN_BATCH`] keys a call, handing each batch of matches to
    /// `batch` on the same connection, until every keyspace is done or `budget` is spent. Each
    /// call waits at most the read timeout, so the whole takes at most `budget` and one read
    /// timeout more.
    fn scan<T>(
        &self,
        glob: &str,
        budget: Duration,
        what: &str,
        mut batch: impl FnMut(&mut Conn, Vec<Vec<u8>>) -> RedisResult<Vec<T>>,
    ) -> Result<(Vec<T>, Scanned)> {
        validate_budget(budget)?;
        let deadline = Instant::now() + budget;
        // One master's: its items, then how far it got. A retry on a fresh connection starts
        // that master afresh.
        let per_master = self.pool.each_master(&what, |conn| {
            let keys: u64 = redis::cmd("DBSIZE").query(conn)?;
            let (mut items, mut cursor, mut looked) = (Vec::new(), 0u64, 0u64);
            loop {
                if Instant::now() >= deadline {
                    let part = Scanned {
                        complete: false,
                        scanned: looked.min(keys),
                        keys,
                    };
                    return Ok((items, part));
                }
                // Keys of any bytes: a foreign key under the prefix must not fail the scan.
                let (next, found): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(glob)
                    .arg("COUNT")
                    .arg(SCAN_BATCH)
                    .query(conn)?;
                looked += SCAN_BATCH as u64;
                if !found.is_empty() {
                    items.extend(batch(conn, found)?);
                }
                cursor = next;
                if cursor == 0 {
                    let all = Scanned {
                        complete: true,
                        scanned: keys,
                        keys,
                    };
                    return Ok((items, all));
                }
            }
        })?;
        let mut all = Scanned {
            complete: true,
            scanned: 0,
            keys: 0,
        };
        let mut items = Vec::new();
        for (found, part) in per_master {
            items.extend(found);
            all.complete &= part.complete;
            all.scanned += part.scanned;
            all.keys += part.keys;
        }
        Ok((items, all))
    }

    /// An operator's forced release of lock `name`: deletes it if it holds `token` (as
    /// [`Locker::locks`] shows it), and records that in the history of its job, with `by` (who
    /// forced it) and the holder it found. Only that holder's lock is deleted: one taken since
    /// by another stays.
    pub fn force_release(&self, name: &str, token: &str, by: &str) -> Result<ForcedRelease> {
        validate_name(name)?;
        if !history::is_label(by, history::MAX_LABEL_BYTES) {
            return Err(Error::invalid(
                "by",
                format!(
                    "'by' names who forces the release, in its job's history: 1 to {} bytes \
                     without ';' or control characters",
                    history::MAX_LABEL_BYTES
                ),
            ));
        }
        if token.len() != 36 || uuid::Uuid::parse_str(token).is_err() {
            return Err(Error::invalid(
                "token",
                "the token must be the 36 characters that 'dibs locks --show-tokens' shows",
            ));
        }
        let key = self.key(name);
        let force = |conn: &mut Conn| -> RedisResult<Value> {
            script::FORCE_DELETE.run_with(conn, &[&key], 56, |cmd| {
                cmd.arg(token).arg(crate::holder::MAX_VALUE_BYTES);
            })
        };
        let found = self
            .pool
            .run(&format_args!("force-releasing lock '{name}'"), force, force)?;
        let holder = match found {
            Value::Int(0) => return Ok(ForcedRelease::Free),
            Value::Int(_) => return Ok(ForcedRelease::OtherHolder),
            value => redis::from_redis_value::<Vec<u8>>(value).ok(),
        };
        if let Some(place) = &self.history {
            // Under the job the lock's runs are recorded in, where the history knows it.
            let job = match self.history(name, 1).map(|h| h.matched) {
                Ok(Matched::Lock { job }) => job,
                _ => crate::job_of(name).to_owned(),
            };
            let value = holder.as_deref().and_then(|v| std::str::from_utf8(v).ok());
            let holder = holder.as_deref().and_then(Holder::parse);
            let (start, pid, host) = holder.as_ref().map_or((0, 0, ""), |h| {
                (h.acquired_at_unix_ms, h.pid, h.host.as_str())
            });
            let entry = format!("forced;;0;0;0;{start};{pid};{host};;{};{name}", by);
            let stream = history::stream_key(self.spec.key_prefix(), &job);
            place.write(&self.pool, name, &stream, &entry, None);
            // The forced entry stands for the holder's run: its start's entry, if it is a
            // tick's, goes (else one run would read as two, and as unended once it died).
            if let Some(value) = value {
                let forget = |conn: &mut Conn| {
                    script::FORGET_START.run_with::<i64>(
                        conn,
                        &[&stream],
                        value.len() + 64,
                        |cmd| {
                            cmd.arg(value).arg(name);
                        },
                    )
                };
                let _ = self.pool.run(
                    &format_args!("recording the forced release of '{name}'"),
                    forget,
                    forget,
                );
            }
        }
        Ok(ForcedRelease::Released)
    }
}

/// One read of a job's stream.
struct Read {
    runs: Vec<Run>,
    /// Whether it gave all the entries asked for: older ones may exist.
    full: bool,
    /// When the oldest entry read was written, a run or not.
    oldest_entry_unix_ms: Option<u64>,
    /// When the newest entry this version cannot read as a run was written.
    unreadable_unix_ms: Option<u64>,
    evicted_at_unix_ms: Option<u64>,
    job_evicted_at_unix_ms: Option<u64>,
}

impl Read {
    /// The history of the runs that `keep` keeps, at most `limit`, with what it proves.
    fn history(self, matched: Matched, limit: usize, keep: impl Fn(&Run) -> bool) -> History {
        let ttl = history::HISTORY_TTL.as_millis() as u64;
        // A stream holds every entry since it was made, unless trimmed. Before it, a forerunner
        // of the stream may have expired, which takes a gap longer than the TTL; or have been
        // evicted, at any time up to the last eviction.
        let mut since = match (self.oldest_entry_unix_ms, self.evicted_at_unix_ms) {
            (None, evicted) => crate::holder::unix_ms()
                .saturating_sub(ttl)
                .max(evicted.unwrap_or(0)),
            (Some(oldest), _) if self.full => oldest,
            (Some(oldest), Some(_)) => oldest,
            (Some(oldest), None) => oldest.saturating_sub(ttl),
        };
        // An entry dibs cannot read may be a run that succeeded: nothing before it is proven.
        if let Some(unreadable) = self.unreadable_unix_ms {
            since = since.max(unreadable.saturating_add(1));
        }
        let mut runs: Vec<Run> = self.runs.into_iter().filter(|r| keep(r)).collect();
        if runs.len() > limit {
            since = since.max(runs[limit - 1].recorded_at_unix_ms);
            runs.truncate(limit);
        }
        // A run whose outcome dibs did not see (its end never recorded, or its task's ending
        // not told) may have succeeded: what the history proves of successes starts after it.
        if let Some(unseen) = runs.iter().find(|r| r.outcome_unknown()) {
            since = since.max(unseen.recorded_at_unix_ms + 1);
        }
        History {
            matched,
            runs,
            complete_since_unix_ms: since,
            evicted_at_unix_ms: self.evicted_at_unix_ms,
            job_evicted_at_unix_ms: self.job_evicted_at_unix_ms,
        }
    }
}

/// How far a scan got.
struct Scanned {
    complete: bool,
    scanned: u64,
    keys: u64,
}

impl Scanned {
    /// The listing of `items` (in order), at most `limit` of them.
    fn with<T>(self, mut items: Vec<T>, limit: usize) -> Listing<T> {
        let limit = limit.max(1);
        let truncated = items.len() > limit;
        items.truncate(limit);
        Listing {
            items,
            complete: self.complete,
            truncated,
            scanned: self.scanned,
            keys: self.keys,
        }
    }
}
