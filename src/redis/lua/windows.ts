/**
 * Lua twins of the window algorithms: `fixed-window.ts` and `sliding-window-counter.ts` in
 * `src/server/algorithms` (the sliding log: `sliding-log.ts` here). Read them side by side: each function
 * here is the function of the same name there, expression for expression (see `common.ts` for the
 * rules); the delays (`delayUntil`) are the TypeScript's own, run in Node on the state the Lua
 * returns. Arrays are 1-based here, 0-based there.
 *
 * @module
 */

/** Parameters `limit`, `windowMs`; state `'<start> <count>'`. */
export const FIXED_WINDOW = `
local SENDS_RECEIPT = false -- the receipt is the state's start
local function config(limit, windowMs) return { limit = limit, windowMs = windowMs } end
local function decode(v)
  local a, b = match(v, '^(%S+) (%S+)$')
  local start, count = tonumber(a), tonumber(b)
  if start == nil or count == nil then return nil end
  return { start = start, count = count }
end
local function encode(s) return fmt(s.start) .. ' ' .. fmt(s.count) end

local function counted(s, at, windowMs)
  if s ~= nil and s.start == windowStart(at, windowMs) then return s.count end
  return 0
end

local function rebase(s, at, c)
  if at < s.start then return { start = windowStart(at, c.windowMs), count = s.count }, true end
  return s, false
end
local function available(s, at, c) return max(0, c.limit - counted(s, at, c.windowMs)) end
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

-- decide() of a take on the common path, inlined (a state in canonical text, '<start> <count>'
-- with whole numbers, or none; a clock that did not go back): nil hands the take to GENERIC.
-- The texts of the stored start and of the counts are reused, not formatted again.
local function fastTake(key, clock, now, c, cost, text)
  local windowMs = c.windowMs
  local start = floor(now / windowMs) * windowMs -- windowStart(now)
  local counted, startText, keptUntil = 0, nil, nil
  if type(text) == 'string' then
    local a, b = match(text, '^(%-?%d+) (%d+)$')
    if a == nil then return nil end
    local stored = a + 0
    if now < stored then return nil end -- rebase()
    if stored == start then counted, startText = b + 0, a end -- counted()
    keptUntil = stored + windowMs -- expiresAt(stored)
  else
    text = ''
  end
  local free = c.limit - counted -- available()
  if free < 0 then free = 0 end
  if free < cost then return '0 ' .. clock[1] .. ' ' .. clock[2] .. ' ' .. text end
  -- consume(), then save()
  local taken = (startText or fmt(start)) .. ' ' .. fmt(counted + cost)
  local expires = start + windowMs
  if expires <= now then redis.call('DEL', key) else write(key, taken, expires, now, c, keptUntil) end
  return '1 ' .. clock[1] .. ' ' .. clock[2] .. ' ' .. taken
end
`;

/** Parameters `limit`, `windowMs`; state `'<start> <current> <previous>'`. */
export const SLIDING_WINDOW_COUNTER = `
local SENDS_RECEIPT = false -- the receipt is the state's start
local function config(limit, windowMs) return { limit = limit, windowMs = windowMs } end
local function decode(v)
  local a, b, p = match(v, '^(%S+) (%S+) (%S+)$')
  local start, current, previous = tonumber(a), tonumber(b), tonumber(p)
  if start == nil or current == nil or previous == nil then return nil end
  return { start = start, current = current, previous = previous }
end
local function encode(s) return fmt(s.start) .. ' ' .. fmt(s.current) .. ' ' .. fmt(s.previous) end

local function view(s, at, windowMs)
  local start = windowStart(at, windowMs)
  if s == nil then return { start = start, current = 0, previous = 0 } end
  if start == s.start then return s end
  if start == s.start + windowMs then return { start = start, current = 0, previous = s.current } end
  return { start = start, current = 0, previous = 0 }
end
local function share(v, at, windowMs) return max(0, windowMs - (at - v.start) - 1) end
local function weighted(v, at, windowMs)
  return floor((v.previous * share(v, at, windowMs)) / windowMs)
end
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

-- decide() of a take on the common path, inlined (a state in canonical text, '<start> <current>
-- <previous>' with whole numbers, or none; a clock that did not go back): nil hands the take to
-- GENERIC. The texts of the stored numbers are reused where they carry over.
local function fastTake(key, clock, now, c, cost, text)
  local windowMs = c.windowMs
  local start = floor(now / windowMs) * windowMs -- windowStart(now), the view's start
  local current, previous, free, keptUntil = 0, 0, c.limit, nil
  local startText, previousText
  if type(text) == 'string' then
    local a, b, p = match(text, '^(%-?%d+) (%d+) (%d+)$')
    if a == nil then return nil end
    local stored, cur, prev = a + 0, b + 0, p + 0
    if now < stored then return nil end -- rebase()
    -- expiresAt(stored)
    if cur > 0 then keptUntil = stored + 2 * windowMs
    elseif prev > 0 then keptUntil = stored + windowMs
    else keptUntil = -INF end
    -- view()
    if start == stored then
      current, previous, startText, previousText = cur, prev, a, p
    elseif start == stored + windowMs then
      previous, previousText = cur, b
    end
    -- available(): limit - weighted(view) - view.current, at least 0
    free = c.limit - floor((previous * max(0, windowMs - (now - start) - 1)) / windowMs) - current
    if free < 0 then free = 0 end
  else
    text = ''
  end
  if free < cost then return '0 ' .. clock[1] .. ' ' .. clock[2] .. ' ' .. text end
  -- consume(), then save()
  current = current + cost
  local taken = (startText or fmt(start)) .. ' ' .. fmt(current) .. ' ' .. (previousText or fmt(previous))
  local expires = -INF -- expiresAt(taken)
  if current > 0 then expires = start + 2 * windowMs
  elseif previous > 0 then expires = start + windowMs end
  if expires <= now then redis.call('DEL', key) else write(key, taken, expires, now, c, keptUntil) end
  return '1 ' .. clock[1] .. ' ' .. clock[2] .. ' ' .. taken
end
`;
