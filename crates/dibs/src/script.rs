//! Lua scripts sent as EVALSHA, then EVAL on NOSCRIPT (after a restart or SCRIPT FLUSH): at most
//! two round trips, and the EVAL caches the script again for the next call.

use std::sync::OnceLock;

use redis::{ErrorKind, FromRedisValue, RedisResult, ServerErrorKind};

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
        let packed = redis::cmd("EVAL")
            .arg(self.source)
            .arg(1)
            .arg(key)
            .arg(value)
            .arg(ms)
            .get_packed_command();
        conn.queue(&packed)
    }

    /// The script's call for a pipeline: `EVALSHA sha 1 key` when `cached`, else `EVAL source 1
    /// key`; the caller adds the `ARGV`s.
    pub(crate) fn call(&self, cached: bool, key: &str, capacity: usize) -> redis::Cmd {
        let body = if cached { self.sha() } else { self.source };
        let mut cmd = redis::Cmd::with_capacity(7, body.len() + key.len() + capacity + 48);
        cmd.arg(if cached { "EVALSHA" } else { "EVAL" })
            .arg(body)
            .arg(1)
            .arg(key);
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
        let sha = self.sha();
        let call = |command: &str, body: &str, conn: &mut Conn| {
            // Sized up front: built arg by arg, the buffers would grow four or five times.
            redis::Cmd::with_capacity(6, body.len() + key.len() + value.len() + 48)
                .arg(command)
                .arg(body)
                .arg(1)
                .arg(key)
                .arg(value)
                .arg(ms)
                .query(conn)
        };
        match call("EVALSHA", sha, conn) {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                call("EVAL", self.source, conn)
            }
            other => other,
        }
    }
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
pub(crate) static ACQUIRE: LuaScript = LuaScript::new(
    r#"
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[3] ~= '1' or redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return false
  end
end
local now = redis.pcall('TIME')
if type(now) == 'table' and now.err == nil then
  return tonumber(now[1]) * 1000000 + tonumber(now[2])
end
return 0
"#,
);

/// Returns 1 when it kept the key for ARGV[2] ms, 2 when it deleted the key, 0 when the key
/// holds someone else's value, 3 when there is no key. The whole holder value is compared, not a
/// prefix.
///
/// A key kept for the rest of atLeast gets its token spent: the token's version digit (always 4
/// in a fresh v4 token) becomes 0. An EXTEND or release still on its way with the old value then
/// finds nothing of ours (a late EXTEND would set the expiry back to the full atMost), no fresh
/// token can ever equal it, and the value still reads as a holder for `inspect`. A retry of the
/// release, after a first try whose reply was lost, finds the spent value and returns 1 again.
pub(crate) static RELEASE: LuaScript = LuaScript::new(
    r#"
local current = redis.call('GET', KEYS[1])
if current == false then
  return 3
end
local spent = string.sub(ARGV[1], 1, 14) .. '0' .. string.sub(ARGV[1], 16)
if current == spent then
  return 1
end
if current ~= ARGV[1] then
  return 0
end
local remaining = tonumber(ARGV[2])
if remaining > 0 then
  redis.call('SET', KEYS[1], spent, 'PX', remaining)
  return 1
end
redis.call('DEL', KEYS[1])
return 2
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
