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
