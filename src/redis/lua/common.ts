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
 * An algorithm's part defines, as local functions, those of an `AlgorithmLogic` that decide and
 * write (`rebase`, `available`, `consume`, `refund`, `expiresAt`) plus `config(args)` (its
 * parameters), `decode(text)` (nil for text that is not a state), `encode(state)` and
 * `fastTake(...)` (a take on the common path, the same functions inlined: nil hands it back);
 * then {@link GENERIC} defines `run` over them. The delays of a result are computed in Node from the
 * state (see {@link GENERIC}); the sliding log and the concurrency limit, whose state is not one
 * string, define their own `run`: the concurrency limit replies with its units in flight, the
 * sliding log with the whole result. The state of a key is one string, `encode(state)`, written with `SET ... PX` (one command for the
 * value and its expiry). A key holding anything else (another type, text that is not a state) is
 * read as a fresh key and overwritten by the next write.
 *
 * Every call reads Redis's `TIME` first. A take carries a deadline in that clock (`args[2]`, set by
 * the store from an offset measured on earlier replies): one that Redis runs later answers `late`
 * and changes nothing, so a take that timed out at its caller is not applied when a paused or
 * overloaded Redis gets to it.
 *
 * Rules that keep the Lua bit-for-bit equal to the TypeScript:
 * - Every expression keeps the TypeScript's operand order and grouping; Lua numbers are the same
 *   IEEE doubles, so the same operations round the same way.
 * - Numbers are written as integers (`%d`) when whole, else with `%.17g`, which round-trips every
 *   double (Lua's `tostring` keeps 14 digits: a GCRA timestamp would come back a little off).
 * - Replies are text (see {@link HELPERS}), their numbers written as the states' are.
 *
 * @module
 */

/**
 * Top-level helpers. Arguments of every limiter function: `keys[1]` the state key; `args[1]` the
 * operation and the limiter's configuration, `'<op> <least TTL ms> <lease ms> <parameter 1>
 * <parameter 2>'` (op: `take`, `peek` or `refund`; the lease: how long a concurrency lease lasts,
 * the in-flight TTL), parsed once per library load and kept (up to 1000 of them: one per
 * operation and limiter); `args[2]` the deadline of a take in Redis epoch milliseconds, `args[3]`
 * the cost (1 when absent), `args[4]` the time in epoch milliseconds (absent for Redis's own
 * clock), `args[5]` the refund receipt. Each of `args[2]` to `args[5]` may be `''` or left out
 * when absent (trailing ones are left out: each argument costs Redis about 1,200 instructions, a
 * tenth of an empty `FCALL`).
 *
 * Every reply is one string of fields separated by spaces, starting with a status and Redis's
 * clock as `TIME` gave it (`<status> <seconds> <microseconds> ...`): one bulk string costs Redis
 * and node-redis less than an array, and the clock goes out as Redis wrote it, unformatted.
 */
export const HELPERS = `
-- Redis loads a library with no globals but redis: the library functions are bound on the first
-- call (every run() starts with 'if floor == nil then init() end').
local floor, ceil, max, min, format, match, sub, tonumber, INF
local function init()
  floor, ceil, max, min = math.floor, math.ceil, math.max, math.min
  format, match, sub, tonumber, INF = string.format, string.match, string.sub, _G.tonumber, math.huge
end
local SAFE = 9007199254740992

-- Cost notes (Redis 7.0's Lua 5.1, instructions per operation, measured): tonumber(text) about
-- 1700 (it parses twice), text + 0 about 700 (once: used where the text is known to be a number,
-- Node's arguments and TIME's fields), format('%d') about 1700, '%.17g' about 5500, a number in a
-- concatenation about 3000 ('%.14g'), a table of two fields about 1500, a Lua call about 350.
-- A number given to redis.call is converted the same way as in a concatenation: arguments go
-- as text ('0', '-1', fmt(x)); a ZRANGE of '-1', '-1' costs 0.3 us less than one of -1, -1.

-- The text of the small integers, as format('%d') writes them, kept once written: counts and
-- token balances are written on every admission, and a table read costs a tenth of a format.
-- Bound: the integers from -SMALL_MAX to SMALL_MAX, at most 2 * SMALL_MAX + 1 short strings.
local SMALL_MAX = 4096
local small = {}

-- A number as text that reads back as the same double: an integer when whole. (x % 1 == 0 is
-- x == floor(x) for every finite x, without a call; infinities and NaN go to '%.17g' as before.)
local function fmt(x)
  if x % 1 == 0 and x > -SAFE and x < SAFE then
    if x >= -SMALL_MAX and x <= SMALL_MAX then
      local text = small[x]
      if text == nil then
        text = format('%d', x)
        small[x] = text
      end
      return text
    end
    return format('%d', x)
  end
  return format('%.17g', x)
end
-- An optional numeric argument from Node (a number's text, '' or absent for none).
local function num(s) if s == nil or s == false or s == '' then return nil end return s + 0 end
-- The cost of args[3]: 1 when absent.
local function costOf(s) if s == nil or s == '' then return 1 end return s + 0 end

-- Redis's clock in epoch milliseconds, and TIME's reply (seconds and microseconds, as text).
local function redisTime()
  local clock = redis.call('TIME')
  return clock[1] * 1000 + floor(clock[2] / 1000), clock
end
-- The start of a reply: its status and Redis's clock.
local function head(status, clock) return status .. ' ' .. clock[1] .. ' ' .. clock[2] end
-- A whole result (the sliding log's): '<1|0> <seconds> <micros> <limit> <remaining>
-- <reset> <retry> <receipt>', the receipt text or ''.
local function result(allowed, clock, limit, remaining, reset, retry, receipt)
  return head(allowed, clock) .. ' ' .. fmt(limit) .. ' ' .. fmt(remaining) .. ' ' .. fmt(reset)
    .. ' ' .. fmt(retry) .. ' ' .. receipt
end

-- The operation and configuration of args[1], '<op> <minTtl> <leaseMs> <p1> <p2>': make(p1, p2)
-- plus op, minTtl and leaseMs, kept in cache (one per algorithm, emptied past 1000 entries).
local function configOf(cache, text, make)
  local c = cache.entries[text]
  if c ~= nil then return c end
  local op, a, b, p, q = match(text, '^(%S+) (%S+) (%S+) (%S+) (%S+)$')
  c = make(tonumber(p), tonumber(q))
  c.op, c.minTtl, c.leaseMs = op, tonumber(a), tonumber(b)
  if cache.size >= 1000 then cache.entries, cache.size = {}, 0 end
  cache.entries[text] = c
  cache.size = cache.size + 1
  return c
end

local function windowStart(at, windowMs) return floor(at / windowMs) * windowMs end

-- The write of save() (GENERIC) for a state that expires after now: its text with its expiry.
-- keptUntil: when the key already expires, if known (a state this function wrote with its TTL);
-- a state that expires then too keeps that TTL (KEEPTTL costs Redis less than a new PX). Only on
-- Redis's clock: on the callers' clocks a write also renews the least TTL.
local function write(key, text, expires, now, c, keptUntil)
  if expires == keptUntil and c.minTtl == 0 then
    redis.call('SET', key, text, 'KEEPTTL')
  else
    local ttl = ceil(expires - now)
    if ttl < c.minTtl then ttl = c.minTtl end -- max(ceil(expires - now), c.minTtl)
    redis.call('SET', key, text, 'PX', fmt(ttl))
  end
end
`;

/**
 * `run(keys, args)` over an algorithm's part whose state is one string. The Lua decides and
 * writes; the numbers of the result (remaining, reset and retry delays) are computed by the store
 * in Node from the state the Lua decided on, with the algorithm's own TypeScript (`describe()` of
 * `logic.ts`): exact by construction, and no Lua spent on delays nobody may read. Replies (see
 * {@link HELPERS} for their form):
 * - an admitted take: `'1 <seconds> <micros> <state after it>'`, then ` <receipt>` for the
 *   algorithms that set `SENDS_RECEIPT` (the others' receipt, and every delay, the store derives
 *   from the state and the time, as `consume()` of `logic.ts` does);
 * - a peek or a rejected take: `'0 <seconds> <micros> <state>'` (state `''` for a fresh key), the
 *   state the decision saw (rebased to now);
 * - a take run after its deadline: `'late <seconds> <micros>'`, nothing changed;
 * - refund: `'ok <seconds> <micros>'`.
 *
 * A take goes to the algorithm's `fastTake` first, with the stored text as `GET` read it; it
 * decides, writes and replies exactly as the code below would, or returns nil without having
 * written anything (a state it does not read, a clock that went back), and the code below runs.
 */
export const GENERIC = `
local cache = { entries = {}, size = 0 }

-- The memory store's write: delete a state that is fresh or expired, else keep it until it is
-- (see write() for keptUntil). Returns the state's text ('' for none).
local function save(key, state, now, c, keptUntil)
  if state == nil then redis.call('DEL', key) return '' end
  local text = encode(state)
  local expires = expiresAt(state, c)
  if expires <= now then redis.call('DEL', key) return text end
  write(key, text, expires, now, c, keptUntil)
  return text
end

local function run(keys, args)
  if floor == nil then init() end
  local clock = redis.call('TIME')
  local redisNow = clock[1] * 1000 + floor(clock[2] / 1000)
  local deadline = args[2]
  if deadline ~= nil and deadline ~= '' and redisNow > deadline + 0 then
    return head('late', clock)
  end
  local c = cache.entries[args[1]] or configOf(cache, args[1], config)
  local key, op, cost = keys[1], c.op, args[3]
  if cost == nil or cost == '' then cost = 1 else cost = cost + 0 end -- costOf(), inlined
  local now = args[4]
  if now == nil or now == '' then now = redisNow else now = now + 0 end

  local text = redis.pcall('GET', key)
  -- The algorithm's own take on the common path (a state it can read, a clock that did not go
  -- back): the same decision, write and reply as below, with fewer calls and conversions.
  if op == 'take' then
    local reply = fastTake(key, clock, now, c, cost, text)
    if reply ~= nil then return reply end
  end
  -- The state the stored text holds (nil for none, another type, or text that is not a state: a
  -- fresh key).
  local stored = nil
  if type(text) == 'string' then stored = decode(text) end
  if stored == nil then text = '' end
  if op == 'refund' then
    if stored ~= nil then save(key, refund(stored, now, cost, num(args[5]), c), now, c) end
    return head('ok', clock)
  end
  local state, rebased = stored, false
  if stored ~= nil then state, rebased = rebase(stored, now, c) end
  if op == 'take' and available(state, now, c) >= cost then
    -- consume() of logic.ts, then the memory store's write.
    local taken, receipt = consume(state, now, cost, c)
    local keptUntil = nil
    if stored ~= nil and not rebased then keptUntil = expiresAt(stored, c) end
    text = save(key, taken, now, c, keptUntil)
    if SENDS_RECEIPT then return head('1', clock) .. ' ' .. text .. ' ' .. fmt(receipt) end
    return head('1', clock) .. ' ' .. text
  end
  -- A peek, or a rejected take: the state is written only when the clock went back (else the
  -- stored text is the state, unchanged).
  if rebased then
    if op == 'take' then text = save(key, state, now, c) else text = encode(state) end
  end
  return head('0', clock) .. ' ' .. text
end
`;
