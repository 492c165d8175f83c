/**
 * The concurrency limit on Redis: the one place where the Lua is not the TypeScript transcribed.
 * `concurrency-limit.ts` counts units in flight, which in one process cannot leak (a release there
 * cannot time out or be lost while the process lives). Across processes it can: a process dies
 * holding slots, a take or a release times out. So here each take is a lease that expires on its
 * own, and a lost release costs its slots for at most the lease's duration, however busy the key.
 *
 * @module
 */

/**
 * Parameters `limit`, `retryAfterMs` (and the lease duration).
 *
 * State: a sorted set with one member per lease, `<lease>:<units>` (`<lease>` the receipt, a
 * number unique in the key, from Redis's clock in microseconds), scored with the moment the lease
 * ends. The units in flight are the leases plus their units beyond the first, kept (only while
 * some lease holds more than one unit) as the member `n`, scored with minus that sum (negative, so
 * it sorts before every lease and no range of lease ends reaches it): a take of one unit is a
 * `ZCARD` and a `ZADD` (and a `ZRANGE` of the first two members when the key holds any, to drop
 * the leases that ended), its release one `ZREM`. Leases that ended are dropped whenever a take or a
 * peek reads the key; the key itself expires with its last lease. A release with a receipt removes
 * that lease (no read-back, no `TIME`: its reply is `'ok'` alone); one without (a `release`
 * that does not know its take) ends the units whose leases end first. The decisions are the
 * TypeScript's: units in flight are those of the live leases, and `available`, `delayUntil` and
 * the replies are computed from them exactly as there.
 */
export const CONCURRENCY = `
local cache = { entries = {}, size = 0 }
local function config(limit, retryAfterMs) return { limit = limit, retryAfterMs = retryAfterMs } end

local function unitsOf(member) return tonumber(match(member, ':(%d+)$')) or 1 end

-- Adds delta to the units beyond the first of each lease (member n); deletes n at zero.
local function addExtra(key, delta)
  if delta == 0 then return end
  local n = tonumber(redis.call('ZINCRBY', key, fmt(-delta), 'n'))
  if n >= 0 then redis.call('ZREM', key, 'n') end
end

-- Units in flight at at, after dropping the leases that ended by then. A key of another type is
-- deleted: no lease. The count first: an empty key (no slot held, the common case of a take) is
-- one ZCARD, which costs Redis a fraction of a ZRANGE (no reply to build, no scores to format).
local function inFlight(key, at)
  local leases = redis.pcall('ZCARD', key)
  if type(leases) ~= 'number' then
    redis.call('DEL', key)
    return 0
  end
  if leases == 0 then return 0 end
  local head = redis.call('ZRANGE', key, '0', '1', 'WITHSCORES')
  local extra, first = 0, 1
  if head[1] == 'n' then
    extra = -tonumber(head[2])
    first = 3
  end
  if head[first] == nil then return 0 end
  if head[first + 1] + 0 <= at then
    local bound = fmt(at)
    local ended = redis.call('ZRANGEBYSCORE', key, '0', bound)
    local gone = 0
    for i = 1, #ended do gone = gone + unitsOf(ended[i]) - 1 end
    redis.call('ZREMRANGEBYSCORE', key, '0', bound)
    addExtra(key, -gone)
    extra = extra - gone
    leases = redis.call('ZCARD', key)
  end
  if extra > 0 then leases = leases - 1 end
  return max(0, leases + max(0, extra))
end

-- Ends units of the leases that end first, up to cost.
local function releaseFirst(key, at, cost)
  inFlight(key, at)
  local left = cost
  local gone = 0
  local leases = redis.call('ZRANGEBYSCORE', key, '0', '+inf', 'WITHSCORES', 'LIMIT', '0', fmt(cost))
  for i = 1, #leases, 2 do
    if left == 0 then break end
    local member = leases[i]
    local units = unitsOf(member)
    redis.call('ZREM', key, member)
    if units > left then
      redis.call('ZADD', key, leases[i + 1], match(member, '^(.*):') .. ':' .. fmt(units - left))
      gone = gone + left
      left = 0
    else
      gone = gone + units - 1
      left = left - units
    end
  end
  addExtra(key, -gone)
end

local function run(keys, args)
  if floor == nil then init() end
  local c = configOf(cache, args[1], config)
  local key, op, cost = keys[1], c.op, costOf(args[3])
  local receipt = num(args[5])
  -- A release of a known lease needs no clock: no TIME, no read. Its member is named as the take
  -- named it; a lease of one unit from the receipt's own text when that is the lease's text (an
  -- integer as Node writes it: digits, no leading zero), without formatting it again.
  if op == 'refund' and receipt ~= nil then
    local member
    if cost == 1 and match(args[5], '^[1-9]%d*$') then member = args[5] .. ':1'
    else member = fmt(receipt) .. ':' .. fmt(cost) end
    if redis.call('ZREM', key, member) == 1 then addExtra(key, -(cost - 1)) end
    return 'ok'
  end
  local redisNow, clock = redisTime()
  local deadline = num(args[2])
  if deadline ~= nil and redisNow > deadline then return head('late', clock) end
  local given = num(args[4])
  local now = given or redisNow
  local most = c.limit

  if op == 'refund' then
    releaseFirst(key, now, cost)
    return head('ok', clock)
  end

  local units = inFlight(key, now)
  if op == 'peek' or max(0, most - units) < cost then return head('0', clock) .. ' ' .. fmt(units) end

  -- The lease: Redis's clock in microseconds, its text TIME's two fields side by side (the
  -- microseconds padded to six digits: fmt(seconds * 1000000 + micros), without the arithmetic
  -- and the format); the next free number when that one is taken (two takes in one microsecond).
  local micros = clock[2]
  local leaseText = clock[1] .. sub('00000', #micros) .. micros
  local units1 = fmt(cost)
  local ends = now + c.leaseMs
  local score = fmt(ends)
  if redis.call('ZADD', key, 'NX', score, leaseText .. ':' .. units1) == 0 then
    local lease = leaseText + 0
    repeat
      lease = lease + 1
    until redis.call('ZADD', key, 'NX', score, fmt(lease) .. ':' .. units1) == 1
    leaseText = fmt(lease)
  end
  if cost ~= 1 then addExtra(key, cost - 1) end
  -- The key lasts as long as its last lease. On Redis's clock the new lease is the last, and its
  -- TTL is the lease's duration (an integer: now and leaseMs are), kept as text per limiter; on
  -- the callers' clocks an earlier lease may end later (a clock that went back).
  if given == nil then
    local ttl = c.leaseTtl
    if ttl == nil then
      ttl = fmt(max(ceil(ends - now), c.minTtl))
      c.leaseTtl = ttl
    end
    redis.call('PEXPIRE', key, ttl)
  else
    local last = max(ends, tonumber(redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')[2]))
    redis.call('PEXPIRE', key, fmt(max(ceil(last - now), c.minTtl)))
  end
  return head('1', clock) .. ' ' .. fmt(units + cost) .. ' ' .. leaseText
end
`;
