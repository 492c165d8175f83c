/**
 * The sliding log on Redis, on a structure whose cost per decision does not grow with the limit.
 * `sliding-log.ts` in `src/server/algorithms` keeps a flat list of `[time, cost]` pairs; here the
 * same pairs are a sorted set, so that each decision is a few `O(log n)` commands instead of
 * reading and rewriting the whole list.
 *
 * @module
 */

/**
 * Parameters `limit`, `windowMs`.
 *
 * State: a sorted set with one member per pair of the TypeScript's list, scored with its time,
 * named with the running total of the costs up to and including it (an integer). The units of the
 * pairs after a time are the newest total minus the total at that time: one range lookup. When a
 * take drops the pairs that left the window (as `consume` does), the total of the last one stays
 * as the base, a member scored `-inf` (it is part of no pair). Times only grow on a forward clock;
 * the rare call whose time is before the newest pair (the algorithm's `rebase`: the whole log
 * shifts) reads the whole set and runs the TypeScript's arithmetic on the list, line for line.
 *
 * Cost per call on a forward clock: a take is 5 to 9 commands, each `O(log n)`; a rejected take
 * or a peek with a cost above 1 adds a binary search by rank (`O(log² n)`) for the exact retry
 * delay. A refund of the newest pair is a few commands; of an older pair it renames the pairs
 * after it.
 */
export const SLIDING_LOG = `
local cache = { entries = {}, size = 0 }
local function config(limit, windowMs) return { limit = limit, windowMs = windowMs } end

local function top(key)
  local v = redis.pcall('ZRANGE', key, -1, -1, 'WITHSCORES')
  if v.err ~= nil then
    redis.call('DEL', key)
    return nil, 0
  end
  if v[1] == nil then return nil, 0 end
  if v[2] == '-inf' then return nil, tonumber(v[1]) end
  return tonumber(v[2]), tonumber(v[1])
end

-- The total of the last member scored at most bound (text, may start with '('), and whether it is
-- a pair (not the base); 0 when there is none.
local function totalTo(key, bound)
  local v = redis.call('ZREVRANGEBYSCORE', key, bound, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if v[1] == nil then return 0, false end
  return tonumber(v[1]), v[2] ~= '-inf'
end

-- The time of the first pair after bound (text), or nil.
local function firstAfter(key, boundText)
  local v = redis.call('ZRANGEBYSCORE', key, '(' .. boundText, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if v[1] == nil then return nil, nil end
  return tonumber(v[2]), tonumber(v[1])
end

-- delayUntil() of sliding-log.ts: pairs leave oldest first; the first whose total reaches need.
local function delay(key, at, units, c, used, expiredTotal, newestTotal, boundText)
  local free = c.limit - used
  if free >= units then return 0 end
  local need = expiredTotal + units - free
  local t, total = firstAfter(key, boundText)
  if t == nil or newestTotal < need then return c.windowMs end
  if total >= need then return t + c.windowMs - at end
  local lo = redis.call('ZRANK', key, fmt(total)) + 1
  local hi = redis.call('ZCARD', key) - 1
  while lo < hi do
    local mid = lo + floor((hi - lo) / 2)
    if tonumber(redis.call('ZRANGE', key, mid, mid)[1]) >= need then hi = mid else lo = mid + 1 end
  end
  return tonumber(redis.call('ZRANGE', key, lo, lo, 'WITHSCORES')[2]) + c.windowMs - at
end

local function keep(key, expires, now, minTtl)
  if expires <= now then redis.call('DEL', key) return end
  redis.call('PEXPIRE', key, max(ceil(expires - now), minTtl))
end

-- The whole log as the TypeScript's list { t0, cost0, t1, cost1, ... }.
local function readAll(key)
  local v = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  local e, before = {}, 0
  for i = 1, #v, 2 do
    local total = tonumber(v[i])
    if v[i + 1] ~= '-inf' then
      e[#e + 1] = tonumber(v[i + 1])
      e[#e + 1] = total - before
    end
    before = total
  end
  return e
end

-- Replaces the set with the list e (totals from 0, no base).
local function writeAll(key, e, c, now, minTtl)
  redis.call('DEL', key)
  if #e == 0 then return end
  local args, total = {}, 0
  for i = 1, #e, 2 do
    total = total + e[i + 1]
    args[#args + 1] = fmt(e[i])
    args[#args + 1] = fmt(total)
    if #args >= 512 or i + 1 == #e then
      redis.call('ZADD', key, unpack(args))
      args = {}
    end
  end
  keep(key, e[#e - 1] + c.windowMs, now, minTtl)
end

-- The TypeScript's arithmetic on the list, for a clock that went back.
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
local function rebase(e, at)
  local shift = at - e[#e - 1]
  local shifted = {}
  for i = 1, #e do
    if i % 2 == 1 then shifted[i] = e[i] + shift else shifted[i] = e[i] end
  end
  return shifted
end
local function available(e, at, c) return max(0, c.limit - used(e, firstLive(e, at, c.windowMs))) end
local function delayUntil(e, at, units, c)
  local from = firstLive(e, at, c.windowMs)
  local free = c.limit - used(e, from)
  if free >= units then return 0 end
  for i = from, #e, 2 do
    free = free + e[i + 1]
    if free >= units then return e[i] + c.windowMs - at end
  end
  return c.windowMs
end
local function describeList(e, at, cost, c, redisNow)
  local free = available(e, at, c)
  local reset = 0
  if free < c.limit then reset = delayUntil(e, at, free + 1, c) end
  if free < cost then
    return { '0', out(c.limit), out(free), out(reset), out(delayUntil(e, at, cost, c)), '', '', redisNow }
  end
  return { '1', out(c.limit), out(free), out(reset), 0, '', '', redisNow }
end

-- A take or a peek at a time before the newest pair.
local function backwards(key, op, at, cost, c, minTtl, redisNow)
  local e = rebase(readAll(key), at)
  if op == 'peek' or available(e, at, c) < cost then
    if op == 'take' then writeAll(key, e, c, at, minTtl) end
    return describeList(e, at, cost, c, redisNow)
  end
  local taken = {}
  for i = firstLive(e, at, c.windowMs), #e do taken[#taken + 1] = e[i] end
  local last = #taken
  if last >= 2 and taken[last - 1] == at then taken[last] = taken[last] + cost
  else
    taken[last + 1] = at
    taken[last + 2] = cost
  end
  writeAll(key, taken, c, at, minTtl)
  local remaining = available(taken, at, c)
  local reset = 0
  if remaining < c.limit then reset = delayUntil(taken, at, remaining + 1, c) end
  return { '1', out(c.limit), out(remaining), out(reset), 0, '', fmt(at), redisNow }
end

-- refund() of sliding-log.ts: the take's own pair, found by its time, loses cost units (or goes).
local function refundPair(key, at, cost, receipt, c, minTtl)
  if top(key) == nil then
    redis.call('DEL', key)
    return
  end
  if receipt ~= nil then
    local r = fmt(receipt)
    local found = redis.call('ZRANGEBYSCORE', key, r, r)[1]
    if found ~= nil then
      local total = tonumber(found)
      local before = totalTo(key, '(' .. r)
      local units = total - before
      local gone = units
      redis.call('ZREM', key, found)
      if units - cost > 0 then
        gone = cost
        redis.call('ZADD', key, r, fmt(total - cost))
      end
      local after = redis.call('ZRANGEBYSCORE', key, '(' .. r, '+inf', 'WITHSCORES')
      for i = 1, #after, 2 do
        redis.call('ZREM', key, after[i])
        redis.call('ZADD', key, after[i + 1], fmt(tonumber(after[i]) - gone))
      end
    end
  end
  local newest = top(key)
  if newest == nil then redis.call('DEL', key) return end
  keep(key, newest + c.windowMs, at, minTtl)
end

local function run(keys, args)
  if floor == nil then init() end
  local redisNow = redisTime()
  local deadline = num(args[5])
  if deadline ~= nil and redisNow > deadline then return { 'late', redisNow } end
  local key, op, cost = keys[1], args[1], tonumber(args[2])
  local now = num(args[3]) or redisNow
  local c = configOf(cache, args[6], config)
  local minTtl = c.minTtl

  if op == 'refund' then
    refundPair(key, now, cost, num(args[4]), c, minTtl)
    return { 'ok', redisNow }
  end
  local newest, newestTotal = top(key)
  if newest ~= nil and now < newest then return backwards(key, op, now, cost, c, minTtl, redisNow) end

  local boundText = fmt(now - c.windowMs)
  local expiredTotal, dropped = totalTo(key, boundText)
  local used = 0
  if newest ~= nil then used = newestTotal - expiredTotal end
  local free = max(0, c.limit - used)
  if op == 'peek' or free < cost then
    local reset = 0
    if free < c.limit then
      reset = delay(key, now, free + 1, c, used, expiredTotal, newestTotal, boundText)
    end
    if free < cost then
      local retry = delay(key, now, cost, c, used, expiredTotal, newestTotal, boundText)
      return { '0', out(c.limit), out(free), out(reset), out(retry), '', '', redisNow }
    end
    return { '1', out(c.limit), out(free), out(reset), 0, '', '', redisNow }
  end

  -- take: consume() of sliding-log.ts. The first pair still in the window sets the reset.
  local first = firstAfter(key, boundText) or now
  if dropped then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', boundText)
    redis.call('ZADD', key, '-inf', fmt(expiredTotal))
  end
  if newest == now then redis.call('ZREM', key, fmt(newestTotal)) end
  redis.call('ZADD', key, fmt(now), fmt(newestTotal + cost))
  redis.call('PEXPIRE', key, max(ceil(now + c.windowMs - now), minTtl))
  local remaining = max(0, c.limit - (used + cost))
  return { '1', out(c.limit), out(remaining), out(first + c.windowMs - now), 0, '', fmt(now),
    redisNow }
end
`;
