/**
 * Learned limits: what the server said about its limits, kept per host and per policy, and the
 * rule that holds a request until the server will accept it. Pure functions over a plain JSON
 * state, so that a shared store can hold it for many processes.
 *
 * The rules, in order:
 *
 * 1. **Hold.** A 429, or a 503 with `Retry-After`, holds the whole host until the server's time
 *    (`Retry-After`, else the reset of an exhausted policy, else one second), plus a small positive
 *    jitter drawn once per hold. A hold is recorded for at most `maxHoldMs`, however long the
 *    server asked for: past it one probe goes (and the hold is armed again while it is out), so a
 *    wrong `Retry-After` (a timestamp sent as seconds) cannot keep the host shut for a year. The
 *    server's own end is kept apart (`holdBase`), so requests that cannot wait that long are still
 *    refused at once. Resets are capped the same way.
 * 2. **Cold start.** Until the host has answered once, at most `initialWindow` requests are in
 *    flight. A first answer that declares policies opens the gate to what they allow. An answer
 *    that declares nothing starts a gentle ramp: one more request in flight per round trip (TCP's
 *    congestion avoidance), because such a server reveals its limit only by refusing, and every
 *    request in flight when it does is refused too. A request counts against that window until it
 *    is answered, or for {@link staleMs} at most: twice the shortest answer time seen (at least
 *    100 ms), or 1 s before any answer. So a slow request (a long poll, a large upload) holds the
 *    others back for that long, not for its whole life, and a count lost with a failed store
 *    update heals by itself. The shortest time rather than a smoothed one: a long poll's answer
 *    time says nothing about the round trip, and would stretch the bound to its own length.
 * 3. **Declared policies.** For each policy the server reports, the client keeps an estimate of
 *    what is left: the reported `remaining` minus every unit still in flight (they may not have been
 *    counted yet), minus every unit sent since. A request goes only if every policy has room for its
 *    cost. A policy without room holds requests until its reset; after the reset, one probe goes
 *    (how much came back depends on the server's algorithm, which the headers do not say) and its
 *    answer tells the rest. A report is applied only if its request was sent after the one whose
 *    report was applied last, so answers that overtake each other never raise the estimate.
 *    A concurrency policy (`qu="concurrent-requests"`) counts slots: a request's slot comes back
 *    when it ends, and requests wait for that rather than for a time.
 * 4. **Blind limits.** A server that sends only `Retry-After` still teaches something: the number
 *    of requests it accepted before its 429 is its quota per window. The client keeps that as a
 *    policy of its own (`retry-after`): after the hold, that many go at once, then one at a time
 *    until the next 429 starts the next window, whose count becomes the next estimate. Once
 *    learned, about one 429 per window (the probe that finds the window's end).
 * 5. **Lost requests.** A request counts as in flight (against `remaining`, as a pending answer, as
 *    a probe out, as a concurrency slot) until it is answered, or until its own time is up: its
 *    attempt timeout plus a second, or `flightTtlMs` (60 s) without one, rounded up to a grain of
 *    a second or a thirty-second of that time. A process that dies with requests out (or a settle
 *    lost with a failed store update) cannot leave a shared state waiting forever for answers that
 *    will not come: past that time its requests are taken as lost. A live request without an
 *    attempt timeout that takes longer is taken as lost too: its units were counted by the server
 *    long before, but a concurrency slot it holds is given back early (the server's answer to the
 *    request that takes it corrects the estimate).
 *
 * @module
 */
import type { QuotaPolicy, RateLimitInfo } from '../../headers/types.js';
import { serverWait, type WaitJitter } from './backoff.js';

/** What the client knows about one of the server's policies. */
export interface PolicyState {
  /** The policy's key in the state: its name, or `#w<windowMs>` for an unnamed one. */
  key: string;
  /** The server's name for the policy, when it has one. */
  name?: string;
  /** Quota per window (IETF `q`). */
  limit?: number;
  /** Window length, in milliseconds. */
  windowMs?: number;
  /** Unit of the quota (`requests` unless the server says otherwise). */
  unit?: string;
  /** Units that may still be sent before `resetAt` (may go negative: the client is over). */
  remaining?: number;
  /** Epoch milliseconds at which the server makes more quota available. */
  resetAt?: number;
  /** Requests sent past the reset without a fresh report yet. */
  probes: number;
  /** When the last of those probes is taken as lost (rule 5), epoch milliseconds. */
  probesUntil?: number;
  /**
   * The server's reset, when it is further than `maxHoldMs` and `resetAt` was capped to that (a
   * probe goes at `resetAt`).
   */
  serverResetAt?: number;
  /** Learned from 429s alone, not declared by the server. */
  synthetic?: boolean;
}

/**
 * Requests in flight that are taken as lost at the same time (rule 5):
 * `[epoch milliseconds, requests, units]`.
 */
export type Flight = [number, number, number];

/** The learned state of one host. Plain JSON (no `Infinity`, no `undefined` required). */
export interface LimitsState {
  /** `cold`: no answer yet; `blind`: answers without policies; `declared`: the server reports. */
  mode: 'cold' | 'blind' | 'declared';
  /** Epoch milliseconds before which nothing is sent (0: no hold), jitter included. */
  holdUntil: number;
  /**
   * The server's own end of the hold, before jitter (what `maxRetryAfterMs` is compared with). Past
   * `holdUntil` when the hold was capped to `maxHoldMs`.
   */
  holdBase?: number;
  /** `seq` when the hold was set: an answer to a later request may end it. */
  holdSeq?: number;
  /** Requests allowed in flight while cold or ramping (its whole part counts); absent when open. */
  window?: number;
  /**
   * While `window` is set: when each request that still counts against it was sent, epoch
   * milliseconds. An entry goes when its request is answered or after {@link staleMs}.
   */
  young?: number[];
  /** While `window` is set: the shortest time an answer took, in milliseconds. */
  minRttMs?: number;
  /** Units in flight (the sum over `flights`, when it is kept). */
  inflight: number;
  /** Requests in flight (the sum over `flights`, when it is kept). */
  requests: number;
  /**
   * What is in flight, by when it is taken as lost, soonest first (see rule 5). An entry whose
   * time has come is dropped with what it counts.
   */
  flights?: Flight[];
  /** Set while some policy may have a probe out (so that pruning looks at probes only then). */
  probing?: boolean;
  /** Sequence number of the last request admitted. */
  seq: number;
  /** Sequence number of the request whose report was applied last. */
  applied: number;
  /** Blind mode: answers that were not 429 since the last 429 (or since the start). */
  successes: number;
  /**
   * Known policies, at most {@link MAX_POLICIES}. A list, not an object keyed by name: the names
   * come from the server, and a name like `__proto__` must stay a name.
   */
  policies: PolicyState[];
}

/** Parameters of learned limits. */
export interface LimitsConfig {
  /** Requests in flight before the host first answers; `undefined` turns cold start off. */
  initialWindow: number | undefined;
  /** Jitter added to every server-given hold. */
  jitter: WaitJitter;
  /**
   * Hold after a 429 that carries no timing at all, and wait before probing a spent policy whose
   * headers give no reset, in milliseconds. @default 1000
   */
  fallbackHoldMs: number;
  /**
   * Longest hold or reset recorded, in milliseconds; past it one probe goes. `undefined`: no cap.
   * @default max(maxRetryAfterMs, fallbackHoldMs)
   */
  maxHoldMs?: number;
  /**
   * How long a request without a time of its own counts as in flight, in milliseconds; past it
   * (rounded up, see {@link flightExpiry}) the request is taken as lost (see rule 5).
   * @default {@link FLIGHT_TTL_MS}
   */
  flightTtlMs?: number;
}

/** Default of `LimitsConfig.flightTtlMs`: a request unanswered for a minute is taken as lost. */
export const FLIGHT_TTL_MS = 60_000;

/**
 * When a request sent at `at` (epoch milliseconds) that may take `ttlMs` is taken as lost: `at +
 * ttlMs`, rounded up to a grain of a second or `ttlMs / 32`, whichever is longer, so that the
 * requests in flight fit in a few dozen entries whatever the time allowed.
 */
export function flightExpiry(at: number, ttlMs: number): number {
  const grain = Math.max(1000, Math.ceil(ttlMs / 32 / 1000) * 1000);
  return Math.ceil((at + ttlMs) / grain) * grain;
}

/** Why a request is held. */
export type HoldReason = 'retry-after' | 'learned-limit' | 'cold-start' | 'probe';

/** The verdict of {@link checkLimits}. `waitMs` undefined: until another request is answered. */
export type LimitsVerdict =
  | { ok: true }
  | {
      ok: false;
      waitMs: number | undefined;
      reason: HoldReason;
      policy?: string;
      /** The server's own wait, before the client's jitter, when it differs from `waitMs`. */
      serverWaitMs?: number;
    };

/** What {@link commitLimits} hands back, to be given to {@link settleLimits} with the answer. */
export interface LimitsTicket {
  /** The request's sequence number. */
  seq: number;
  /** Keys of the policies this request probes. */
  probed: string[];
  /** When it was sent, epoch milliseconds (absent when learning is off). */
  at?: number;
  /** When it is taken as lost if still unanswered, epoch milliseconds (see rule 5). */
  expires?: number;
}

/** An attempt's outcome, as learned limits need it. */
export interface LimitsAnswer extends LimitsTicket {
  /** The request's cost, in units. */
  cost: number;
  /** HTTP status, or undefined when the attempt got no response. */
  status?: number;
  /** The parsed rate-limit headers of the response. */
  info?: RateLimitInfo;
  /** When the response arrived, epoch milliseconds. */
  now: number;
  /** A number in [0, 1) for the hold's jitter. */
  random: number;
}

/**
 * Policies kept per host, at most: the most restrictive ones (see {@link mostRestrictiveFirst}). A
 * server may name a fresh policy on every answer; the client keeps this many, not all of them.
 */
export const MAX_POLICIES = 8;

/** The IETF unit of a concurrency limit: slots come back when requests end, not with time. */
const CONCURRENT = 'concurrent-requests';
/** Key of the policy learned from 429s alone. */
export const BLIND_POLICY = 'retry-after';
/** The ramp stops counting here: the window is open. */
const OPEN_WINDOW = 1024;
/** How long an unanswered request counts against the window before any answer, in ms. */
export const COLD_STALE_MS = 1000;
/** The least time a request counts against the window once answers have come, in ms. */
export const MIN_STALE_MS = 100;

/**
 * How long a request counts against the cold-start window or the ramp at most, in milliseconds:
 * twice the shortest answer time seen (at least {@link MIN_STALE_MS}), or {@link COLD_STALE_MS}
 * before any answer.
 */
export function staleMs(state: LimitsState): number {
  return state.minRttMs === undefined ? COLD_STALE_MS : Math.max(MIN_STALE_MS, 2 * state.minRttMs);
}

/** Ends the cold start or the ramp: nothing counts against a window any more. */
function openWindow(state: LimitsState): void {
  delete state.window;
  delete state.young;
  delete state.minRttMs;
}

/** A host nothing is known about. */
export function newLimits(config: LimitsConfig): LimitsState {
  const state: LimitsState = {
    mode: 'cold',
    holdUntil: 0,
    inflight: 0,
    requests: 0,
    seq: 0,
    applied: 0,
    successes: 0,
    policies: [],
  };
  if (config.initialWindow !== undefined) state.window = config.initialWindow;
  return state;
}

/** Whether a request of `cost` units may go now. Reads the state, changes nothing. */
export function checkLimits(state: LimitsState, cost: number, now: number): LimitsVerdict {
  if (state.holdUntil > now) {
    const waitMs = state.holdUntil - now;
    const serverWaitMs = Math.max(0, (state.holdBase ?? state.holdUntil) - now);
    return { ok: false, waitMs, reason: 'retry-after', serverWaitMs };
  }
  // Past `holdUntil`, a hold that was capped (`holdBase` still ahead) lets a request through:
  // `commitLimits` makes it the probe and arms the hold again while it is out.
  if (state.window !== undefined && state.young !== undefined) {
    const limit = Math.floor(state.window);
    if (state.young.length >= limit) {
      // Requests sent `staleMs` ago or more no longer count; the oldest that does frees first.
      const until = now - staleMs(state);
      let counted = 0;
      let oldest = Number.POSITIVE_INFINITY;
      for (const at of state.young) {
        if (at <= until) continue;
        counted++;
        if (at < oldest) oldest = at;
      }
      if (counted >= limit) {
        return { ok: false, waitMs: Math.max(1, oldest - until), reason: 'cold-start' };
      }
    }
  }
  let verdict: LimitsVerdict = { ok: true };
  for (const p of state.policies) {
    const key = p.key;
    if (p.remaining === undefined || p.remaining >= cost) continue;
    if (p.unit === CONCURRENT && state.requests > 0) {
      // Slots come back when requests in flight end, not with time.
      if (verdict.ok)
        verdict = { ok: false, waitMs: undefined, reason: 'learned-limit', policy: p.name ?? key };
    } else if (p.resetAt !== undefined && now < p.resetAt) {
      const waitMs = p.resetAt - now;
      if (verdict.ok || verdict.waitMs === undefined || waitMs > verdict.waitMs) {
        verdict = { ok: false, waitMs, reason: 'learned-limit', policy: p.name ?? key };
        if (p.serverResetAt !== undefined) verdict.serverWaitMs = p.serverResetAt - now;
      }
    } else if ((p.probes > 0 || state.requests > 0) && verdict.ok) {
      // One probe, sent when no other answer is pending (a pending answer may already tell).
      verdict = { ok: false, waitMs: undefined, reason: 'probe', policy: p.name ?? key };
    }
  }
  return verdict;
}

/**
 * Records that a request of `cost` units is sent at `now` (after {@link checkLimits} said yes),
 * counted in flight for `ttlMs` at most (default `config.flightTtlMs`; see rule 5).
 * When a capped hold has lapsed, this request is its probe: the hold is armed again, for at most
 * `maxHoldMs`, while it is out.
 */
export function commitLimits(
  state: LimitsState,
  cost: number,
  now: number,
  config?: LimitsConfig,
  ttlMs?: number,
): LimitsTicket {
  const expires = flightExpiry(now, ttlMs ?? config?.flightTtlMs ?? FLIGHT_TTL_MS);
  if (state.holdBase !== undefined && state.holdBase > now && state.holdUntil <= now) {
    const maxHold = config?.maxHoldMs ?? Number.POSITIVE_INFINITY;
    state.holdUntil = now + Math.min(state.holdBase - now, maxHold);
  }
  const probed: string[] = [];
  for (const p of state.policies) {
    if (p.remaining === undefined) continue;
    if (p.remaining >= cost) p.remaining -= cost;
    else {
      p.probes++;
      p.probesUntil = Math.max(p.probesUntil ?? 0, expires);
      state.probing = true;
      probed.push(p.key);
    }
  }
  if (state.window !== undefined) {
    const young = state.young ?? [];
    // Drop the entries that no longer count, in place.
    const until = now - staleMs(state);
    let kept = 0;
    for (const at of young) if (at > until) young[kept++] = at;
    young.length = kept;
    young.push(now);
    state.young = young;
  }
  addFlight(state, cost, expires);
  state.seq++;
  return { seq: state.seq, probed, at: now, expires };
}

/** Counts a request of `cost` units, taken as lost at `expires`, as in flight. */
function addFlight(state: LimitsState, cost: number, expires: number | undefined): void {
  state.inflight += cost;
  state.requests++;
  if (expires === undefined) return;
  const flights = state.flights;
  if (flights === undefined) {
    state.flights = [[expires, 1, cost]];
    return;
  }
  // Sorted by expiry; a request almost always belongs to the last entry or after it.
  let i = flights.length;
  while (i > 0 && (flights[i - 1] as Flight)[0] > expires) i--;
  const last = flights[i - 1];
  if (last !== undefined && last[0] === expires) {
    last[1]++;
    last[2] += cost;
  } else {
    flights.splice(i, 0, [expires, 1, cost]);
  }
}

/**
 * Stops counting a request of `cost` units, taken as lost at `expires`, as in flight. `false`
 * when it no longer counted: it was taken as lost ({@link pruneLimits}), which gave back what it
 * held.
 */
function removeFlight(state: LimitsState, cost: number, expires: number | undefined): boolean {
  const flights = state.flights;
  if (expires !== undefined && flights !== undefined) {
    let i = flights.length - 1;
    while (i >= 0 && (flights[i] as Flight)[0] > expires) i--;
    const flight = flights[i];
    if (flight === undefined || flight[0] !== expires) return false;
    flight[1]--;
    flight[2] -= cost;
    if (flight[1] <= 0) flights.splice(i, 1);
  }
  state.inflight = Math.max(0, state.inflight - cost);
  state.requests = Math.max(0, state.requests - 1);
  return true;
}

/**
 * Takes requests whose time is up as lost (rule 5): they stop counting in flight and give back
 * their concurrency slots, and probes out that long no longer hold their policy. Run it before
 * {@link checkLimits}; cheap when nothing is due (it looks at the soonest entry only).
 */
export function pruneLimits(state: LimitsState, now: number): void {
  const flights = state.flights;
  if (flights !== undefined && flights.length > 0 && (flights[0] as Flight)[0] <= now) {
    let requests = 0;
    let units = 0;
    let due = 0;
    for (const [expires, n, cost] of flights) {
      if (expires > now) break;
      requests += n;
      units += cost;
      due++;
    }
    flights.splice(0, due);
    state.requests = Math.max(0, state.requests - requests);
    state.inflight = Math.max(0, state.inflight - units);
    for (const p of state.policies) {
      if (p.unit === CONCURRENT && p.remaining !== undefined) p.remaining += units;
    }
  }
  if (state.probing) {
    let probing = false;
    for (const p of state.policies) {
      if (p.probes > 0 && (p.probesUntil === undefined || p.probesUntil <= now)) {
        p.probes = 0;
        delete p.probesUntil;
      }
      if (p.probes > 0) probing = true;
    }
    if (!probing) delete state.probing;
  }
}

function policyKey(q: QuotaPolicy): string {
  return q.name ?? (q.windowMs !== undefined ? `#w${q.windowMs}` : '#');
}

/** Sets a policy's reset `resetMs` from `now`, capped to `maxHoldMs` (see the module comment). */
function setReset(p: PolicyState, now: number, resetMs: number, maxHoldMs: number | undefined) {
  if (maxHoldMs !== undefined && resetMs > maxHoldMs) {
    p.resetAt = now + maxHoldMs;
    p.serverResetAt = now + resetMs;
  } else {
    p.resetAt = now + resetMs;
    delete p.serverResetAt;
  }
}

function applyPolicies(
  state: LimitsState,
  reported: readonly QuotaPolicy[],
  fresh: boolean,
  now: number,
  config: LimitsConfig,
  cost: number,
): void {
  const seen = new Set<string>();
  for (const q of reported) {
    const key = policyKey(q);
    seen.add(key);
    let p = findPolicy(state, key);
    if (!p) {
      p = { key, probes: 0 };
      state.policies.push(p);
    }
    if (q.name !== undefined) p.name = q.name;
    if (q.limit !== undefined) p.limit = q.limit;
    if (q.windowMs !== undefined) p.windowMs = q.windowMs;
    if (q.unit !== undefined) p.unit = q.unit;
    if (!fresh) continue;
    if (q.remaining !== undefined) {
      // A concurrency report was made while this request held a slot, which is free now.
      p.remaining = q.remaining - state.inflight + (p.unit === CONCURRENT ? cost : 0);
      p.probes = 0;
      if (q.resetMs !== undefined) setReset(p, now, q.resetMs, config.maxHoldMs);
      // No reset in the headers (Shopify's leaky bucket, Azure): when spent, wait a little before
      // probing rather than probing at once.
      else if (p.remaining <= 0 && p.unit !== CONCURRENT) {
        p.resetAt = now + config.fallbackHoldMs;
        delete p.serverResetAt;
      } else {
        delete p.resetAt;
        delete p.serverResetAt;
      }
    } else if (q.resetMs !== undefined) {
      setReset(p, now, q.resetMs, config.maxHoldMs);
    }
  }
  if (fresh) {
    // A policy the newest report no longer mentions is forgotten once its reset has passed, so a
    // policy the server stopped describing cannot hold the host forever.
    state.policies = state.policies.filter(
      (p) => seen.has(p.key) || (p.resetAt !== undefined && p.resetAt > now),
    );
  }
  if (state.policies.length > MAX_POLICIES) {
    state.policies.sort(mostRestrictiveFirst);
    state.policies.length = MAX_POLICIES;
  }
}

/** The policy kept under `key`, if any. */
export function findPolicy(state: LimitsState, key: string): PolicyState | undefined {
  for (const p of state.policies) if (p.key === key) return p;
  return undefined;
}

/**
 * Orders policies from the most to the least restrictive: a spent one first (the one that resets
 * last among those), then the smallest fraction left (`remaining / limit`, so requests and tokens
 * compare fairly), then the smallest `remaining`; a policy without a count last.
 */
export function mostRestrictiveFirst(a: PolicyState, b: PolicyState): number {
  const spentA = a.remaining !== undefined && a.remaining <= 0;
  const spentB = b.remaining !== undefined && b.remaining <= 0;
  if (spentA !== spentB) return spentA ? -1 : 1;
  if (spentA) return (b.resetAt ?? 0) - (a.resetAt ?? 0);
  if (a.remaining === undefined || b.remaining === undefined) {
    return a.remaining === undefined ? (b.remaining === undefined ? 0 : 1) : -1;
  }
  const fa = a.limit ? a.remaining / a.limit : Number.POSITIVE_INFINITY;
  const fb = b.limit ? b.remaining / b.limit : Number.POSITIVE_INFINITY;
  if (fa !== fb) return fa < fb ? -1 : 1;
  return a.remaining - b.remaining;
}

/** The server's timing for a pushback: `Retry-After`, else the reset of an exhausted policy. */
function pushbackWait(info: RateLimitInfo | undefined): number | undefined {
  if (info?.retryAfterMs !== undefined) return info.retryAfterMs;
  if (info?.remaining === 0 && info.resetMs !== undefined) return info.resetMs;
  return undefined;
}

/** Whether an answer is the server pushing back: a 429, or a 503 that says when to come back. */
export function isPushback(status: number, info: RateLimitInfo | undefined): boolean {
  return status === 429 || (status === 503 && info?.retryAfterMs !== undefined);
}

/**
 * Records a request that was sent with `ticket`, issued elsewhere (on a local copy of this state,
 * while a shared store was out of reach): the policies it probed there count a probe here, the
 * others spend its cost, and it is in flight unless its time is up already at `now` (then it is
 * taken as lost at once, as {@link pruneLimits} would). Its settle, given the same ticket, undoes
 * exactly that.
 */
export function recordLimits(
  state: LimitsState,
  cost: number,
  ticket: Pick<LimitsTicket, 'probed' | 'expires'>,
  now: number,
): void {
  const { probed, expires } = ticket;
  const lost = expires !== undefined && expires <= now;
  for (const p of state.policies) {
    if (p.remaining === undefined) continue;
    if (!probed.includes(p.key)) {
      // The server counted it; but a lost request holds no concurrency slot any more.
      if (!lost || p.unit !== CONCURRENT) p.remaining -= cost;
    } else if (!lost) {
      p.probes++;
      if (expires !== undefined) p.probesUntil = Math.max(p.probesUntil ?? 0, expires);
      state.probing = true;
    }
  }
  if (!lost) addFlight(state, cost, expires);
  state.seq++;
}

/** Takes an attempt's outcome into the state: frees its units, learns from its headers. */
export function settleLimits(state: LimitsState, answer: LimitsAnswer, config: LimitsConfig): void {
  // A request taken as lost has given back what it held already.
  if (removeFlight(state, answer.cost, answer.expires)) {
    for (const p of state.policies) {
      // A concurrency slot is given back when its request ends (a fresh report overrides below).
      if (p.unit === CONCURRENT && p.remaining !== undefined) p.remaining += answer.cost;
    }
  }
  for (const key of answer.probed) {
    const p = findPolicy(state, key);
    if (p) p.probes = Math.max(0, p.probes - 1);
  }
  const { status, info, now, at } = answer;
  if (state.young && at !== undefined) {
    const i = state.young.indexOf(at);
    if (i !== -1) state.young.splice(i, 1);
  }
  if (status === undefined) return;
  if (state.window !== undefined && at !== undefined && now >= at) {
    if (state.minRttMs === undefined || now - at < state.minRttMs) state.minRttMs = now - at;
  }
  const pushback = isPushback(status, info);
  const reported = info?.policies.filter((q) => q.remaining !== undefined || q.limit !== undefined);
  if (reported && reported.length > 0) {
    state.mode = 'declared';
    openWindow(state);
    state.policies = state.policies.filter((p) => p.key !== BLIND_POLICY);
    // Fresh: newer than the last report applied, and issued by this state. A sequence number the
    // state never issued (a shared state that expired, or was replaced by another process's copy,
    // while the request was out) would push `applied` past `seq` and make every later report look
    // old until `seq` caught up.
    const fresh = answer.seq > state.applied && answer.seq <= state.seq;
    if (fresh) state.applied = answer.seq;
    applyPolicies(state, reported, fresh, now, config, answer.cost);
  } else if (state.mode !== 'declared') {
    state.mode = 'blind';
    if (!pushback) {
      // Answers arriving during a hold are not counted: for a bucket they are partly refill, and
      // an estimate that is short costs a round trip where one that is long costs a 429.
      const blind = findPolicy(state, BLIND_POLICY);
      if (blind?.resetAt === undefined || now >= blind.resetAt) state.successes++;
      if (state.window !== undefined) {
        // A window's worth of answers adds one: +1 per round trip.
        state.window += 1 / Math.floor(state.window);
        if (state.window >= OPEN_WINDOW) openWindow(state);
      }
    }
  }
  if (!pushback) {
    // The server accepts again a request sent after the hold began: whatever is left of the
    // server's wait (a capped hold whose probe this was) is over.
    if (state.holdBase !== undefined && answer.seq > (state.holdSeq ?? 0)) {
      state.holdUntil = Math.min(state.holdUntil, now);
      delete state.holdBase;
      delete state.holdSeq;
    }
    return;
  }
  const wait = pushbackWait(info) ?? (status === 429 ? config.fallbackHoldMs : undefined);
  if (wait !== undefined) {
    const held = Math.min(wait, config.maxHoldMs ?? Number.POSITIVE_INFINITY);
    const until = now + serverWait(held, answer.random, config.jitter);
    if (until > state.holdUntil) {
      state.holdUntil = until;
      state.holdBase = now + wait;
      state.holdSeq = state.seq;
    }
  }
  if (status === 429 && state.mode === 'blind') {
    const blind = findPolicy(state, BLIND_POLICY);
    if (blind?.resetAt !== undefined && now < blind.resetAt) {
      // Another 429 of the same overshoot: the window's count is already taken.
      blind.resetAt = Math.max(blind.resetAt, state.holdUntil);
      return;
    }
    state.policies = state.policies.filter((p) => p.key !== BLIND_POLICY);
    state.policies.push({
      key: BLIND_POLICY,
      name: BLIND_POLICY,
      synthetic: true,
      remaining: state.successes,
      resetAt: Math.max(now, state.holdUntil),
      probes: 0,
    });
    state.successes = 0;
    openWindow(state);
  }
}
