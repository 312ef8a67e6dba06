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
}

/// The acquire's Lua (see [`ACQUIRE`]), for it and for [`CATCH_UP_ACQUIRE`].
macro_rules! acquire_lua {
    () => {
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
pub(crate) static ACQUIRE: LuaScript = LuaScript::new(acquire_lua!());

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

/// The acquire of a tick that catch-up found missed (see `lock::catch_up`): first whether the
/// tick ran, then [`ACQUIRE`] if it did not, in one script, so that no other instance can run
/// the tick between the look and the `SET`. `KEYS[2]` the job's stream, `KEYS[3]` the history's
/// eviction mark; `ARGV[4]` the tick lock's name, `ARGV[5]` the tick's due time (Unix ms),
/// `ARGV[6]` 1 to look only. Returns false when the lock is there (running, or its done-mark),
/// -2 when the history has a run of it, -3 when the history cannot prove that it has not (its
/// stream trimmed past the tick, or dropped), -4 when looking only and the tick was missed, -5
/// when looking only and the job has no recorded run from before the tick was due (a new job,
/// or a tick that predates its first run: not one it missed); else as [`ACQUIRE`]. The
/// history's entries are looked at whole: about `HISTORY_LENGTH`.
///
/// A stream's absence proves that the tick did not run when it reaches back before the tick
/// (its oldest entry older than the due time less `CLOCK_SKEW_MS`, for instances whose clock
/// runs ahead of the server's), or when it was never trimmed (`XADD MAXLEN ~` trims only down
/// to at least its length) nor dropped (the eviction mark absent). A stream expires only 40
/// days after its last entry, and catch-up looks back at most 30.
pub(crate) static CATCH_UP_ACQUIRE: LuaScript = LuaScript::new(concat!(
    "local LENGTH = ",
    history_length!(),
    "\nlocal SKEW = ",
    clock_skew_ms!(),
    r#"
if not (ARGV[3] == '1' and redis.call('GET', KEYS[1]) == ARGV[1]) then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    if ARGV[6] == '1' then
      return -2
    end
    return false
  end
  local entries = redis.pcall('XREVRANGE', KEYS[2], '+', '-')
  if type(entries) ~= 'table' or entries.err then
    return -3
  end
  local tail = ';' .. ARGV[4]
  for _, entry in ipairs(entries) do
    local run = entry[2][2]
    if run and string.sub(run, -#tail) == tail then
      return -2
    end
  end
  local oldest = entries[#entries]
  local reaches = oldest and tonumber(string.match(oldest[1], '^%d+')) < tonumber(ARGV[5]) - SKEW
  if not reaches and (#entries >= LENGTH or redis.call('EXISTS', KEYS[3]) == 1) then
    return -3
  end
  if ARGV[6] == '1' then
    if oldest == nil or tonumber(string.match(oldest[1], '^%d+')) > tonumber(ARGV[5]) then
      return -5
    end
    return -4
  end
end
"#,
    acquire_lua!()
));

/// The jobs that keep a history under one key prefix: `history::HISTORY_JOBS`, and the
/// history's Lua `CAP`.
macro_rules! history_jobs {
    () => {
        1000
    };
}
pub(crate) use history_jobs;

/// The history's Lua, for the scripts that record a run (see `history`):
/// - `append` adds an entry to a job's stream (refreshing its TTL) and, when that made the
///   stream, admits the job to the index of jobs; beyond `CAP` jobs it drops the stream of the
///   job recorded least recently and marks the eviction. The index's scores say when each job
///   was last seen there (its stream's creation, or an earlier look), so an old score is checked
///   against the stream's newest entry and put right before anything is dropped; 8 looks at
///   most per call. A stream that exists costs nothing more than its `XADD` (`NOMKSTREAM`
///   finds it), so releases of known jobs never touch the index.
/// - `recorded` finds a run's entry among a stream's latest by its record without the ending,
///   and says which ending it has.
///
/// Every history command is a `pcall`: a server or ACL that refuses one never fails the
/// release; `append` then answers false.
macro_rules! history_lua {
    () => {
        concat!(
            "local CAP = ",
            history_jobs!(),
            r#"
local function admit(stream, index, evicted, ms, ttl)
  if type(redis.pcall('ZADD', index, ms, string.sub(stream, #index + 2))) ~= 'number' then
    return false
  end
  redis.pcall('PEXPIRE', index, ttl)
  local over = redis.pcall('ZCARD', index)
  if type(over) ~= 'number' then
    return false
  end
  over = over - CAP
  local looks = 0
  while over > 0 and looks < 8 do
    looks = looks + 1
    local oldest = redis.pcall('ZRANGE', index, 0, 0, 'WITHSCORES')
    if type(oldest) ~= 'table' or oldest[2] == nil then
      return false
    end
    local key = index .. ':' .. oldest[1]
    local last = redis.pcall('XREVRANGE', key, '+', '-', 'COUNT', 1)
    local seen = nil
    if type(last) == 'table' and last[1] then
      seen = tonumber(string.match(last[1][1], '^%d+'))
    end
    if seen and seen > tonumber(oldest[2]) then
      redis.pcall('ZADD', index, seen, oldest[1])
    else
      redis.pcall('ZREM', index, oldest[1])
      if seen then
        redis.pcall('DEL', key)
        redis.pcall('SET', evicted, ms, 'PX', ttl)
      end
      over = over - 1
    end
  end
  return true
end
local function append(stream, index, evicted, maxlen, ttl, entry)
  local id = redis.pcall('XADD', stream, 'NOMKSTREAM', 'MAXLEN', '~', maxlen, '*', 'run', entry)
  local new = id == false
  if new then
    id = redis.pcall('XADD', stream, 'MAXLEN', '~', maxlen, '*', 'run', entry)
  end
  if type(id) ~= 'string' then
    return false
  end
  redis.pcall('PEXPIRE', stream, ttl)
  if new then
    return admit(stream, index, evicted, tonumber(string.match(id, '^%d+')), ttl)
  end
  return true
end
local function recorded(stream, tail)
  local entries = redis.pcall('XREVRANGE', stream, '+', '-', 'COUNT', 16)
  if type(entries) ~= 'table' or entries.err then
    return nil
  end
  for _, entry in ipairs(entries) do
    local run = entry[2][2]
    local at = string.find(run, ';', 1, true)
    if at and string.sub(run, at + 1) == tail then
      return string.sub(run, 1, at - 1)
    end
  end
  return nil
end
"#
        )
    };
}

/// The release. Returns 0 when the key is gone or holds someone else's value (touching
/// nothing), 1 when it kept the key for ARGV[2] ms, 2 when it deleted it, 3 when a retry cannot
/// prove what became of it. The whole holder value is compared, not a prefix.
///
/// A key kept for the rest of atLeast gets its token spent: the token's version digit (always 4
/// in a fresh v4 token) becomes 0. An EXTEND or release still on its way with the old value then
/// finds nothing of ours (a late EXTEND would set the expiry back to the full atMost), no fresh
/// token can ever equal it, and the value still reads as a holder for `inspect`. A retry of the
/// release, after a first try whose reply was lost, finds the spent value and returns 1 again.
///
/// `ARGV[3]` is 1 on such a retry, `ARGV[4]` 1 when keep-alive saw the lock taken. A retry that
/// finds the key gone or another holder's cannot tell by itself whether its first try released
/// it (then another instance may have taken it since) or the lock had lapsed: the first try's
/// entry in the history tells (`released`, `kept`, or what else it found); without one (the
/// history off, or on a Cluster, whose entry follows the reply) it is unproven, 3.
///
/// With the run history (four `KEYS`: the lock, the job's stream, the index of jobs, the
/// eviction's mark; see `history`), the same script records the run: one stream entry saying
/// how it ended, written with the `DEL` or `SET` it describes, so it costs no round trip and
/// cannot disagree with what the release did. Then `ARGV[5]` is the stream's length, `ARGV[6]`
/// its TTL in ms, and `ARGV[7]` the run's record without its ending (`history::record`): the
/// entry is one field, `run`, the ending then `;` then that. One field, not one per fact: every
/// argument and field costs the server (the record as 9 fields cost it 2 µs more per release).
/// A history the server refuses adds 16 to the code.
pub(crate) static RELEASE: LuaScript = LuaScript::new(concat!(
    history_lua!(),
    r#"
local history = #KEYS == 4
local refused = 0
local function record(ended)
  if not history then
    return
  end
  if ARGV[4] == '1' then
    ended = 'lost'
  end
  if not append(KEYS[2], KEYS[3], KEYS[4], ARGV[5], ARGV[6], ended .. ';' .. ARGV[7]) then
    refused = 16
  end
end
local current = redis.call('GET', KEYS[1])
local spent = string.sub(ARGV[1], 1, 14) .. '0' .. string.sub(ARGV[1], 16)
if current == spent then
  return 1
end
if current ~= ARGV[1] then
  if ARGV[3] == '1' then
    if history then
      local ended = recorded(KEYS[2], ARGV[7])
      if ended == 'released' then
        return 2
      elseif ended == 'kept' then
        return 1
      elseif ended then
        return 0
      end
    end
    record('unproven')
    return 3 + refused
  end
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
"#
));

/// A run's entry written apart from its release, where the stream is in another slot than the
/// lock (a Cluster) and for an operator's forced release: `KEYS` the job's stream, the index of
/// jobs, the eviction's mark; `ARGV[1]` the whole entry, `ARGV[2]` and `ARGV[3]` the stream's
/// length and TTL (ms), `ARGV[4]` 1 on a retry, which writes nothing when its first try's entry
/// is there already. Returns 1 when the entry is there, 0 when the server refused it.
pub(crate) static RECORD: LuaScript = LuaScript::new(concat!(
    history_lua!(),
    r#"
if ARGV[4] == '1' then
  local at = string.find(ARGV[1], ';', 1, true)
  if at and recorded(KEYS[1], string.sub(ARGV[1], at + 1)) then
    return 1
  end
end
if append(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[1]) then
  return 1
end
return 0
"#
));

/// An operator's forced release (`dibs release`): deletes the lock if its value's token is
/// `ARGV[1]` (fresh or spent, as `dibs locks` shows it). Returns the value it deleted (who held
/// it, for the history's entry), 0 when there is no lock, -1 when it holds another token.
pub(crate) static FORCE_DELETE: LuaScript = LuaScript::new(
    r#"
local current = redis.call('GET', KEYS[1])
if current == false then
  return 0
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
