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
