/**
 * The Lua every limiter script shares: helpers that mirror `algorithms/logic.ts`, and the generic
 * take / peek / refund that mirror `decide()`, `inspect()` and the memory store's `refund`.
 *
 * A limiter script is `PRELUDE + <algorithm> + OPERATIONS`. The algorithm part defines a table `A`
 * with the functions of an `AlgorithmLogic` (`limit`, `rebase`, `available`, `delayUntil`,
 * `consume`, `refund`, `expiresAt`) plus `config(first)` (its parameters from `ARGV`), `read(key)`
 * and `write(key, state)` (its state in a Redis hash).
 *
 * Rules that keep the Lua bit-for-bit equal to the TypeScript:
 * - Every expression keeps the TypeScript's operand order and grouping; Lua numbers are the same
 *   IEEE doubles, so the same operations round the same way.
 * - Numbers are written to Redis and returned to Node with `%.17g`, which round-trips every double
 *   (Lua's `tostring` keeps 14 digits: a GCRA timestamp would come back a little off, and a refund
 *   that compares it exactly would silently do nothing).
 * - Replies are strings: Redis would truncate a Lua number to an integer.
 *
 * @module
 */

/**
 * Arguments: `KEYS[1]` the state key; `ARGV[1]` the operation (`take`, `peek`, `refund`),
 * `ARGV[2]` the cost, `ARGV[3]` the time in epoch milliseconds or `''` for Redis's own clock,
 * `ARGV[4]` the refund receipt or `''`, `ARGV[5]` the least TTL in milliseconds, `ARGV[6]` the TTL
 * of state that never expires on its own, then the algorithm's parameters from `ARGV[7]`.
 */
export const PRELUDE = `
if redis.replicate_commands then redis.replicate_commands() end
local floor, ceil, max, min = math.floor, math.ceil, math.max, math.min
local INF = math.huge

local function fmt(x) return string.format('%.17g', x) end
local function num(s) if s == nil or s == false or s == '' then return nil end return tonumber(s) end
local function finite(x) return x == x and x ~= INF and x ~= -INF end

local function search(low, high, ok)
  local lo, hi = low, high
  while lo < hi do
    local mid = lo + floor((hi - lo) / 2)
    if ok(mid) then hi = mid else lo = mid + 1 end
  end
  return lo
end

-- settle() of logic.ts: the smallest whole d >= 0 with ok(d), from a closed-form estimate.
local function settle(estimate, upper, ok)
  local top = max(0, ceil(upper))
  local d
  if finite(estimate) then d = min(top, max(0, ceil(estimate))) else d = top end
  if ok(d) then
    for _ = 1, 4 do
      if d == 0 or not ok(d - 1) then return d end
      d = d - 1
    end
    return search(0, d, ok)
  end
  for _ = 1, 4 do
    d = d + 1
    if ok(d) then return d end
  end
  return search(d + 1, max(d + 1, top), ok)
end

local function windowStart(at, windowMs) return floor(at / windowMs) * windowMs end

local A = {}
`;

/**
 * The operations, after the algorithm's part. Replies (all strings):
 * - take and peek: `{ allowed ('1'/'0'), limit, remaining, resetMs, retryAfterMs, delayMs or '',
 *   receipt or '' }`;
 * - refund: `{}`.
 */
export const OPERATIONS = `
local key = KEYS[1]
local op = ARGV[1]
local cost = tonumber(ARGV[2])
local now = num(ARGV[3])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
end
local receipt = num(ARGV[4])
local minTtl = tonumber(ARGV[5])
local foreverTtl = tonumber(ARGV[6])
local c = A.config(7)

-- The memory store's write: delete a state that is fresh or expired, else keep it until it is.
local function write(state)
  if state == nil then redis.call('DEL', key) return end
  local expires = A.expiresAt(state, c)
  if expires <= now then redis.call('DEL', key) return end
  A.write(key, state)
  local ttl = foreverTtl
  if expires ~= INF then ttl = max(ceil(expires - now), minTtl) end
  redis.call('PEXPIRE', key, ttl)
end

local function delayText(delay) if delay == nil then return '' end return fmt(delay) end

-- describe() of logic.ts.
local function describe(state)
  local available = A.available(state, now, c)
  local limit = A.limit(c)
  local reset = 0
  if available < limit then reset = A.delayUntil(state, now, available + 1, c) end
  local retry = 0
  local allowed = '1'
  if available < cost then
    retry = A.delayUntil(state, now, cost, c)
    allowed = '0'
  end
  return { allowed, fmt(limit), fmt(available), fmt(reset), fmt(retry), '', '' }
end

local stored = A.read(key)
local state, rebased = stored, false
if stored ~= nil and op ~= 'refund' then state, rebased = A.rebase(stored, now, c) end

if op == 'peek' then return describe(state) end

if op == 'refund' then
  if stored ~= nil then write(A.refund(stored, now, cost, receipt, c)) end
  return {}
end

-- take: decide() of logic.ts, then the memory store's write when the state changed.
if A.available(state, now, c) < cost then
  if rebased then write(state) end
  return describe(state)
end
local taken, takenReceipt, delay = A.consume(state, now, cost, c)
write(taken)
local remaining = A.available(taken, now, c)
local limit = A.limit(c)
local reset = 0
if remaining < limit then reset = A.delayUntil(taken, now, remaining + 1, c) end
local receiptText = ''
if takenReceipt ~= nil then receiptText = fmt(takenReceipt) end
return { '1', fmt(limit), fmt(remaining), fmt(reset), '0', delayText(delay), receiptText }
`;
