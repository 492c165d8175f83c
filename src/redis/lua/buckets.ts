/**
 * Lua twins of the bucket algorithms: `token-bucket.ts`, `gcra.ts`, `leaky-bucket.ts` and
 * `concurrency-limit.ts` in `src/server/algorithms`. Read them side by side: each function here is
 * the function of the same name there, expression for expression (see `common.ts` for the rules),
 * but for the concurrency limit's state, kept as leases (see {@link CONCURRENCY}).
 *
 * @module
 */

/** Parameters `capacity`, `refillPerSecond`; state hash `{ tokens, since }`. */
export const TOKEN_BUCKET = `
local function config(i)
  return { capacity = tonumber(ARGV[i]), refillPerSecond = tonumber(ARGV[i + 1]) }
end
local function read(key, at)
  local v = redis.call('HMGET', key, 'tokens', 'since')
  if not v[1] then return nil end
  return { tokens = tonumber(v[1]), since = tonumber(v[2]) }
end
local function write(key, s) redis.call('HSET', key, 'tokens', fmt(s.tokens), 'since', fmt(s.since)) end

local function tokensAt(s, at, c)
  if s == nil then return c.capacity end
  local refilled = s.tokens + ((at - s.since) * c.refillPerSecond) / 1000
  return min(c.capacity, refilled)
end

local function limit(c) return c.capacity end
local function rebase(s, at, c)
  if at < s.since then return { tokens = max(0, s.tokens), since = at }, true end
  if tokensAt(s, at, c) < 0 then return { tokens = 0, since = at }, true end
  return s, false
end
local function available(s, at, c) return max(0, floor(tokensAt(s, at, c))) end
local function delayUntil(s, at, units, c)
  local missing = units - tokensAt(s, at, c)
  if missing <= 0 then return 0 end
  local function ok(d) return available(s, at + d, c) >= units end
  local upper = (c.capacity * 1000) / c.refillPerSecond + 1
  return settle((missing * 1000) / c.refillPerSecond, upper, ok)
end
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
`;

/**
 * The meter GCRA and the leaky bucket share (`meterAvailable`, `meterDelay`, `meterRebase`,
 * `meterRefund` of `gcra.ts`), over a state hash `{ tat }`. The including part defines `meter(c)` first.
 */
const METER = `
local function read(key, at)
  local v = redis.call('HGET', key, 'tat')
  if not v then return nil end
  return { tat = tonumber(v) }
end
local function write(key, s) redis.call('HSET', key, 'tat', fmt(s.tat)) end

local function debt(tat, at)
  if tat == nil then return 0 end
  return max(0, tat - at)
end
local function meterAvailable(tat, at, m)
  return max(0, m.limit - ceil(debt(tat, at) / m.intervalMs))
end
local function meterDelay(tat, at, units, m)
  if meterAvailable(tat, at, m) >= units then return 0 end
  local estimate = debt(tat, at) - (m.limit - units) * m.intervalMs
  local function ok(d) return meterAvailable(tat, at + d, m) >= units end
  return settle(estimate, debt(tat, at) + 1, ok)
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

local function limit(c) return meter(c).limit end
local function rebase(s, at, c)
  local tat = meterRebase(s.tat, at, meter(c))
  if tat == s.tat then return s, false end
  return { tat = tat }, true
end
local function available(s, at, c) return meterAvailable(tatOf(s), at, meter(c)) end
local function delayUntil(s, at, units, c) return meterDelay(tatOf(s), at, units, meter(c)) end
local function expiresAt(s, c) return s.tat end
`;

/** Parameters `rate`, `burst`; state hash `{ tat }`. */
export const GCRA = `
local function config(i)
  local c = { rate = tonumber(ARGV[i]), burst = tonumber(ARGV[i + 1]) }
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

/** Parameters `rate`, `capacity`; state hash `{ tat }`. */
export const LEAKY_BUCKET = `
local function config(i)
  local c = { rate = tonumber(ARGV[i]), capacity = tonumber(ARGV[i + 1]) }
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

/**
 * Parameters `limit`, `retryAfterMs` (and the lease duration, `ARGV[6]`). The one place where the
 * Lua is not the TypeScript transcribed: `concurrency-limit.ts` counts units in flight, which in
 * one process cannot leak (a release there cannot time out or be lost while the process lives).
 * Across processes it can: a process dies holding slots, a take or a release times out. So here
 * each take is a lease that expires on its own, and a lost release costs its slots for at most the
 * lease's duration, however busy the key.
 *
 * State: a sorted set, one member per unit in flight, `<lease>:<unit>` (`<lease>` the receipt, a
 * number unique in the key, from Redis's clock in microseconds), scored with the moment the lease
 * expires (`%.17g`). Expired members are dropped whenever the key is read; the key itself expires
 * with its last lease. A refund with a receipt removes that lease's units; one without (a
 * `release` that does not know its take) removes the `cost` units expiring first. The decisions
 * are the TypeScript's: units in flight are the live members, and `available`, `delayUntil` and
 * the replies are computed from them exactly as there.
 */
export const CONCURRENCY = `
local function config(i)
  return {
    limit = tonumber(ARGV[i]), retryAfterMs = tonumber(ARGV[i + 1]), leaseMs = tonumber(ARGV[6])
  }
end
-- ZADD (with score) or ZREM of units 1 to cost of lease, a few hundred members per command
-- (unpack() has a stack limit).
local function leaseMembers(command, key, lease, cost, score)
  local id = fmt(lease)
  local args = {}
  for j = 1, cost do
    if score ~= nil then args[#args + 1] = score end
    args[#args + 1] = id .. ':' .. j
    if #args >= 512 or j == cost then
      redis.call(command, key, unpack(args))
      args = {}
    end
  end
end
-- The leases live at at: { inFlight (units), expires (the last lease's end) }, or nil for none.
local function read(key, at)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(at))
  local n = redis.call('ZCARD', key)
  if n == 0 then return nil end
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  return { inFlight = n, expires = tonumber(last[2]) }
end
local function write(key, s)
  if s.lease ~= nil then leaseMembers('ZADD', key, s.lease, s.units, fmt(s.leaseExpires)) end
end

local function inFlight(s) if s == nil then return 0 end return s.inFlight end

local function limit(c) return c.limit end
local function rebase(s, at, c) return s, false end
local function available(s, at, c) return max(0, c.limit - inFlight(s)) end
local function delayUntil(s, at, units, c)
  if available(s, at, c) >= units then return 0 end
  return c.retryAfterMs
end
local function consume(s, at, cost, c)
  local lease = clockSeconds * 1000000 + clockMicros
  while redis.call('ZSCORE', KEYS[1], fmt(lease) .. ':1') do lease = lease + 1 end
  local ends = at + c.leaseMs
  local expires = ends
  if s ~= nil then expires = max(s.expires, ends) end
  local taken = { inFlight = inFlight(s) + cost, expires = expires }
  taken.lease, taken.units, taken.leaseExpires = lease, cost, ends
  return taken, lease, nil
end
local function refund(s, at, cost, receipt, c)
  if receipt ~= nil then leaseMembers('ZREM', KEYS[1], receipt, cost, nil)
  else redis.call('ZPOPMIN', KEYS[1], cost) end
  return read(KEYS[1], at)
end
local function expiresAt(s, c)
  if s.inFlight > 0 then return s.expires end
  return -INF
end
`;
