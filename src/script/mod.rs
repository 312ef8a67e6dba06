//! Lua scripts sent as EVALSHA, then EVAL on NOSCRIPT (after a restart or SCRIPT FLUSH): at most
//! two round trips, and the EVAL caches the script again for the next call.

use std::sync::OnceLock;

use redis::{ErrorKind, FromRedisValue, RedisResult, ServerErrorKind, Value};

use crate::conn::Conn;

pub(crate) struct LuaScript {
    source: &'static str,
    sha: OnceLock<String>,
}

impl LuaScript {
    pub(crate) const fn new(source: &'static str) -> LuaScript {
        LuaScript {
            source,
            sha: OnceLock::new(),
        }
    }

    /// Sends the script (as EVAL, which needs no cached copy) with the same arguments as
    /// [`LuaScript::run`], without waiting for its reply: see [`Conn::queue`]. False when the
    /// connection cannot queue (Cluster).
    pub(crate) fn queue(&self, conn: &mut Conn, key: &str, value: &str, ms: u64) -> bool {
        self.queue_with(conn, &[key], &[value, &ms.to_string()])
    }

    /// [`LuaScript::queue`] with these `KEYS` and `ARGV`s.
    pub(crate) fn queue_with(&self, conn: &mut Conn, keys: &[&str], args: &[&str]) -> bool {
        let packed = redis::cmd("EVAL")
            .arg(self.source)
            .arg(keys.len())
            .arg(keys)
            .arg(args)
            .get_packed_command();
        conn.queue(&packed)
    }

    /// The script's call for a pipeline: `EVALSHA sha N keys...` when `cached`, else `EVAL
    /// source N keys...`; the caller adds the `ARGV`s.
    pub(crate) fn call(&self, cached: bool, keys: &[&str], capacity: usize) -> redis::Cmd {
        let body = if cached { self.sha() } else { self.source };
        let key_bytes: usize = keys.iter().map(|k| k.len() + 16).sum();
        let mut cmd =
            redis::Cmd::with_capacity(6 + keys.len(), body.len() + key_bytes + capacity + 48);
        cmd.arg(if cached { "EVALSHA" } else { "EVAL" })
            .arg(body)
            .arg(keys.len())
            .arg(keys);
        cmd
    }

    fn sha(&self) -> &str {
        self.sha
            .get_or_init(|| redis::Script::new(self.source).get_hash().to_owned())
    }

    /// Runs the script with `KEYS[1] = key`, `ARGV[1] = value`, `ARGV[2] = ms`.
    pub(crate) fn run<T: FromRedisValue>(
        &self,
        conn: &mut Conn,
        key: &str,
        value: &str,
        ms: u64,
    ) -> RedisResult<T> {
        self.run_with(conn, &[key], value.len() + 24, |cmd| {
            cmd.arg(value).arg(ms);
        })
    }

    /// Runs the script with these `KEYS`, and the `ARGV`s that `args` adds (about `capacity`
    /// bytes of them).
    pub(crate) fn run_with<T: FromRedisValue>(
        &self,
        conn: &mut Conn,
        keys: &[&str],
        capacity: usize,
        args: impl Fn(&mut redis::Cmd),
    ) -> RedisResult<T> {
        let call = |command: &str, body: &str, conn: &mut Conn| {
            // Sized up front: built arg by arg, the buffers would grow four or five times.
            let key_bytes: usize = keys.iter().map(|k| k.len() + 16).sum();
            let mut cmd = redis::Cmd::with_capacity(
                4 + keys.len() + 16,
                body.len() + key_bytes + capacity + 48,
            );
            cmd.arg(command).arg(body).arg(keys.len()).arg(keys);
            args(&mut cmd);
            cmd.query(conn)
        };
        match call("EVALSHA", self.sha(), conn) {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                call("EVAL", self.source, conn)
            }
            other => other,
        }
    }

    /// [`LuaScript::run_with`], then `after` on the same connection, pipelined: the script's
    /// reply and `after`'s. On a Cluster the pipeline goes to the node of the script's first key,
    /// where a keyless command sent alone (`WAIT`) would go to every master.
    pub(crate) fn run_then(
        &self,
        conn: &mut Conn,
        keys: &[&str],
        capacity: usize,
        args: impl Fn(&mut redis::Cmd),
        after: &redis::Cmd,
    ) -> RedisResult<(Value, RedisResult<Value>)> {
        for cached in [true, false] {
            let mut cmd = self.call(cached, keys, capacity);
            args(&mut cmd);
            let mut pipe = redis::pipe();
            pipe.add_command(cmd).add_command(after.clone());
            let mut replies: Vec<RedisResult<Value>> = match pipe.ignore_errors().query(conn) {
                // A cluster connection folds a reply's error into the whole pipeline's.
                Err(e) if cached && e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                    continue
                }
                replies => replies?,
            };
            let after = replies.pop().unwrap_or(Ok(Value::Nil));
            match replies.pop().unwrap_or(Ok(Value::Nil)) {
                Err(e) if cached && e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                    continue
                }
                reply => return Ok((reply?, after)),
            }
        }
        unreachable!("EVAL never answers NOSCRIPT")
    }
}

/// The acquire's `SET` (see [`ACQUIRE`]): it returns false where the lock is taken, so that a
/// script that goes on after it (a tick's) does the rest only for a lock it won.
macro_rules! set_lua {
    () => {
        r#"
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[3] ~= '1' or redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return false
  end
  -- Our first try's SET landed, its reply lost: a write on this connection (the same expiry
  -- again), so that durable acquire's WAIT waits for that SET too (Redis 7.2+ counts only a
  -- connection's own writes).
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
end"#
    };
}

/// The fencing token's minting, once the `SET` won (see [`ACQUIRE`]): returns it.
macro_rules! mint_lua {
    () => {
        r#"
local now = redis.pcall('TIME')
if type(now) == 'table' and now.err == nil then
  return tonumber(now[1]) * 1000000 + tonumber(now[2])
end
return 0
"#
    };
}

/// The acquire: `SET KEYS[1] ARGV[1] NX PX ARGV[2]`, and the fencing token minted with it: the
/// server's `TIME` in microseconds, read once the `SET` won, in the same script: no other command
/// runs between the two, and both run on the key's own server (a pipelined `TIME` could be
/// interleaved with an outsider's `DEL` and the next holder's acquire, or sent by a proxy to
/// another server). Returns the token when the lock was won, nil when not. With `ARGV[3]` = 1 (a
/// retry after a lost reply) a key that already holds our value is won too. A script costs the
/// server about 2 µs more than a bare `SET` (`benches/core_cycle.rs`); that is fencing's price.
///
/// The token of a lock is greater than that of every earlier holder of its key: the earlier
/// holder's key was gone (released after its reply, or expired after atMost) before this `SET`
/// could succeed, and the server's clock moved on meanwhile. So it needs no key of its own
/// (a counter per name would live for ever). It holds while the clock of whichever server runs
/// the `SET` does not step back past an earlier token: a clock set back, or a failover to a
/// server whose clock is behind by more than the time since the last acquisition. Where the
/// ACL refuses `TIME`, the token is 0 (no guarded write accepts it).
pub(crate) static ACQUIRE: LuaScript = LuaScript::new(concat!(set_lua!(), mint_lua!()));

/// Entries kept per job's stream: `history::HISTORY_LENGTH`, and [`CATCH_UP_ACQUIRE`]'s `LENGTH`.
macro_rules! history_length {
    () => {
        100
    };
}
pub(crate) use history_length;

/// How far ahead of the server's an instance's clock may run, in ms: `lock::CLOCK_SKEW`, and
/// [`CATCH_UP_ACQUIRE`]'s `SKEW`.
macro_rules! clock_skew_ms {
    () => {
        60000
    };
}
pub(crate) use clock_skew_ms;

/// The jobs that keep a history under one key prefix: `history::HISTORY_JOBS`, and the
/// history's Lua `CAP`.
macro_rules! history_jobs {
    () => {
        1000
    };
}
pub(crate) use history_jobs;

/// An operator's forced release (`dibs release`): deletes the lock if its value's token is
/// `ARGV[1]` (fresh or spent, as `dibs locks` shows it). Returns the value it deleted (who held
/// it, for the history's entry; its first `ARGV[2]` + 1 bytes, never a foreign value whole), 0
/// when there is no lock, -1 when it holds another token.
pub(crate) static FORCE_DELETE: LuaScript = LuaScript::new(
    r#"
local current = redis.call('GETRANGE', KEYS[1], 0, ARGV[2])
if current == '' then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return 0
  end
  return -1
end
if string.sub(current, 1, 36) ~= ARGV[1] then
  return -1
end
redis.call('DEL', KEYS[1])
return current
"#,
);

/// Keep-alive: sets the expiry to ARGV[2] ms if the key is still ours (returns 1), else 0.
pub(crate) static EXTEND: LuaScript = LuaScript::new(
    r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"#,
);

mod history;
mod tick;

pub(crate) use history::{RECORD, RELEASE};
pub(crate) use tick::{CATCH_UP_ACQUIRE, CLAIM, FORGET_START, TICK_ACQUIRE, UNSTART};
