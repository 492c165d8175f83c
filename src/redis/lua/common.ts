/**
 * The Lua every limiter shares: helpers that mirror `algorithms/logic.ts`, and the generic
 * take / peek / refund (`run`) that mirror `decide()`, `inspect()` and the memory store's `refund`.
 *
 * The limiters are one Redis Function library (see `index.ts`): {@link HELPERS} sits at the
 * library's top level and runs once, when the library is loaded; each algorithm's part sits in a
 * `do ... end` block that ends by registering its function, so no call pays for defining anything.
 * On a server that refuses functions, the same text runs as one script per algorithm
 * (`HELPERS + <algorithm> + return run(KEYS, ARGV)`), through `EVALSHA`.
 *
 * An algorithm's part defines, as local functions, those of an `AlgorithmLogic` (`limit`,
 * `rebase`, `available`, `delayUntil`, `consume`, `refund`, `expiresAt`) plus `config(args)` (its
 * parameters), `read(key)` and `encode(state)`; then {@link GENERIC} defines `run` over them. The
 * state of a key is one string, `encode(state)`, written with `SET ... PX` (one command for the
 * value and its expiry). A key holding anything else (another type, text that is not a state) is
 * read as a fresh key and overwritten by the next write.
 *
 * Every call reads Redis's `TIME` first. A take carries a deadline in that clock (`args[7]`, set by
 * the store from an offset measured on earlier replies): one that Redis runs later answers `late`
 * and changes nothing, so a take that timed out at its caller is not applied when a paused or
 * overloaded Redis gets to it.
 *
 * Rules that keep the Lua bit-for-bit equal to the TypeScript:
 * - Every expression keeps the TypeScript's operand order and grouping; Lua numbers are the same
 *   IEEE doubles, so the same operations round the same way.
 * - Numbers are written as integers (`%d`) when whole, else with `%.17g`, which round-trips every
 *   double (Lua's `tostring` keeps 14 digits: a GCRA timestamp would come back a little off).
 * - Replies: Redis turns a Lua number into an integer, truncating it, so a number goes back as is
 *   only when it is whole (every delay on Redis time is), and as `%.17g` text otherwise.
 *
 * @module
 */

/**
 * Top-level helpers. Arguments of every limiter function: `keys[1]` the state key; `args[1]` the
 * operation (`take`, `peek`, `refund`), `args[2]` the cost, `args[3]` the time in epoch
 * milliseconds or `''` for Redis's own clock, `args[4]` the refund receipt or `''`, `args[5]` the
 * least TTL in milliseconds, `args[6]` how long a concurrency lease lasts (the in-flight TTL),
 * `args[7]` the deadline of a take in Redis epoch milliseconds or `''`, then the algorithm's
 * parameters from `args[8]`.
 */
export const HELPERS = `
-- Redis loads a library with no globals but redis: the library functions are bound on the first
-- call (every run() starts with 'if floor == nil then init() end').
local floor, ceil, max, min, format, match, tonumber, INF
local function init()
  floor, ceil, max, min = math.floor, math.ceil, math.max, math.min
  format, match, tonumber, INF = string.format, string.match, _G.tonumber, math.huge
end
local SAFE = 9007199254740992

-- A number as text that reads back as the same double: an integer when whole.
local function fmt(x)
  if x == floor(x) and x > -SAFE and x < SAFE then return format('%d', x) end
  return format('%.17g', x)
end
-- A reply number: as is when whole (Redis sends it as an integer), else as text.
local function out(x) if x == floor(x) then return x end return format('%.17g', x) end
local function num(s) if s == nil or s == false or s == '' then return nil end return tonumber(s) end
local function finite(x) return x == x and x ~= INF and x ~= -INF end

-- Redis's clock in epoch milliseconds, and its seconds and microseconds.
local function redisTime()
  local clock = redis.call('TIME')
  local seconds, micros = tonumber(clock[1]), tonumber(clock[2])
  return seconds * 1000 + floor(micros / 1000), seconds, micros
end

-- The string at key, or nil when there is none or the key holds another type.
local function getString(key)
  local v = redis.pcall('GET', key)
  if type(v) == 'string' then return v end
  return nil
end

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
 * `run(keys, args)` over an algorithm's part whose state is one string. Replies, each ending with
 * Redis's time in epoch milliseconds (for the store to measure its offset):
 * - take and peek: `{ allowed ('1'/'0'), limit, remaining, resetMs, retryAfterMs, delayMs or '',
 *   receipt or '', redis now }`, numbers as integers or `%.17g` text;
 * - a take run after its deadline: `{ 'late', redis now }`, nothing changed;
 * - refund: `{ 'ok', redis now }`.
 */
export const GENERIC = `
-- The memory store's write: delete a state that is fresh or expired, else keep it until it is.
local function save(key, state, now, c, minTtl)
  if state == nil then redis.call('DEL', key) return end
  local expires = expiresAt(state, c)
  if expires <= now then redis.call('DEL', key) return end
  redis.call('SET', key, encode(state), 'PX', max(ceil(expires - now), minTtl))
end

-- describe() of logic.ts.
local function describe(state, now, cost, c, redisNow)
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

local function run(keys, args)
  if floor == nil then init() end
  local redisNow = redisTime()
  local deadline = num(args[7])
  if deadline ~= nil and redisNow > deadline then return { 'late', redisNow } end
  local key, op, cost = keys[1], args[1], tonumber(args[2])
  local now = num(args[3]) or redisNow
  local minTtl = tonumber(args[5])
  local c = config(args)

  local stored = read(key)
  if op == 'refund' then
    if stored ~= nil then save(key, refund(stored, now, cost, num(args[4]), c), now, c, minTtl) end
    return { 'ok', redisNow }
  end
  local state, rebased = stored, false
  if stored ~= nil then state, rebased = rebase(stored, now, c) end
  if op == 'peek' then return describe(state, now, cost, c, redisNow) end

  -- take: decide() of logic.ts, then the memory store's write when the state changed.
  if available(state, now, c) < cost then
    if rebased then save(key, state, now, c, minTtl) end
    return describe(state, now, cost, c, redisNow)
  end
  local taken, receipt, delay = consume(state, now, cost, c)
  save(key, taken, now, c, minTtl)
  local remaining = available(taken, now, c)
  local most = limit(c)
  local reset = 0
  if remaining < most then reset = delayUntil(taken, now, remaining + 1, c) end
  local delayText, receiptText = '', ''
  if delay ~= nil then delayText = out(delay) end
  if receipt ~= nil then receiptText = fmt(receipt) end
  return { '1', out(most), out(remaining), out(reset), 0, delayText, receiptText, redisNow }
end
`;
