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
 * named `<total>:<cost>`: the running total of the costs up to and including it, and its own cost
 * (integers). The units of the pairs still in the window are the newest total minus the total
 * before the first of them (its total minus its cost): two range lookups, whatever the number of
 * pairs. The pairs that left the window take no part in a decision (the first pair in the window
 * is found by its time, whatever is before it), so a take drops them (as `consume` does) with one
 * range delete only once every `limit` units admitted (when the running total passes a multiple
 * of the limit): the set holds at most `limit` pairs more than the TypeScript's list can (those
 * live at the last drop, and those added since), and most admitted takes save the command. A refund drops them first (the TypeScript's list no longer
 * has them: its refund cannot find them, and once the newest pair is refunded away a take at an
 * earlier time must not see them).
 * Times only grow on a forward clock; the rare call whose time is before the newest pair (the
 * algorithm's `rebase`: the whole log shifts) reads the whole set and runs the TypeScript's
 * arithmetic on the list, line for line.
 *
 * Cost per call on a forward clock: an admitted take is 5 or 6 commands (7 when it drops the pairs
 * that left the window), a rejected one 3, each
 * `O(log n)`; a rejection or a peek whose retry is not the first pair's expiry adds a binary search
 * by rank (`O(log² n)`). A refund of the newest pair is a few commands; of an older pair it renames
 * the pairs after it.
 */
export const SLIDING_LOG = `
local cache = { entries = {}, size = 0 }
local function config(limit, windowMs) return { limit = limit, windowMs = windowMs } end

-- A member '<total>:<cost>'; nil for text that is not one. (The digits are read with + 0: a
-- third of tonumber's cost.)
local function pair(member)
  local total, cost = match(member, '^(%d+):(%d+)$')
  if total == nil then return nil, nil end
  return total + 0, cost + 0
end
local function name(total, cost) return fmt(total) .. ':' .. fmt(cost) end

-- The newest pair: its time, total and member; nil, 0 when there is none. A key of another type,
-- or one whose members are not pairs, is deleted: no pair.
local function top(key)
  local v = redis.pcall('ZRANGE', key, '-1', '-1', 'WITHSCORES')
  if v.err == nil and v[1] == nil then return nil, 0, nil end
  local total = v.err == nil and pair(v[1])
  if not total then
    redis.call('DEL', key)
    return nil, 0, nil
  end
  return v[2] + 0, total, v[1]
end

-- delayUntil() of sliding-log.ts: pairs leave oldest first; the first whose total reaches need.
local function delay(key, at, units, c, used, expiredTotal, newestTotal, first, firstTotal, boundText)
  local free = c.limit - used
  if free >= units then return 0 end
  local need = expiredTotal + units - free
  if first == nil or newestTotal < need then return c.windowMs end
  if firstTotal >= need then return first + c.windowMs - at end
  local lo = redis.call('ZCOUNT', key, '-inf', boundText) + 1
  local hi = redis.call('ZCARD', key) - 1
  while lo < hi do
    local mid = lo + floor((hi - lo) / 2)
    if pair(redis.call('ZRANGE', key, fmt(mid), fmt(mid))[1]) >= need then hi = mid else lo = mid + 1 end
  end
  return tonumber(redis.call('ZRANGE', key, fmt(lo), fmt(lo), 'WITHSCORES')[2]) + c.windowMs - at
end

local function keep(key, expires, now, minTtl)
  if expires <= now then redis.call('DEL', key) return end
  redis.call('PEXPIRE', key, fmt(max(ceil(expires - now), minTtl)))
end

-- The whole log as the TypeScript's list { t0, cost0, t1, cost1, ... }.
local function readAll(key)
  local v = redis.call('ZRANGE', key, '0', '-1', 'WITHSCORES')
  local e = {}
  for i = 1, #v, 2 do
    local _, cost = pair(v[i])
    e[#e + 1] = tonumber(v[i + 1])
    e[#e + 1] = cost
  end
  return e
end

-- Replaces the set with the list e (totals from 0).
local function writeAll(key, e, c, now, minTtl)
  redis.call('DEL', key)
  if #e == 0 then return end
  local args, total = {}, 0
  for i = 1, #e, 2 do
    total = total + e[i + 1]
    args[#args + 1] = fmt(e[i])
    args[#args + 1] = name(total, e[i + 1])
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
local function describeList(e, at, cost, c, clock)
  local free = available(e, at, c)
  local reset = 0
  if free < c.limit then reset = delayUntil(e, at, free + 1, c) end
  if free < cost then return result('0', clock, c.limit, free, reset, delayUntil(e, at, cost, c), '') end
  return result('1', clock, c.limit, free, reset, 0, '')
end

-- A take or a peek at a time before the newest pair.
local function backwards(key, op, at, cost, c, minTtl, clock)
  local e = rebase(readAll(key), at)
  if op == 'peek' or available(e, at, c) < cost then
    if op == 'take' then writeAll(key, e, c, at, minTtl) end
    return describeList(e, at, cost, c, clock)
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
  return result('1', clock, c.limit, remaining, reset, 0, fmt(at))
end

-- refund() of sliding-log.ts: the take's own pair, found by its time, loses cost units (or goes).
local function refundPair(key, at, cost, receipt, c, minTtl)
  local newest = top(key)
  if newest == nil then return end
  -- First the pairs that left the window by the newest pair's time, which a take may have left
  -- (see run()): the list of sliding-log.ts no longer holds them, so its refund cannot find them;
  -- and once a refund removed the newest pair, a take at an earlier time would see them again.
  redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(newest - c.windowMs))
  if receipt ~= nil then
    local r = fmt(receipt)
    local found = redis.call('ZRANGEBYSCORE', key, r, r)[1]
    if found ~= nil then
      local total, units = pair(found)
      local gone = units
      redis.call('ZREM', key, found)
      if units - cost > 0 then
        gone = cost
        redis.call('ZADD', key, r, name(total - cost, units - cost))
      end
      local after = redis.call('ZRANGEBYSCORE', key, '(' .. r, '+inf', 'WITHSCORES')
      for i = 1, #after, 2 do
        local t, u = pair(after[i])
        redis.call('ZREM', key, after[i])
        redis.call('ZADD', key, after[i + 1], name(t - gone, u))
      end
    end
  end
  newest = top(key)
  if newest == nil then redis.call('DEL', key) return end
  keep(key, newest + c.windowMs, at, minTtl)
end

-- The texts of now - windowMs and of now, kept for the next call: every call in the same
-- millisecond (and window) shares them, and a format costs more than the comparison.
local boundAt, boundWindow, boundText = nil, nil, nil
local nowAt, nowText = nil, nil
local function boundOf(now, windowMs)
  if now ~= boundAt or windowMs ~= boundWindow then
    boundAt, boundWindow, boundText = now, windowMs, fmt(now - windowMs)
  end
  return boundText
end
local function textOf(now)
  if now ~= nowAt then nowAt, nowText = now, fmt(now) end
  return nowText
end

-- delay() of a decision whose answer follows from the first pair in the window (the common
-- case: it alone frees enough), inlined; delay() itself otherwise.
local function delayOf(key, at, units, c, used, expiredTotal, newestTotal, first, firstTotal, bound)
  local free = c.limit - used
  if free >= units then return 0 end
  local need = expiredTotal + units - free
  if first == nil or newestTotal < need then return c.windowMs end
  if firstTotal >= need then return first + c.windowMs - at end
  return delay(key, at, units, c, used, expiredTotal, newestTotal, first, firstTotal, bound)
end

local function run(keys, args)
  if floor == nil then init() end
  -- redisTime(), num() and costOf(), inlined.
  local clock = redis.call('TIME')
  local redisNow = clock[1] * 1000 + floor(clock[2] / 1000)
  local deadline = args[2]
  if deadline ~= nil and deadline ~= '' and redisNow > deadline + 0 then
    return head('late', clock)
  end
  local c = cache.entries[args[1]] or configOf(cache, args[1], config)
  local key, op, cost = keys[1], c.op, args[3]
  if cost == nil or cost == '' then cost = 1 else cost = cost + 0 end
  local now = args[4]
  if now == nil or now == '' then now = redisNow else now = now + 0 end
  local minTtl = c.minTtl

  if op == 'refund' then
    refundPair(key, now, cost, num(args[5]), c, minTtl)
    return head('ok', clock)
  end
  -- top(), inlined: the newest pair's time, total, units and member (none: nil, 0).
  local newest, newestTotal, newestUnits, newestMember = nil, 0, nil, nil
  local v = redis.pcall('ZRANGE', key, '-1', '-1', 'WITHSCORES')
  if v.err ~= nil then
    redis.call('DEL', key)
  elseif v[1] ~= nil then
    local total, units = match(v[1], '^(%d+):(%d+)$')
    if total == nil then
      redis.call('DEL', key)
    else
      newest, newestTotal, newestUnits, newestMember = v[2] + 0, total + 0, units + 0, v[1]
    end
  end
  if newest ~= nil and now < newest then return backwards(key, op, now, cost, c, minTtl, clock) end

  local windowMs = c.windowMs
  local bound = boundOf(now, windowMs)
  -- firstAfter(), inlined: the first pair in the window.
  local first, firstTotal, firstCost
  if newest ~= nil then
    v = redis.call('ZRANGEBYSCORE', key, '(' .. bound, '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
    if v[1] ~= nil then
      local total, units = match(v[1], '^(%d+):(%d+)$')
      first, firstTotal, firstCost = v[2] + 0, total + 0, units + 0
    end
  end
  -- The total before the first pair in the window: every pair's, when none is.
  local expiredTotal = newestTotal
  if first ~= nil then expiredTotal = firstTotal - firstCost end
  local used = newestTotal - expiredTotal
  local limit = c.limit
  local free = max(0, limit - used)
  if op == 'peek' or free < cost then
    local reset = 0
    if free < limit then
      reset = delayOf(key, now, free + 1, c, used, expiredTotal, newestTotal, first, firstTotal, bound)
    end
    if free < cost then
      local retry = delayOf(key, now, cost, c, used, expiredTotal, newestTotal, first, firstTotal,
        bound)
      return result('0', clock, limit, free, reset, retry, '')
    end
    return result('1', clock, limit, free, reset, 0, '')
  end

  -- take: consume() of sliding-log.ts. The first pair still in the window sets the reset.
  -- consume() drops the pairs that left the window; here they go once every limit units
  -- admitted (when the running total passes a multiple of the limit): the pairs before the
  -- first in the window take no part in any decision, so they may stay a while (see the
  -- module's notes for the bound).
  if newest ~= nil and floor((newestTotal + cost) / limit) ~= floor(newestTotal / limit) then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', bound)
  end
  local at = textOf(now)
  if newest == now then
    redis.call('ZREM', key, newestMember)
    redis.call('ZADD', key, at, name(newestTotal + cost, newestUnits + cost))
  else
    redis.call('ZADD', key, at, name(newestTotal + cost, cost))
  end
  -- The TTL as text (fmt: a window of up to 4096 ms is a table read, not a format).
  redis.call('PEXPIRE', key, fmt(max(ceil(now + windowMs - now), minTtl)))
  local remaining = max(0, limit - (used + cost))
  return result('1', clock, limit, remaining, (first or now) + windowMs - now, 0, at)
end
`;
