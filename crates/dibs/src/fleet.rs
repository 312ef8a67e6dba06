//! The fleet operations: what an operator asks of all instances at once (each job's history,
//! the jobs, the held locks, a forced release), read from Redis, never from one instance.

use redis::RedisResult;

use crate::conn::Conn;
use crate::connspec::Address;
use crate::error::{Error, Result};
use crate::history::{self, HeldLock, Job, Run};
use crate::script;

use crate::lock::{validate_name, Locker};

impl Locker {
    /// The last `limit` recorded runs of `job` (see [`crate::job_of`]), the newest first. One
    /// round trip; empty when none is recorded.
    pub fn history(&self, job: &str, limit: usize) -> Result<Vec<Run>> {
        validate_name(job)?;
        self.history_on()?;
        let key = history::history_key(self.spec.key_prefix(), job);
        let read = |conn: &mut Conn| -> RedisResult<Vec<(String, Vec<String>)>> {
            redis::cmd("XREVRANGE")
                .arg(&key)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(limit.max(1))
                .query(conn)
        };
        let entries = self.pool.run(
            &format_args!("reading the history of job '{job}'"),
            read,
            read,
        )?;
        Ok(entries
            .iter()
            .filter_map(|(id, fields)| Run::parse(id, fields))
            .collect())
    }

    /// The jobs with a recorded run, the most recently recorded first, at most `limit` of them:
    /// found by `SCAN` over the history's streams (at most [`SCAN_BUDGET`] keys looked at), and
    /// the last entry of each, pipelined.
    pub fn jobs(&self, limit: usize) -> Result<Vec<Job>> {
        self.history_on()?;
        let prefix = self.spec.key_prefix();
        let glob = history::history_glob(prefix);
        let read = |conn: &mut Conn| -> RedisResult<Vec<Job>> {
            let mut jobs = Vec::new();
            scan(conn, &glob, |conn, keys| {
                if !keys.is_empty() {
                    let mut pipe = redis::pipe();
                    for key in &keys {
                        pipe.cmd("XREVRANGE")
                            .arg(key)
                            .arg("+")
                            .arg("-")
                            .arg("COUNT")
                            .arg(1);
                    }
                    let lasts: Vec<Vec<(String, Vec<String>)>> = pipe.query(conn)?;
                    for (key, last) in keys.iter().zip(lasts) {
                        let (Some(job), Some((id, _))) =
                            (history::job_of_key(prefix, key), last.first())
                        else {
                            continue; // expired meanwhile
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
                }
                Ok(true)
            })?;
            jobs.sort_by(|a, b| {
                (b.last_recorded_unix_ms, &a.name).cmp(&(a.last_recorded_unix_ms, &b.name))
            });
            jobs.dedup_by(|a, b| a.name == b.name);
            jobs.truncate(limit.max(1));
            Ok(jobs)
        };
        self.pool
            .run(&format_args!("listing the jobs with a history"), read, read)
    }

    fn history_on(&self) -> Result<()> {
        self.not_on_cluster("a Redis Cluster keeps no run history (a script touches one slot only)")
    }

    fn not_on_cluster(&self, why: &'static str) -> Result<()> {
        if matches!(self.spec.address(), Address::Cluster { .. }) {
            return Err(Error::invalid("conn", why));
        }
        Ok(())
    }

    /// The locks held now whose names match the glob `pattern` (`*` for all), by `SCAN` over the
    /// key prefix: at most `limit` of them, and at most [`SCAN_BUDGET`] keys looked at, so that
    /// a big keyspace costs a bounded time. Sorted by name. Not on a Cluster.
    pub fn locks(&self, pattern: &str, limit: usize) -> Result<Vec<HeldLock>> {
        self.not_on_cluster("listing the locks of a Redis Cluster is not supported yet (SCAN is per node); inspect a lock by its name")?;
        let prefix = self.spec.key_prefix();
        let mut glob = history::escape_glob(prefix);
        glob.push_str(pattern);
        let list = |conn: &mut Conn| -> RedisResult<Vec<HeldLock>> {
            let mut found = Vec::new();
            scan(conn, &glob, |conn, keys| {
                let keys: Vec<String> = keys
                    .into_iter()
                    .filter(|k| !history::is_history_key(prefix, k))
                    .collect();
                if !keys.is_empty() {
                    let mut pipe = redis::pipe();
                    for key in &keys {
                        pipe.get(key).pttl(key);
                    }
                    let replies: Vec<RedisResult<redis::Value>> =
                        pipe.ignore_errors().query(conn)?;
                    for (key, pair) in keys.iter().zip(replies.chunks_exact(2)) {
                        // A key of another type (WRONGTYPE) is not a lock.
                        let value = pair[0].as_ref().ok().and_then(|v| {
                            redis::from_redis_value::<Option<String>>(v.clone()).ok()
                        });
                        let Some(Some(value)) = value else {
                            continue;
                        };
                        let pttl = pair[1]
                            .as_ref()
                            .ok()
                            .and_then(|v| redis::from_redis_value::<i64>(v.clone()).ok())
                            .unwrap_or(-1);
                        found.push(HeldLock::read(&key[prefix.len()..], &value, pttl));
                    }
                }
                Ok(found.len() < limit)
            })?;
            found.sort_by(|a, b| a.name.cmp(&b.name));
            found.truncate(limit);
            Ok(found)
        };
        self.pool
            .run(&format_args!("listing the held locks"), list, list)
    }

    /// An operator's forced release of lock `name`: deletes it if it holds `token` (as
    /// [`Locker::locks`] shows it), and records that in the job's history, with `by` (who
    /// forced it). Only that holder's lock is deleted: one taken since by another stays.
    pub fn force_release(&self, name: &str, token: &str, by: &str) -> Result<ForcedRelease> {
        validate_name(name)?;
        if token.len() != 36 || uuid::Uuid::parse_str(token).is_err() {
            return Err(Error::invalid(
                "token",
                "the token must be the 36 characters that 'dibs locks --show-tokens' shows",
            ));
        }
        let key = self.key(name);
        let stream = history::history_key(self.spec.key_prefix(), crate::job_of(name));
        let keys = [key.as_str(), stream.as_str()];
        // The record's fields around the holder's start, pid and host (`history::record`).
        let (before, after) = ("forced;;0;0;0;", format!(";{};{name}", history::field(by)));
        let force = |conn: &mut Conn| -> RedisResult<i64> {
            script::FORCE_RELEASE.run_with(conn, &keys, after.len() + 96, |cmd| {
                cmd.arg(token)
                    .arg(history::HISTORY_LENGTH)
                    .arg(history::HISTORY_TTL.as_millis() as u64)
                    .arg(before)
                    .arg(&after);
            })
        };
        let found = self
            .pool
            .run(&format_args!("force-releasing lock '{name}'"), force, force)?;
        Ok(match found {
            1 => ForcedRelease::Released,
            0 => ForcedRelease::Free,
            _ => ForcedRelease::OtherHolder,
        })
    }
}

/// `SCAN` over `glob`, [`SCAN_BATCH`] keys a call, handing each batch to `batch` until the
/// keyspace is done, [`SCAN_BUDGET`] keys were looked at, or `batch` says stop (false).
fn scan(
    conn: &mut Conn,
    glob: &str,
    mut batch: impl FnMut(&mut Conn, Vec<String>) -> RedisResult<bool>,
) -> RedisResult<()> {
    let (mut cursor, mut seen) = (0u64, 0usize);
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(glob)
            .arg("COUNT")
            .arg(SCAN_BATCH)
            .query(conn)?;
        seen += SCAN_BATCH;
        cursor = next;
        if !batch(conn, keys)? || cursor == 0 || seen >= SCAN_BUDGET {
            return Ok(());
        }
    }
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

/// Keys asked of each `SCAN` of [`Locker::locks`].
const SCAN_BATCH: usize = 1000;

/// Keys [`Locker::locks`] looks at, at most: 100 `SCAN`s.
pub const SCAN_BUDGET: usize = 100 * SCAN_BATCH;
