/**
 * Lua twins of the bucket algorithms: `token-bucket.ts`, `gcra.ts` and `leaky-bucket.ts` in
 * `src/server/algorithms`. Read them side by side: each function here is the function of the same
 * name there, expression for expression (see `common.ts` for the rules); the delays
 * (`delayUntil`) are the TypeScript's own, run in Node on the state the Lua returns.
 *
 * @module
 */

/** Parameters `capacity`, `refillPerSecond`; state `'<tokens> <since>'`. */
export const TOKEN_BUCKET = `
local SENDS_RECEIPT = false -- no receipt
local function config(capacity, refillPerSecond)
  return { capacity = capacity, refillPerSecond = refillPerSecond }
end
local function decode(v)
  local a, b = match(v, '^(%S+) (%S+)$')
  local tokens, since = tonumber(a), tonumber(b)
  if tokens == nil or since == nil then return nil end
  return { tokens = tokens, since = since }
end
local function encode(s) return fmt(s.tokens) .. ' ' .. fmt(s.since) end

local function tokensAt(s, at, c)
  if s == nil then return c.capacity end
  local refilled = s.tokens + ((at - s.since) * c.refillPerSecond) / 1000
  return min(c.capacity, refilled)
end

local function rebase(s, at, c)
  if at < s.since then return { tokens = max(0, s.tokens), since = at }, true end
  if tokensAt(s, at, c) < 0 then return { tokens = 0, since = at }, true end
  return s, false
end
local function available(s, at, c) return max(0, floor(tokensAt(s, at, c))) end
local function consume(s, at, cost, c)
  if tokensAt(s, at, c) >= c.capacity or s == nil then
    return { tokens = c.capacity - cost, since = at }, nil, nil
  end
  return { tokens = s.tokens - cost, since = s.since }, nil, nil
end
local function refund(s, at, cost, receipt, c)
  local tokens = s.tokens + cost
  if tokens >= c.capacity then return nil end
  return { tokens = tokens, since = s.since }
end
local function expiresAt(s, c)
  return s.since + ((c.capacity - s.tokens) * 1000) / c.refillPerSecond + 1
end

-- decide() of a take on the common path, inlined (a state in plain decimal text, '<tokens>
-- <since>', or none; a clock that did not go back, a balance not below zero): nil hands the take
-- to GENERIC. The text of an unchanged since is reused, not formatted again.
local function fastTake(key, clock, now, c, cost, text)
  local capacity, rate = c.capacity, c.refillPerSecond
  local tokens, since, sinceText, keptUntil
  local level = capacity -- tokensAt(state, now)
  if type(text) == 'string' then
    local a, b = match(text, '^(%-?%d+) (%-?%d+%.?%d*)$')
    if a == nil then return nil end
    tokens, since, sinceText = a + 0, b + 0, b
    if now < since then return nil end -- rebase()
    level = tokens + ((now - since) * rate) / 1000
    if not (level < capacity) then level = capacity end -- min(capacity, refilled)
    if level < 0 then return nil end -- rebase()
    keptUntil = since + ((capacity - tokens) * 1000) / rate + 1 -- expiresAt(stored)
  else
    text = ''
  end
  if floor(level) < cost then return '0 ' .. clock[1] .. ' ' .. clock[2] .. ' ' .. text end -- available()
  -- consume(), then save()
  local taken
  if level >= capacity or tokens == nil then
    tokens, since = capacity - cost, now
    taken = fmt(tokens) .. ' ' .. fmt(now)
  else
    tokens = tokens - cost
    taken = fmt(tokens) .. ' ' .. sinceText
  end
  local expires = since + ((capacity - tokens) * 1000) / rate + 1
  if expires <= now then redis.call('DEL', key) else write(key, taken, expires, now, c, keptUntil) end
  return '1 ' .. clock[1] .. ' ' .. clock[2] .. ' ' .. taken
end
`;

/**
 * The meter GCRA and the leaky bucket share (`meterAvailable`, `meterRebase`, `meterRefund`
 * of `gcra.ts`), over a state `'<tat>'`. The including part defines `meter(c)` first.
 */
const METER = `
local function decode(v)
  local tat = tonumber(v)
  if tat == nil then return nil end
  return { tat = tat }
end
local function encode(s) return fmt(s.tat) end

local function debt(tat, at)
  if tat == nil then return 0 end
  return max(0, tat - at)
end
local function meterAvailable(tat, at, m)
  return max(0, m.limit - ceil(debt(tat, at) / m.intervalMs))
end
local function meterRebase(tat, at, m)
  local most = m.limit * m.intervalMs
  if tat - at > most then return at + most end
  return tat
end
local function meterRefund(tat, cost, start, m)
  local taken = cost * m.intervalMs
  if start ~= nil and tat == start + taken then return start end
  return tat - taken
end
local function tatOf(s) if s == nil then return nil end return s.tat end

local function rebase(s, at, c)
  local tat = meterRebase(s.tat, at, meter(c))
  if tat == s.tat then return s, false end
  return { tat = tat }, true
end
local function available(s, at, c) return meterAvailable(tatOf(s), at, meter(c)) end
local function expiresAt(s, c) return s.tat end

-- decide() of a take on the common path, inlined (a state in plain decimal text, or none; a debt
-- within the most a key can owe, so no rebase), for GCRA and the leaky bucket alike (their
-- consume() differs only in the delay, which the store computes): nil hands the take to GENERIC.
-- The reply carries the receipt, the take's start: the stored text when the start is the stored
-- tat.
local function fastTake(key, clock, now, c, cost, text)
  local m = meter(c)
  local interval, tat = m.intervalMs, nil
  local debt = 0
  if type(text) == 'string' then
    if match(text, '^%-?%d+%.?%d*$') == nil then return nil end
    tat = text + 0
    if tat - now > m.limit * interval then return nil end -- meterRebase()
    if tat > now then debt = tat - now end -- debt(): max(0, tat - at)
  else
    text = ''
  end
  local free = m.limit - ceil(debt / interval) -- meterAvailable()
  if free < 0 then free = 0 end
  if free < cost then return '0 ' .. clock[1] .. ' ' .. clock[2] .. ' ' .. text end
  -- consume(): the start is max(tat, now); then save()
  local start, startText = now, nil
  if tat ~= nil and tat > now then start, startText = tat, text end
  local taken = start + cost * interval
  local takenText = fmt(taken)
  if taken <= now then redis.call('DEL', key) else write(key, takenText, taken, now, c, tat) end
  return '1 ' .. clock[1] .. ' ' .. clock[2] .. ' ' .. takenText .. ' ' .. (startText or fmt(start))
end
`;

/** Parameters `rate`, `burst`; state `'<tat>'`. */
export const GCRA = `
local SENDS_RECEIPT = true -- the start of the take (its delay the store computes)
local function config(rate, burst)
  local c = { rate = rate, burst = burst }
  c.meter = { limit = c.burst + 1, intervalMs = 1000 / c.rate }
  return c
end
local function meter(c) return c.meter end
${METER}
local function consume(s, at, cost, c)
  local start = max(tatOf(s) or at, at)
  return { tat = start + cost * c.meter.intervalMs }, start, nil
end
local function refund(s, at, cost, receipt, c)
  local tat = meterRefund(s.tat, cost, receipt, c.meter)
  if tat <= at then return nil end
  return { tat = tat }
end
`;

/** Parameters `rate`, `capacity`; state `'<tat>'`. */
export const LEAKY_BUCKET = `
local SENDS_RECEIPT = true -- the start of the take (its delay the store computes)
local function config(rate, capacity)
  local c = { rate = rate, capacity = capacity }
  c.meter = { limit = c.capacity, intervalMs = 1000 / c.rate }
  return c
end
local function meter(c) return c.meter end
${METER}
local function consume(s, at, cost, c)
  local start = max(tatOf(s) or at, at)
  local tat = start + cost * c.meter.intervalMs
  return { tat = tat }, start, ceil(start - at)
end
local function refund(s, at, cost, receipt, c)
  local m = c.meter
  if receipt == nil or s.tat ~= receipt + cost * m.intervalMs then return s end
  local tat = meterRefund(s.tat, cost, receipt, m)
  if tat <= at then return nil end
  return { tat = tat }
end
`;
