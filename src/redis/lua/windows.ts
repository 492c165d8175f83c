/**
 * Lua twins of the window algorithms: `fixed-window.ts`, `sliding-log.ts` and
 * `sliding-window-counter.ts` in `src/server/algorithms`. Read them side by side: each function
 * here is the function of the same name there, expression for expression (see `common.ts` for the
 * rules). Arrays are 1-based here, 0-based there.
 *
 * @module
 */

/** Parameters `limit`, `windowMs`; state hash `{ start, count }`. */
export const FIXED_WINDOW = `
local function config(i) return { limit = tonumber(ARGV[i]), windowMs = tonumber(ARGV[i + 1]) } end
local function read(key, at)
  local v = redis.call('HMGET', key, 'start', 'count')
  if not v[1] then return nil end
  return { start = tonumber(v[1]), count = tonumber(v[2]) }
end
local function write(key, s) redis.call('HSET', key, 'start', fmt(s.start), 'count', fmt(s.count)) end

local function counted(s, at, windowMs)
  if s ~= nil and s.start == windowStart(at, windowMs) then return s.count end
  return 0
end

local function limit(c) return c.limit end
local function rebase(s, at, c)
  if at < s.start then return { start = windowStart(at, c.windowMs), count = s.count }, true end
  return s, false
end
local function available(s, at, c) return max(0, c.limit - counted(s, at, c.windowMs)) end
local function delayUntil(s, at, units, c)
  if available(s, at, c) >= units then return 0 end
  return windowStart(at, c.windowMs) + c.windowMs - at
end
local function consume(s, at, cost, c)
  local start = windowStart(at, c.windowMs)
  return { start = start, count = counted(s, at, c.windowMs) + cost }, start, nil
end
local function refund(s, at, cost, receipt, c)
  if s.start ~= receipt then return s end
  local count = s.count - cost
  if count > 0 then return { start = s.start, count = count } end
  return nil
end
local function expiresAt(s, c) return s.start + c.windowMs end
`;

/** Parameters `limit`, `windowMs`; state hash `{ e }`: the flat `[t0, cost0, t1, cost1, ...]`. */
export const SLIDING_LOG = `
local function config(i) return { limit = tonumber(ARGV[i]), windowMs = tonumber(ARGV[i + 1]) } end
-- The text each number was read from: written back as it was, formatting only new numbers.
local texts = {}
local function read(key, at)
  local v = redis.call('HGET', key, 'e')
  if not v then return nil end
  local e = {}
  for x in string.gmatch(v, '%S+') do
    local n = tonumber(x)
    e[#e + 1] = n
    texts[n] = x
  end
  return { e = e }
end
local function write(key, s)
  local parts = {}
  for i = 1, #s.e do parts[i] = texts[s.e[i]] or fmt(s.e[i]) end
  redis.call('HSET', key, 'e', table.concat(parts, ' '))
end

-- Index of the time of the first pair still inside the window ending at at.
local function firstLive(e, at, windowMs)
  local i = 1
  while i <= #e and e[i] <= at - windowMs do i = i + 2 end
  return i
end
local function used(e, from)
  local sum = 0
  for i = from + 1, #e, 2 do sum = sum + e[i] end
  return sum
end

local function limit(c) return c.limit end
local function rebase(s, at, c)
  local newest = s.e[#s.e - 1]
  if newest == nil or at >= newest then return s, false end
  local shift = at - newest
  local e = {}
  for i = 1, #s.e do
    if i % 2 == 1 then e[i] = s.e[i] + shift else e[i] = s.e[i] end
  end
  return { e = e }, true
end
local function available(s, at, c)
  if s == nil then return c.limit end
  return max(0, c.limit - used(s.e, firstLive(s.e, at, c.windowMs)))
end
local function delayUntil(s, at, units, c)
  if s == nil then return 0 end
  local e = s.e
  local from = firstLive(e, at, c.windowMs)
  local free = c.limit - used(e, from)
  if free >= units then return 0 end
  for i = from, #e, 2 do
    free = free + e[i + 1]
    if free >= units then return e[i] + c.windowMs - at end
  end
  return c.windowMs
end
local function consume(s, at, cost, c)
  local old = {}
  if s ~= nil then old = s.e end
  local e = {}
  for i = firstLive(old, at, c.windowMs), #old do e[#e + 1] = old[i] end
  local last = #e
  if last >= 2 and e[last - 1] == at then e[last] = e[last] + cost
  else
    e[last + 1] = at
    e[last + 2] = cost
  end
  return { e = e }, at, nil
end
local function refund(s, at, cost, receipt, c)
  local e = {}
  for i = 1, #s.e do e[i] = s.e[i] end
  for i = #e - 1, 1, -2 do
    if e[i] == receipt then
      local left = e[i + 1] - cost
      if left > 0 then e[i + 1] = left
      else
        table.remove(e, i)
        table.remove(e, i)
      end
      if #e > 0 then return { e = e } end
      return nil
    end
  end
  return s
end
local function expiresAt(s, c)
  local newest = s.e[#s.e - 1]
  if newest == nil then return -INF end
  return newest + c.windowMs
end
`;

/** Parameters `limit`, `windowMs`; state hash `{ start, current, previous }`. */
export const SLIDING_WINDOW_COUNTER = `
local function config(i) return { limit = tonumber(ARGV[i]), windowMs = tonumber(ARGV[i + 1]) } end
local function read(key, at)
  local v = redis.call('HMGET', key, 'start', 'current', 'previous')
  if not v[1] then return nil end
  return { start = tonumber(v[1]), current = tonumber(v[2]), previous = tonumber(v[3]) }
end
local function write(key, s)
  redis.call('HSET', key, 'start', fmt(s.start), 'current', fmt(s.current),
    'previous', fmt(s.previous))
end

local function view(s, at, windowMs)
  local start = windowStart(at, windowMs)
  if s == nil then return { start = start, current = 0, previous = 0 } end
  if start == s.start then return s end
  if start == s.start + windowMs then return { start = start, current = 0, previous = s.current } end
  return { start = start, current = 0, previous = 0 }
end
local function weighted(v, at, windowMs)
  return floor((v.previous * (windowMs - (at - v.start))) / windowMs)
end
local function offsetWhereWeightFits(count, room, windowMs)
  if count <= room then return 0 end
  return max(0, floor(windowMs - ((room + 1) * windowMs) / count) + 1)
end

local function limit(c) return c.limit end
local function rebase(s, at, c)
  if at >= s.start then return s, false end
  local current = min(c.limit, s.current + s.previous)
  return { start = windowStart(at, c.windowMs), current = current, previous = 0 }, true
end
local function available(s, at, c)
  if s == nil then return c.limit end
  local v = view(s, at, c.windowMs)
  return max(0, c.limit - weighted(v, at, c.windowMs) - v.current)
end
local function delayUntil(s, at, units, c)
  local limit, windowMs = c.limit, c.windowMs
  local v = view(s, at, windowMs)
  local room = limit - units - v.current
  local estimate
  if room >= 0 and offsetWhereWeightFits(v.previous, room, windowMs) < windowMs then
    estimate = v.start + offsetWhereWeightFits(v.previous, room, windowMs) - at
  else
    estimate = v.start + windowMs + offsetWhereWeightFits(v.current, limit - units, windowMs) - at
  end
  local function ok(d) return available(s, at + d, c) >= units end
  return settle(estimate, v.start + 2 * windowMs - at, ok)
end
local function consume(s, at, cost, c)
  local v = view(s, at, c.windowMs)
  return { start = v.start, current = v.current + cost, previous = v.previous }, v.start, nil
end
local function refund(s, at, cost, receipt, c)
  local current, previous = s.current, s.previous
  if s.start == receipt then current = max(0, current - cost)
  elseif receipt ~= nil and s.start == receipt + c.windowMs then previous = max(0, previous - cost)
  else return s end
  if current == 0 and previous == 0 then return nil end
  return { start = s.start, current = current, previous = previous }
end
local function expiresAt(s, c)
  if s.current > 0 then return s.start + 2 * c.windowMs end
  if s.previous > 0 then return s.start + c.windowMs end
  return -INF
end
`;
