//! The scripts that record a run in its job's history (see `crate::history`): the release,
//! which records its own run, and the record written apart from it.

use super::LuaScript;

/// The history's Lua, for the scripts that record a run (see `history`):
/// - `append` adds an entry to a job's stream (refreshing its TTL) and, when that made the
///   stream, admits the job to the index of jobs (and, for a job of its own name, not a tick's,
///   and not dropped before, to the index's jobs of one run: a job that comes back after its
///   runs were dropped recurs); it returns the entry's id (false when the server refused the
///   `XADD`), whether all went well (false too where `XLEN`, `ZSCORE` or `ZREMRANGEBYRANK` was
///   refused: then no eviction is remembered, so that nothing grows), and whether it dropped
///   another job's stream. Beyond `CAP` jobs it drops the stream of the job of one run recorded
///   least recently, or with none left, of the job recorded least recently, and marks the
///   eviction with the job's name (the last `CAP` such names kept). A job of one run found with more runs leaves that index (up to 32 a call); the
///   scores say when each job was last seen there (its stream's creation, or an earlier look),
///   so an old score is checked against the stream's newest entry and put right before
///   anything is dropped; 8 such looks at most per call. A stream that exists costs nothing
///   more than its `XADD` (`NOMKSTREAM` finds it), so releases of known jobs never touch the
///   index.
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
local function name_of(entry)
  local at = 0
  for _ = 1, 10 do
    at = string.find(entry, ';', at + 1, true)
    if not at then
      return nil
    end
  end
  return string.sub(entry, at + 1)
end
local function refused(reply)
  return type(reply) == 'table' and reply.err ~= nil
end
local function evict(index, once, evicted, job, key, ms, ttl)
  redis.pcall('ZREM', index, job)
  redis.pcall('ZREM', once, job)
  redis.pcall('DEL', key)
  redis.pcall('SET', evicted, ms, 'PX', ttl)
  local jobs = evicted .. '-jobs'
  redis.pcall('ZADD', jobs, ms, job)
  local trimmed = redis.pcall('ZREMRANGEBYRANK', jobs, 0, -(CAP + 1))
  redis.pcall('PEXPIRE', jobs, ttl)
  if type(trimmed) ~= 'number' then
    redis.pcall('ZREM', jobs, job)
    return false
  end
  return true
end
local function admit(stream, index, evicted, ms, ttl, entry)
  local job = string.sub(stream, #index + 2)
  if type(redis.pcall('ZADD', index, ms, job)) ~= 'number' then
    return false, false
  end
  redis.pcall('PEXPIRE', index, ttl)
  local once = index .. '\31once'
  local ok = true
  if name_of(entry) == job then
    local back = redis.pcall('ZSCORE', evicted .. '-jobs', job)
    ok = not refused(back)
    if not back or not ok then
      redis.pcall('ZADD', once, ms, job)
      redis.pcall('PEXPIRE', once, ttl)
    end
  end
  local over = redis.pcall('ZCARD', index)
  if type(over) ~= 'number' then
    return false, false
  end
  over = over - CAP
  local looks = 0
  local promoted = 0
  local dropped = false
  while over > 0 and looks < 8 and promoted < 32 do
    local from = once
    local oldest = redis.pcall('ZRANGE', once, 0, 0, 'WITHSCORES')
    if type(oldest) ~= 'table' or oldest[2] == nil then
      from = index
      oldest = redis.pcall('ZRANGE', index, 0, 0, 'WITHSCORES')
    end
    if type(oldest) ~= 'table' or oldest[2] == nil then
      return false, dropped
    end
    local key = index .. ':' .. oldest[1]
    local runs = redis.pcall('XLEN', key)
    ok = ok and not refused(runs)
    local last = redis.pcall('XREVRANGE', key, '+', '-', 'COUNT', 1)
    local seen = nil
    if type(last) == 'table' and last[1] then
      seen = tonumber(string.match(last[1][1], '^%d+'))
    end
    if from == once and type(runs) == 'number' and runs > 1 then
      promoted = promoted + 1
      redis.pcall('ZREM', once, oldest[1])
      if seen and seen > tonumber(oldest[2]) then
        redis.pcall('ZADD', index, seen, oldest[1])
      end
    elseif seen and seen > tonumber(oldest[2]) then
      looks = looks + 1
      redis.pcall('ZADD', from, seen, oldest[1])
      if from == once then
        redis.pcall('ZADD', index, seen, oldest[1])
      end
    else
      looks = looks + 1
      if seen then
        ok = evict(index, once, evicted, oldest[1], key, ms, ttl) and ok
        dropped = true
      else
        redis.pcall('ZREM', index, oldest[1])
        redis.pcall('ZREM', once, oldest[1])
      end
      over = over - 1
    end
  end
  return ok, dropped
end
local function append(stream, index, evicted, maxlen, ttl, entry)
  local id = redis.pcall('XADD', stream, 'NOMKSTREAM', 'MAXLEN', '~', maxlen, '*', 'run', entry)
  local new = id == false
  if new then
    id = redis.pcall('XADD', stream, 'MAXLEN', '~', maxlen, '*', 'run', entry)
  end
  if type(id) ~= 'string' then
    return false, false, false
  end
  redis.pcall('PEXPIRE', stream, ttl)
  if new then
    local ok, dropped = admit(stream, index, evicted, tonumber(string.match(id, '^%d+')), ttl, entry)
    return id, ok, dropped
  end
  return id, true, false
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
pub(super) use history_lua;

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
/// A history the server refuses (in part) adds 16 to the code, and 32 when its new stream
/// dropped another job's history. A tick's run has an entry of its start
/// (`tick::TICK_ACQUIRE`): `ARGV[8]`, its id, is deleted with the ending's entry written, so a
/// run has one entry once it ended, and an entry of its start alone only while it runs, or
/// where its end was never recorded.
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
  if ARGV[8] and ARGV[8] ~= '' then
    redis.pcall('XDEL', KEYS[2], ARGV[8])
  end
  local _, ok, dropped = append(KEYS[2], KEYS[3], KEYS[4], ARGV[5], ARGV[6], ended .. ';' .. ARGV[7])
  if not ok then
    refused = 16
  end
  if dropped then
    refused = refused + 32
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
/// is there already; `ARGV[5]`, if given, the id of the run's start's entry, deleted with it.
/// Returns 1 when the entry is there, 3 when writing it dropped another job's history, 2 when it
/// did so but the server refused part of the history's commands, 0 when it refused it.
pub(crate) static RECORD: LuaScript = LuaScript::new(concat!(
    history_lua!(),
    r#"
if ARGV[4] == '1' then
  local at = string.find(ARGV[1], ';', 1, true)
  if at and recorded(KEYS[1], string.sub(ARGV[1], at + 1)) then
    return 1
  end
end
if ARGV[5] and ARGV[5] ~= '' then
  redis.pcall('XDEL', KEYS[1], ARGV[5])
end
local _, ok, dropped = append(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[1])
if ok and dropped then
  return 3
elseif ok then
  return 1
elseif dropped then
  return 2
end
return 0
"#
));
