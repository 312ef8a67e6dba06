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
///
/// With the run history (two `KEYS`, see `history`), the same script records the run: one
/// stream entry saying how it ended, written with the `DEL` or `SET` it describes, so it costs
/// no round trip and cannot disagree with what the release did. Then `ARGV[3]` is 1 on a retry,
/// `ARGV[4]` 1 when keep-alive saw the lock taken, `ARGV[5]` the stream's length, `ARGV[6]` its
/// TTL in ms, and `ARGV[7]` the run's record without its ending (`history::Record`): the entry
/// is one field, `run`, the ending then `;` then that. One field, not one per fact: every
/// argument and field costs the server (the record as 9 fields cost it 2 µs more per release).
/// A retry that finds no key looks for its first try's entry: one that says `released` proves
/// the first try deleted the key while it was ours (2); any other is that try's finding (0);
/// none is unproven (3). The history is written with `pcall`: a server or ACL that refuses it
/// never fails the release; 16 is then added to the code.
pub(crate) static RELEASE: LuaScript = LuaScript::new(
    r#"
local history = #KEYS == 2
local refused = 0
local function record(ended)
  if not history then
    return
  end
  if ARGV[4] == '1' then
    ended = 'lost'
  end
  local id = redis.pcall('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'run', ended .. ';' .. ARGV[7])
  if type(id) ~= 'string' then
    refused = 16
    return
  end
  redis.pcall('PEXPIRE', KEYS[2], ARGV[6])
end
local function recorded()
  local entries = redis.pcall('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 16)
  if type(entries) ~= 'table' or entries.err then
    return nil
  end
  for _, entry in ipairs(entries) do
    local run = entry[2][2]
    local at = string.find(run, ';', 1, true)
    if at and string.sub(run, at + 1) == ARGV[7] then
      return string.sub(run, 1, at - 1)
    end
  end
  return nil
end
local current = redis.call('GET', KEYS[1])
if current == false then
  if history and ARGV[3] == '1' then
    local ended = recorded()
    if ended == 'released' then
      return 2
    elseif ended then
      return 0
    end
    record('unproven')
    return 3 + refused
  end
  record('no-longer-ours')
  return 3 + refused
end
local spent = string.sub(ARGV[1], 1, 14) .. '0' .. string.sub(ARGV[1], 16)
if current == spent then
  return 1
end
if current ~= ARGV[1] then
  record('no-longer-ours')
  return 0 + refused
end
local remaining = tonumber(ARGV[2])
if remaining > 0 then
  redis.call('SET', KEYS[1], spent, 'PX', remaining)
  record('kept')
  return 1 + refused
end
redis.call('DEL', KEYS[1])
record('released')
return 2 + refused
"#,
);

/// An operator's forced release (`dibs release`): deletes the lock if its value's token is
/// `ARGV[1]` (fresh or spent, as `dibs locks` shows it), and records it in the history as
/// `forced`, with the holder it found. `KEYS`: the lock, the job's stream; `ARGV[2]`, `ARGV[3]`:
/// the stream's length and TTL (ms); `ARGV[4]` and `ARGV[5]`: the record's fields around the
/// holder's (`history::Record`). Returns 1 when it deleted the lock, 0 when there is no lock,
/// -1 when the lock holds another token.
pub(crate) static FORCE_RELEASE: LuaScript = LuaScript::new(
    r#"
local current = redis.call('GET', KEYS[1])
if current == false then
  return 0
end
if string.sub(current, 1, 36) ~= ARGV[1] then
  return -1
end
redis.call('DEL', KEYS[1])
local host, pid, start = string.match(current, '^[^;]*;([^;]*);([^;]*);([^;]*)$')
local run = ARGV[4] .. (start or '0') .. ';' .. (pid or '0') .. ';' .. (host or '') .. ';' .. ARGV[5]
if type(redis.pcall('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'run', run)) == 'string' then
  redis.pcall('PEXPIRE', KEYS[2], ARGV[3])
end
return 1
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
