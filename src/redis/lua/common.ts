/**
 * The Lua every limiter script shares: helpers that mirror `algorithms/logic.ts`, and the generic
 * take / peek / refund that mirror `decide()`, `inspect()` and the memory store's `refund`.
 *
 * A limiter script is `PRELUDE + <algorithm> + OPERATIONS`. The algorithm part defines, as local
 * functions, those of an `AlgorithmLogic` (`limit`, `rebase`, `available`, `delayUntil`, `consume`,
 * `refund`, `expiresAt`) plus `config(first)` (its parameters from `ARGV`), `read(key, at)` and
 * `write(key, state)` (its state in a Redis hash; the concurrency limit's in a sorted set of
 * leases, see `buckets.ts`). Local functions, not a table of them: Redis runs the whole chunk on
 * every call, and each table entry would cost an insertion each time.
 *
 * Every call reads Redis's `TIME` first. A take carries a deadline in that clock (`ARGV[7]`, set by
 * the store from an offset measured on earlier replies): one that Redis runs later answers `late`
 * and changes nothing, so a take that timed out at its caller is not applied when a paused or
 * overloaded Redis gets to it.
 *
 * Rules that keep the Lua bit-for-bit equal to the TypeScript:
 * - Every expression keeps the TypeScript's operand order and grouping; Lua numbers are the same
 *   IEEE doubles, so the same operations round the same way.
 * - Numbers are written to Redis and returned to Node with `%.17g`, which round-trips every double
 *   (Lua's `tostring` keeps 14 digits: a GCRA timestamp would come back a little off, and a refund
 *   that compares it exactly would silently do nothing).
 * - Replies: Redis turns a Lua number into an integer, truncating it, so a number goes back as is
 *   only when it is whole (every delay on Redis time is), and as `%.17g` text otherwise.
 *
 * @module
 */

/**
 * Arguments: `KEYS[1]` the state key; `ARGV[1]` the operation (`take`, `peek`, `refund`),
 * `ARGV[2]` the cost, `ARGV[3]` the time in epoch milliseconds or `''` for Redis's own clock,
 * `ARGV[4]` the refund receipt or `''`, `ARGV[5]` the least TTL in milliseconds, `ARGV[6]` how long
 * a concurrency lease lasts (the in-flight TTL), `ARGV[7]` the deadline of a take in Redis epoch
 * milliseconds or `''`, then the algorithm's parameters from `ARGV[8]`.
 */
export const PRELUDE = `
local floor, ceil, max, min = math.floor, math.ceil, math.max, math.min
local INF = math.huge

-- Redis's clock, read once per call: seconds and microseconds.
local clock = redis.call('TIME')
local clockSeconds, clockMicros = tonumber(clock[1]), tonumber(clock[2])
local redisNow = clockSeconds * 1000 + floor(clockMicros / 1000)

local format = string.format
local function fmt(x) return format('%.17g', x) end
-- A reply number: as is when whole (Redis sends it as an integer), else as text.
local function out(x) if x == floor(x) then return x end return format('%.17g', x) end
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
`;

/**
 * The operations, after the algorithm's part. Replies, each ending with Redis's time in epoch
 * milliseconds (for the store to measure its offset):
 * - take and peek: `{ allowed ('1'/'0'), limit, remaining, resetMs, retryAfterMs, delayMs or '',
 *   receipt or '', redis now }`, numbers as integers or `%.17g` text;
 * - a take run after its deadline: `{ 'late', redis now }`, nothing changed;
 * - refund: `{ 'ok', redis now }`.
 */
export const OPERATIONS = `
local key = KEYS[1]
local op = ARGV[1]
local deadline = num(ARGV[7])
if deadline ~= nil and redisNow > deadline then return { 'late', redisNow } end
local cost = tonumber(ARGV[2])
local now = num(ARGV[3])
if now == nil then now = redisNow end
local receipt = num(ARGV[4])
local minTtl = tonumber(ARGV[5])
local foreverTtl = tonumber(ARGV[6])
local c = config(8)

-- The memory store's write: delete a state that is fresh or expired, else keep it until it is.
local function save(state)
  if state == nil then redis.call('DEL', key) return end
  local expires = expiresAt(state, c)
  if expires <= now then redis.call('DEL', key) return end
  write(key, state)
  local ttl = foreverTtl
  if expires ~= INF then ttl = max(ceil(expires - now), minTtl) end
  redis.call('PEXPIRE', key, ttl)
end

-- describe() of logic.ts.
local function describe(state)
  local free = available(state, now, c)
  local most = limit(c)
  local reset = 0
  if free < most then reset = delayUntil(state, now, free + 1, c) end
  if free < cost then
    return { '0', out(most), out(free), out(reset), out(delayUntil(state, now, cost, c)), '', '',
      redisNow }
  end
  return { '1', out(most), out(free), out(reset), 0, '', '', redisNow }
end

local stored = read(key, now)
local state, rebased = stored, false
if stored ~= nil and op ~= 'refund' then state, rebased = rebase(stored, now, c) end

if op == 'peek' then return describe(state) end

if op == 'refund' then
  if stored ~= nil then save(refund(stored, now, cost, receipt, c)) end
  return { 'ok', redisNow }
end

-- take: decide() of logic.ts, then the memory store's write when the state changed.
if available(state, now, c) < cost then
  if rebased then save(state) end
  return describe(state)
end
local taken, takenReceipt, delay = consume(state, now, cost, c)
save(taken)
local remaining = available(taken, now, c)
local most = limit(c)
local reset = 0
if remaining < most then reset = delayUntil(taken, now, remaining + 1, c) end
local delayText, receiptText = '', ''
if delay ~= nil then delayText = out(delay) end
if takenReceipt ~= nil then receiptText = fmt(takenReceipt) end
return { '1', out(most), out(remaining), out(reset), 0, delayText, receiptText, redisNow }
`;
