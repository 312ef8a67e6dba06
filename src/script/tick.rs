//! The scripts of a tick's lock (see `crate::lock::catch_up`): the acquire that records the
//! run's start in its job's history, catch-up's, which first looks whether the tick ran, and on a
//! Cluster the same look and record on the history's own slot.
//!
//! A tick's run is known from the moment it starts: its start's entry (`started;...`, see
//! `crate::history::started_parts`) is written in the acquire's own script, with the `SET`, and
//! with durable acquire the `WAIT` that follows covers it too. The release deletes it with the
//! ending's entry written (`RELEASE`'s `ARGV[8]`). So a run whose release failed, whose reply was
//! lost, or whose holder died, still has an entry, and catch-up never runs its tick again.

use super::history::history_lua;
use super::LuaScript;

/// `own_start(stream, tail)`: the id of the start's entry whose tail after the fencing token is
/// `tail` (one holder value's: its start, pid, host, instance and name), among the latest; nil
/// when there is none. A retry after a lost reply finds its first try's so.
macro_rules! own_start_lua {
    () => {
        r#"
local function own_start(stream, tail)
  local latest = redis.pcall('XREVRANGE', stream, '+', '-', 'COUNT', 16)
  if type(latest) == 'table' and not latest.err then
    for _, entry in ipairs(latest) do
      local run = entry[2][2]
      if run and string.sub(run, 1, 8) == 'started;' and string.sub(run, -#tail) == tail then
        return entry[1]
      end
    end
  end
  return nil
end
"#
    };
}

/// `started(token, at, stream, index, evicted)`: writes the run's start's entry in `stream` and
/// returns its id ('' where the server refused it). `ARGV[at]`, `ARGV[at + 1]`: the stream's
/// length and TTL; `ARGV[at + 2]` the entry's head before the fencing token, `ARGV[at + 3]` its
/// tail after it. A retry after a lost reply (`ARGV[3]` = 1) finds the first try's entry
/// (`own_start`) and returns its id instead. Needs `append` (`history_lua!`).
macro_rules! started_lua {
    () => {
        r#"
local function started(token, at, stream, index, evicted)
  local tail = ARGV[at + 3]
  if ARGV[3] == '1' then
    local own = own_start(stream, tail)
    if own then
      return own
    end
  end
  local id = append(stream, index, evicted, ARGV[at], ARGV[at + 1],
    'started;' .. ARGV[at + 2] .. string.format('%.0f', token) .. tail)
  return id or ''
end
"#
    };
}

/// `forget(stream, value, name)`: deletes the start's entry of the holder `value` (`token;host;
/// pid;acquired-at`, see `holder`) of the lock `name`, whatever its instance and token: a start
/// whose `SET` is being taken back (timed out, unconfirmed, a claim that failed) or whose lock an
/// operator forced. An entry `taken-back` (no run's) takes its place, so that the stream never
/// gets shorter: catch-up reads a stream of `HISTORY_LENGTH` entries as trimmed, and one that
/// shrank below it after a trim would read as never trimmed, and prove a miss it cannot.
macro_rules! forget_lua {
    () => {
        concat!(
            "local KEPT = ",
            history_length!(),
            r#"
local function forget(stream, value, name)
  local host, pid, start = string.match(value, '^[^;]*;([^;]*);([^;]*);([^;]*)$')
  if not start then
    return
  end
  local who = ';' .. start .. ';' .. pid .. ';' .. host .. ';'
  local tail = ';;' .. name
  local entries = redis.pcall('XREVRANGE', stream, '+', '-')
  if type(entries) ~= 'table' or entries.err then
    return
  end
  for _, entry in ipairs(entries) do
    local run = entry[2][2]
    if run and string.sub(run, 1, 8) == 'started;' and string.sub(run, -#tail) == tail
        and string.find(run, who, 1, true) then
      redis.pcall('XDEL', stream, entry[1])
      redis.pcall('XADD', stream, 'MAXLEN', '~', KEPT, '*', 'run', 'taken-back')
    end
  end
end
"#
        )
    };
}

/// Whether the job's stream has an entry of the tick lock `ARGV[name_at]`: -2 when it has, -3
/// when the stream cannot be read; else the entries, for the proof that it has none. With
/// `ARGV[name_at + 3]` = 1 (`retry-failed-ticks`) a run whose task failed does not count; with
/// `ARGV[name_at + 4]` = 1 (`retry-unended-ticks`) neither does a start whose end was never
/// recorded (looked at only once the lock is gone: its holder died, or its release failed).
macro_rules! ran_lua {
    () => {
        r#"
local ENDED = {released = 1, kept = 1, ['no-longer-ours'] = 1, lost = 1, unproven = 1,
  forced = 1, started = 1}
local function ran(stream, name_at)
  local entries = redis.pcall('XREVRANGE', stream, '+', '-')
  if type(entries) ~= 'table' or entries.err then
    return -3
  end
  local tail = ';' .. ARGV[name_at]
  local failed_retried = ARGV[name_at + 3] == '1'
  local unended_retried = ARGV[name_at + 4] == '1'
  for _, entry in ipairs(entries) do
    local run = entry[2][1] == 'run' and entry[2][2]
    local ended, task = nil, nil
    if run and string.sub(run, -#tail) == tail then
      ended, task = string.match(run, '^([^;]*);([^;+]*)')
    end
    -- Only dibs's own entries (`history::Run::parse`'s endings, and a start) count.
    if ended and ENDED[ended] then
      if not ((failed_retried and task == 'failed') or (unended_retried and ended == 'started')) then
        return -2
      end
    end
  end
  return entries
end
"#
    };
}

/// Whether the entries of `ran` prove that the tick due at `ARGV[due_at]` did not run: -3 when
/// they cannot (trimmed past it, or dropped: `KEYS[evicted_at]`), -5 when the job has no recorded
/// run from before the tick was due, else -4 (missed).
macro_rules! missed_lua {
    () => {
        r#"
local function missed(entries, due_at, evicted)
  local oldest = entries[#entries]
  local reaches = oldest and tonumber(string.match(oldest[1], '^%d+')) < tonumber(ARGV[due_at]) - SKEW
  if not reaches and (#entries >= LENGTH or redis.call('EXISTS', evicted) == 1) then
    return -3
  end
  if oldest == nil or tonumber(string.match(oldest[1], '^%d+')) > tonumber(ARGV[due_at]) then
    return -5
  end
  return -4
end
"#
    };
}

/// `look(stream, evicted)`: catch-up's look at the tick `ARGV[4]` due at `ARGV[5]` (`ran`, then
/// `missed`): its answer where it settles the call (the tick ran, cannot be proven missed, or
/// `ARGV[6]` = 1 asks only to look), else nil: the tick was missed, and may be taken. First, -6
/// when the instance's clock at the call's sending (`ARGV[9]`, Unix ms) is more than `SKEW`
/// ahead of the server's `TIME`: its due times cannot be compared with the history's entries
/// (a lower bound of the skew, as the server reads its clock after the instance did).
macro_rules! look_lua {
    () => {
        r#"
local function look(stream, evicted)
  local time = redis.pcall('TIME')
  local now_ms = nil
  if type(time) == 'table' and not time.err then
    now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  -- This instance's clock when it sent the call, against the server's (a refused TIME: unknown).
  if now_ms and tonumber(ARGV[9]) > now_ms + SKEW then
    return -6
  end
  local entries = ran(stream, 4)
  if type(entries) ~= 'table' then
    return entries
  end
  local found = missed(entries, 5, evicted)
  if ARGV[6] == '1' or found == -3 then
    return found
  end
  return nil
end
"#
    };
}

/// Catch-up's look whole: its constants, `ran`, `missed` and `look`.
macro_rules! catch_up_look_lua {
    () => {
        concat!(
            "local LENGTH = ",
            history_length!(),
            "\nlocal SKEW = ",
            clock_skew_ms!(),
            "\n",
            ran_lua!(),
            missed_lua!(),
            look_lua!()
        )
    };
}

/// What writes a start's entry: `append` (`history_lua!`), `own_start` and `started`.
macro_rules! start_lua {
    () => {
        concat!(history_lua!(), own_start_lua!(), started_lua!())
    };
}

/// `mint()`: the fencing token, once the `SET` won (`mint_lua!`).
macro_rules! mint_fn_lua {
    () => {
        concat!("\nlocal function mint()", mint_lua!(), "end\n")
    };
}

/// The acquire of a tick's lock with the run history: [`super::ACQUIRE`], then the run's start's
/// entry (see the module docs). `KEYS`: the lock, the job's stream, the index of jobs, the
/// eviction's mark; `ARGV[1..3]` as `ACQUIRE`'s, `ARGV[4..7]` as `started`'s. Returns false
/// when the lock is taken, else `{token, start's entry id}`. It costs a won tick one `XADD` more
/// than `ACQUIRE`, a skipped one nothing; a lock not of a tick never runs it.
pub(crate) static TICK_ACQUIRE: LuaScript = LuaScript::new(concat!(
    // The `SET` first: a skipped tick (every instance but one, each tick) returns before
    // anything else is defined.
    set_lua!(),
    mint_fn_lua!(),
    start_lua!(),
    r#"
local token = mint()
return {token, started(token, 4, KEYS[2], KEYS[3], KEYS[4])}
"#
));

/// The acquire of a tick that may not have run (see `lock::catch_up`): first whether the tick
/// ran, then [`TICK_ACQUIRE`] if it did not, in one script, so that no other instance can run the
/// tick between the look and the `SET`. `KEYS` as `TICK_ACQUIRE`'s; `ARGV[1..3]` as
/// `ACQUIRE`'s, `ARGV[4]` the tick lock's name, `ARGV[5]` the tick's due time (Unix ms),
/// `ARGV[6]` 1 to look only, `ARGV[7]` and `ARGV[8]` `ran`'s retries, `ARGV[9]` the instance's
/// clock (Unix ms), `ARGV[10..13]` as `started`'s. Returns false when the lock is there (running,
/// or its done-mark), -2 when the history has a run of it (a start counts), -3 when the history
/// cannot prove that it has not (its stream trimmed past the tick, or dropped), -4 when looking
/// only and the tick was missed, -5 when looking only and the job has no recorded run from before
/// the tick was due (a new job, or a tick that predates its first run: not one it missed), -6
/// when the instance's clock runs too far ahead of the server's (`look`); else as `TICK_ACQUIRE`. The
/// history's entries are looked at whole: about `HISTORY_LENGTH`.
///
/// A stream's absence proves that the tick did not run when it reaches back before the tick
/// (its oldest entry older than the due time less `CLOCK_SKEW_MS`, for instances whose clock
/// runs ahead of the server's), or when it was never trimmed (`XADD MAXLEN ~` trims only down
/// to at least its length) nor dropped (the eviction mark absent). A stream expires only 40
/// days after its last entry, and catch-up looks back at most 30.
pub(crate) static CATCH_UP_ACQUIRE: LuaScript = LuaScript::new(concat!(
    r#"
local retried = ARGV[3] == '1' and redis.call('GET', KEYS[1]) == ARGV[1]
if not retried and redis.call('EXISTS', KEYS[1]) == 1 then
  if ARGV[6] == '1' then
    return -2
  end
  return false
end
"#,
    catch_up_look_lua!(),
    r#"
if not retried then
  local found = look(KEYS[2], KEYS[4])
  if found then
    return found
  end
end"#,
    set_lua!(),
    mint_fn_lua!(),
    start_lua!(),
    r#"
local token = mint()
return {token, started(token, 10, KEYS[2], KEYS[3], KEYS[4])}
"#
));

/// On a Cluster, where a tick's lock and its job's history live in different slots: the look
/// and the start's entry of [`CATCH_UP_ACQUIRE`], on the history's slot, once the lock was won
/// with [`super::ACQUIRE`] (or, looking only, with no lock). `KEYS`: the job's stream, the index
/// of jobs, the eviction's mark; `ARGV[1]` the token (for the start's entry), `ARGV[2]` unused,
/// `ARGV[3]` 1 on a retry, `ARGV[4..9]` as `CATCH_UP_ACQUIRE`'s, `ARGV[10..13]` as `started`'s;
/// `ARGV[14]` 1 to write the start without looking (a tick run without catch-up). Returns what
/// `CATCH_UP_ACQUIRE` would, with `{token, id}` for a tick it may run. The history's slot is
/// the judge: two instances that each won the lock at another time (it lapsed between) cannot
/// both find no entry, since the first wrote its start before its task ran. A retry (`ARGV[3]`
/// = 1) first looks for its own first try's start, which is no other run's.
pub(crate) static CLAIM: LuaScript = LuaScript::new(concat!(
    start_lua!(),
    catch_up_look_lua!(),
    r#"
if ARGV[3] == '1' then
  local own = own_start(KEYS[1], ARGV[13])
  if own then
    -- A write on this connection (the stream's expiry again), so that the WAIT behind this
    -- script waits for the first try's start too (Redis 7.2+ counts a connection's own writes).
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl > 0 then
      redis.call('PEXPIRE', KEYS[1], ttl)
    end
    return {tonumber(ARGV[1]), own}
  end
end
if ARGV[14] ~= '1' then
  local found = look(KEYS[1], KEYS[3])
  if found then
    return found
  end
end
return {tonumber(ARGV[1]), started(ARGV[1], 10, KEYS[1], KEYS[2], KEYS[3])}
"#
));

/// Takes back a tick's acquire that must not run (its `SET` timed out, durable acquire could not
/// confirm it): deletes the lock `KEYS[1]` if it holds `ARGV[1]` and the start's entry of that
/// holder in the job's stream `KEYS[2]` (`forget`); `ARGV[2]` the lock's name. Returns 2 when it
/// deleted the lock, else 0, as `RELEASE` does. Where the two keys live in different slots (a
/// Cluster), [`FORGET_START`] follows a `RELEASE` instead.
pub(crate) static UNSTART: LuaScript = LuaScript::new(concat!(
    forget_lua!(),
    r#"
local deleted = 0
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  deleted = 2
end
forget(KEYS[2], ARGV[1], ARGV[2])
return deleted
"#
));

/// `forget` alone, on the job's stream `KEYS[1]`: `ARGV[1]` the holder's value, `ARGV[2]` the
/// lock's name. Returns 1.
pub(crate) static FORGET_START: LuaScript = LuaScript::new(concat!(
    forget_lua!(),
    r#"
forget(KEYS[1], ARGV[1], ARGV[2])
return 1
"#
));
