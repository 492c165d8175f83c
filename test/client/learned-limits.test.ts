import { describe, expect, it } from 'vitest';
import {
  BLIND_POLICY,
  checkLimits,
  commitLimits,
  findPolicy,
  flightExpiry,
  type LimitsConfig,
  type LimitsState,
  type LimitsTicket,
  newLimits,
  pruneLimits,
  recordLimits,
  settleLimits,
} from '../../src/client/policies/learned-limits.js';
import { parseRateLimitHeaders } from '../../src/headers/index.js';

const config: LimitsConfig = {
  initialWindow: 1,
  jitter: { ratio: 0.05, maxMs: 1000 },
  fallbackHoldMs: 1000,
};
const open: LimitsConfig = { ...config, initialWindow: undefined };

function send(s: LimitsState, now: number, cost = 1, c = config): LimitsTicket {
  const verdict = checkLimits(s, cost, now);
  if (!verdict.ok) throw new Error(`held: ${JSON.stringify(verdict)}`);
  return commitLimits(s, cost, now, c);
}

function answer(
  s: LimitsState,
  ticket: LimitsTicket,
  status: number,
  headers: Record<string, string>,
  now: number,
  c = config,
) {
  settleLimits(
    s,
    {
      ...ticket,
      cost: 1,
      status,
      info: parseRateLimitHeaders(headers, { now }),
      now,
      random: 0.5,
    },
    c,
  );
}

const ietf = (r: number, t: number, q = 10, w = 1) => ({
  'ratelimit-policy': `"s";q=${q};w=${w}`,
  ratelimit: `"s";r=${r};t=${t}`,
});

describe('cold start', () => {
  it('lets one request go, holds the rest until the host answers, then opens to what it declares', () => {
    const s = newLimits(config);
    const first = send(s, 0);
    // Until it answers, or for a second at most.
    expect(checkLimits(s, 1, 0)).toEqual({ ok: false, waitMs: 1000, reason: 'cold-start' });
    answer(s, first, 200, ietf(9, 1), 10);
    expect(s.mode).toBe('declared');
    for (let i = 0; i < 9; i++) send(s, 10);
    expect(checkLimits(s, 1, 10)).toMatchObject({
      ok: false,
      reason: 'learned-limit',
      policy: 's',
    });
  });

  it('can be turned off', () => {
    const s = newLimits(open);
    for (let i = 0; i < 50; i++) send(s, 0);
  });

  it('ramps up a host that declares nothing: one more in flight per round trip', () => {
    const s = newLimits(config);
    let inFlight = [send(s, 0)];
    const rounds: number[] = [];
    for (let round = 0; round < 5; round++) {
      for (const t of inFlight) answer(s, t, 200, {}, 1);
      inFlight = [];
      while (checkLimits(s, 1, 1).ok) inFlight.push(commitLimits(s, 1, 1, config));
      rounds.push(inFlight.length);
    }
    expect(rounds).toEqual([2, 3, 4, 5, 6]);
    expect(s.mode).toBe('blind');
  });

  it('a request unanswered for a second stops holding the others back, before any answer', () => {
    const s = newLimits(config);
    send(s, 0); // a slow first request: a long poll
    expect(checkLimits(s, 1, 999)).toMatchObject({ ok: false, waitMs: 1, reason: 'cold-start' });
    send(s, 1000);
    expect(checkLimits(s, 1, 1500)).toMatchObject({ ok: false, waitMs: 500 });
  });

  it('once answers came, a request counts for twice the shortest answer time (at least 100 ms)', () => {
    const s = newLimits(config);
    answer(s, send(s, 0), 200, {}, 40); // 40 ms: bound 80 ms, so 100
    const window = Math.floor(s.window ?? 0);
    const slow = Array.from({ length: window }, () => send(s, 100));
    expect(checkLimits(s, 1, 150)).toMatchObject({ ok: false, waitMs: 50, reason: 'cold-start' });
    expect(checkLimits(s, 1, 200).ok).toBe(true);
    answer(s, send(s, 300), 200, {}, 310); // 10 ms: the bound stays 100 ms
    expect(s.minRttMs).toBe(10);
    for (const t of slow) answer(s, t, 200, {}, 5000); // long polls: no effect on the bound
    expect(s.minRttMs).toBe(10);
    expect(s.young).toEqual([]);
  });

  it('a request whose answer was never taken in (a store that failed) stops counting by itself', () => {
    const s = newLimits(config);
    send(s, 0); // never settled
    expect(checkLimits(s, 1, 500).ok).toBe(false);
    expect(checkLimits(s, 1, 1000).ok).toBe(true);
  });

  it('opens the window for good past 1024', () => {
    const s = newLimits(config);
    s.window = 1023.9995;
    answer(s, send(s, 0), 200, {}, 1);
    expect(s.window).toBeUndefined();
  });
});

describe('waits longer than maxHoldMs', () => {
  const capped: LimitsConfig = { ...open, maxHoldMs: 60_000 };
  const year = 31_622_400_000;

  it('a hold is recorded for maxHoldMs at most, keeps the server wait, and lets one probe go after', () => {
    const s = newLimits(capped);
    answer(s, send(s, 0, 1, capped), 503, { 'retry-after': String(year / 1000) }, 0, capped);
    expect(s.holdUntil).toBeLessThanOrEqual(60_000 + 1000);
    expect(checkLimits(s, 1, 30_000)).toMatchObject({
      ok: false,
      reason: 'retry-after',
      serverWaitMs: year - 30_000,
    });
    const at = s.holdUntil;
    const probe = send(s, at, 1, capped);
    // While the probe is out, the hold is armed again.
    expect(checkLimits(s, 1, at + 1)).toMatchObject({ ok: false, reason: 'retry-after' });
    expect(s.holdUntil).toBe(at + 60_000);
    answer(s, probe, 200, {}, at + 10, capped);
    expect(checkLimits(s, 1, at + 10).ok).toBe(true);
    expect(s.holdBase).toBeUndefined();
  });

  it('a probe refused again holds again, for maxHoldMs at most', () => {
    const s = newLimits(capped);
    answer(s, send(s, 0, 1, capped), 429, { 'retry-after': '86400' }, 0, capped);
    const probe = send(s, s.holdUntil, 1, capped);
    const at = s.holdUntil;
    answer(s, probe, 429, { 'retry-after': '86400' }, at, capped);
    expect(s.holdUntil).toBeGreaterThan(at);
    expect(s.holdUntil).toBeLessThanOrEqual(at + 61_000);
  });

  it('an answer to a request sent before the hold does not end it', () => {
    const s = newLimits(capped);
    const early = send(s, 0, 1, capped);
    answer(s, send(s, 0, 1, capped), 429, { 'retry-after': '86400' }, 1, capped);
    answer(s, early, 200, {}, 2, capped);
    expect(checkLimits(s, 1, 2)).toMatchObject({ ok: false, reason: 'retry-after' });
  });

  it('a reset is recorded for maxHoldMs at most, then a probe goes', () => {
    const s = newLimits(capped);
    answer(
      s,
      send(s, 0, 1, capped),
      200,
      { 'ratelimit-policy': '"day";q=10;w=86400', ratelimit: `"day";r=0;t=${year / 1000}` },
      0,
      capped,
    );
    expect(checkLimits(s, 1, 1)).toMatchObject({
      ok: false,
      reason: 'learned-limit',
      waitMs: 59_999,
      serverWaitMs: year - 1,
    });
    expect(send(s, 60_000, 1, capped).probed).toEqual(['day']);
  });
});

describe('declared policies', () => {
  it('counts requests in flight against what the server says is left', () => {
    const s = newLimits(open);
    const tickets = [send(s, 0), send(s, 0), send(s, 0)];
    answer(s, tickets[0] as LimitsTicket, 200, ietf(5, 1), 1, open);
    // 5 left, 2 still in flight that the server may not have counted yet.
    expect(findPolicy(s, 's')?.remaining).toBe(3);
  });

  it('never raises its estimate from an answer that overtook a newer one', () => {
    const s = newLimits(open);
    const a = send(s, 0);
    const b = send(s, 0);
    answer(s, b, 200, ietf(4, 1), 1, open); // newer request, reported first
    expect(findPolicy(s, 's')?.remaining).toBe(3);
    answer(s, a, 200, ietf(5, 1), 2, open); // older report arrives late: ignored
    expect(findPolicy(s, 's')?.remaining).toBe(3);
  });

  it('ignores a report whose request this state never admitted, so later reports still count', () => {
    // A shared state that expired (or a local copy's request settled on the shared state) while
    // the request was out: its ticket's number is ahead of the state's own.
    const s = newLimits(open);
    answer(s, { seq: 40, probed: [] }, 200, ietf(0, 5), 0, open);
    expect(s.applied).toBe(0);
    answer(s, send(s, 0), 200, ietf(6, 1), 1, open);
    expect(findPolicy(s, 's')?.remaining).toBe(6);
  });

  it('records a request sent with a ticket issued elsewhere so that its settle undoes it exactly', () => {
    const s = newLimits(open);
    answer(s, send(s, 0), 200, ietf(1, 1), 0, open);
    const before = structuredClone(s);
    // Issued on a copy where 's' had no room: a probe there, so a probe here.
    recordLimits(s, 1, { probed: ['s'] }, 0);
    expect(findPolicy(s, 's')?.probes).toBe(1);
    expect(s).toMatchObject({ inflight: 1, requests: 1 });
    settleLimits(s, { seq: 0, probed: ['s'], cost: 1, status: 200, now: 0, random: 0 }, open);
    expect(findPolicy(s, 's')).toEqual(findPolicy(before, 's'));
    expect(s).toMatchObject({ inflight: 0, requests: 0 });
  });

  it('holds until the reset, then sends one probe, and its answer tells the rest', () => {
    const s = newLimits(open);
    answer(s, send(s, 0), 200, ietf(0, 2), 0, open);
    expect(checkLimits(s, 1, 1999)).toMatchObject({
      ok: false,
      waitMs: 1,
      reason: 'learned-limit',
    });
    const probe = send(s, 2000);
    expect(probe.probed).toEqual(['s']);
    expect(checkLimits(s, 1, 2000)).toMatchObject({
      ok: false,
      waitMs: undefined,
      reason: 'probe',
    });
    answer(s, probe, 200, ietf(9, 1), 2001, open);
    for (let i = 0; i < 9; i++) send(s, 2001);
    expect(checkLimits(s, 1, 2001).ok).toBe(false);
  });

  it('lets another probe go when the first one got no answer', () => {
    const s = newLimits(open);
    answer(s, send(s, 0), 200, ietf(0, 1), 0, open);
    const probe = send(s, 1000);
    settleLimits(s, { ...probe, cost: 1, now: 1001, random: 0 }, open); // network error
    expect(checkLimits(s, 1, 1001).ok).toBe(true);
  });

  it('holds while any of several policies is spent, until the latest reset', () => {
    const s = newLimits(open);
    answer(
      s,
      send(s, 0),
      200,
      {
        'ratelimit-policy': '"second";q=10;w=1, "day";q=1000;w=86400',
        ratelimit: '"second";r=8;t=1, "day";r=0;t=3600',
      },
      0,
      open,
    );
    expect(checkLimits(s, 1, 0)).toEqual({
      ok: false,
      waitMs: 3_600_000,
      reason: 'learned-limit',
      policy: 'day',
    });
  });

  it('charges a request its cost', () => {
    const s = newLimits(open);
    answer(s, send(s, 0), 200, ietf(10, 1), 0, open);
    send(s, 0, 4);
    send(s, 0, 4);
    expect(checkLimits(s, 3, 0).ok).toBe(false);
    expect(checkLimits(s, 2, 0).ok).toBe(true);
  });

  it('forgets a policy the server stopped reporting, once its reset has passed', () => {
    const s = newLimits(open);
    answer(
      s,
      send(s, 0),
      200,
      { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' },
      0,
      open,
    );
    answer(s, send(s, 1500), 200, ietf(5, 1), 1500, open);
    expect(s.policies.map((p) => p.key)).toEqual(['s']);
  });

  it('keeps the state plain JSON', () => {
    const s = newLimits(config);
    answer(s, send(s, 0), 200, ietf(5, 1), 0);
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
  });
});

describe('holds after a pushback', () => {
  it('a 429 with Retry-After holds the host that long, plus at most 5 % jitter', () => {
    const s = newLimits(open);
    answer(s, send(s, 0), 429, { 'retry-after': '2' }, 100, open);
    expect(s.holdUntil).toBeGreaterThanOrEqual(2100);
    expect(s.holdUntil).toBeLessThanOrEqual(2200);
    expect(checkLimits(s, 1, 1000)).toMatchObject({ ok: false, reason: 'retry-after' });
    expect(checkLimits(s, 1, s.holdUntil).ok).toBe(true);
  });

  it('a 503 holds only when it says when to come back', () => {
    const s = newLimits(open);
    answer(s, send(s, 0), 503, {}, 0, open);
    expect(s.holdUntil).toBe(0);
    answer(s, send(s, 0), 503, { 'retry-after': '3' }, 0, open);
    expect(s.holdUntil).toBeGreaterThanOrEqual(3000);
  });

  it('a 429 without timing uses the reset of the spent policy, else one second', () => {
    const s = newLimits(open);
    answer(s, send(s, 0), 429, ietf(0, 4), 0, open);
    expect(s.holdUntil).toBeGreaterThanOrEqual(4000);
    const t = newLimits(open);
    answer(t, send(t, 0), 429, {}, 0, open);
    expect(t.holdUntil).toBeGreaterThanOrEqual(1000);
    expect(t.holdUntil).toBeLessThanOrEqual(1050);
  });
});

describe('blind limits (Retry-After only)', () => {
  it('learns the quota per window from the successes before a 429, then probes one at a time', () => {
    const s = newLimits(open);
    const batch = Array.from({ length: 8 }, () => send(s, 0));
    // The server took 5, refused 3.
    for (let i = 0; i < 5; i++) answer(s, batch[i] as LimitsTicket, 200, {}, 1, open);
    answer(s, batch[5] as LimitsTicket, 429, { 'retry-after': '1' }, 2, open);
    answer(s, batch[6] as LimitsTicket, 429, { 'retry-after': '1' }, 2, open);
    answer(s, batch[7] as LimitsTicket, 429, { 'retry-after': '1' }, 2, open);
    const blind = findPolicy(s, BLIND_POLICY);
    expect(blind).toMatchObject({ remaining: 5, synthetic: true });
    expect(checkLimits(s, 1, 500)).toMatchObject({ ok: false, reason: 'retry-after' });
    // After the hold: five at once, then one probe at a time, once they are answered.
    const after = s.holdUntil;
    const five = Array.from({ length: 5 }, () => send(s, after));
    expect(checkLimits(s, 1, after)).toMatchObject({ ok: false, reason: 'probe' });
    for (const t of five) answer(s, t, 200, {}, after, open);
    const probe = send(s, after);
    expect(checkLimits(s, 1, after)).toMatchObject({ ok: false, reason: 'probe' });
    answer(s, probe, 200, {}, after + 1, open);
    expect(checkLimits(s, 1, after + 1).ok).toBe(true);
  });

  it('does not count answers that arrive during the hold (a short estimate beats a long one)', () => {
    const s = newLimits(open);
    const a = send(s, 0);
    const b = send(s, 0);
    const c = send(s, 0);
    answer(s, a, 200, {}, 1, open);
    answer(s, b, 429, { 'retry-after': '1' }, 2, open);
    answer(s, c, 200, {}, 3, open); // answered during the hold
    expect(findPolicy(s, BLIND_POLICY)?.remaining).toBe(1);
  });

  it('sends the probe only once no other answer is pending', () => {
    const s = newLimits(open);
    answer(s, send(s, 0), 429, { 'retry-after': '1' }, 0, open);
    const after = s.holdUntil;
    const pending = send(s, after); // probe: the estimate is 0
    expect(checkLimits(s, 1, after)).toMatchObject({ ok: false, reason: 'probe' });
    answer(s, pending, 200, {}, after + 5, open);
    expect(checkLimits(s, 1, after + 5).ok).toBe(true);
  });

  it('gives way to real policies as soon as the server declares some', () => {
    const s = newLimits(open);
    answer(s, send(s, 0), 429, { 'retry-after': '1' }, 0, open);
    expect(findPolicy(s, BLIND_POLICY)).toBeDefined();
    answer(s, send(s, 2000), 200, ietf(5, 1), 2000, open);
    expect(findPolicy(s, BLIND_POLICY)).toBeUndefined();
    expect(s.mode).toBe('declared');
  });
});

describe('concurrency policies', () => {
  const conc = (r: number) => ({
    'ratelimit-policy': '"slots";q=3;qu="concurrent-requests"',
    ratelimit: `"slots";r=${r}`,
  });

  it('counts slots: a request frees its slot when it ends, and others wait for that', () => {
    const s = newLimits(open);
    const first = send(s, 0);
    // Reported while `first` held a slot: 2 free besides it, 3 now that it ended.
    answer(s, first, 200, conc(2), 1, open);
    expect(findPolicy(s, 'slots')?.remaining).toBe(3);
    const held = [send(s, 1), send(s, 1), send(s, 1)];
    expect(checkLimits(s, 1, 1)).toMatchObject({
      ok: false,
      waitMs: undefined,
      reason: 'learned-limit',
    });
    // Time does not free a slot.
    expect(checkLimits(s, 1, 60_000).ok).toBe(false);
    // An answer does, even one whose report is stale.
    settleLimits(s, { ...(held[0] as LimitsTicket), cost: 1, now: 2, random: 0 }, open);
    expect(checkLimits(s, 1, 2).ok).toBe(true);
  });
});

describe('lost requests: what a dead process left in flight stops counting', () => {
  const conc = (r: number) => ({
    'ratelimit-policy': '"slots";q=2;qu="concurrent-requests"',
    ratelimit: `"slots";r=${r}`,
  });
  const ttl: LimitsConfig = { ...open, flightTtlMs: 60_000 };
  /** The admission step as the host state runs it: prune, then check, then commit. */
  const admit = (s: LimitsState, now: number, ttlMs?: number) => {
    pruneLimits(s, now);
    const verdict = checkLimits(s, 1, now);
    return verdict.ok ? commitLimits(s, 1, now, ttl, ttlMs) : verdict;
  };

  it('takes a request as lost at its own time, rounded up to a grain', () => {
    // 60 s: a grain of 2 s (a thirty-second of it, in whole seconds); 5 s: a grain of 1 s.
    expect(flightExpiry(1_000, 60_000)).toBe(62_000);
    expect(flightExpiry(1_001, 60_000)).toBe(62_000);
    expect(flightExpiry(2_001, 60_000)).toBe(64_000);
    expect(flightExpiry(1_500, 5_000)).toBe(7_000);
    // Ten minutes: a grain of 19 s, so at most ~32 entries in flight at once.
    expect(flightExpiry(0, 600_000)).toBe(608_000);
  });

  it('a probe that is never answered holds its policy until its time is up, not forever', () => {
    const s = newLimits(ttl);
    answer(s, send(s, 0, 1, ttl), 200, ietf(0, 1), 0, ttl);
    // Past the reset, one probe goes; its process dies with it.
    expect(admit(s, 1000)).toMatchObject({ probed: ['s'], expires: 62_000 });
    expect(admit(s, 30_000)).toMatchObject({ ok: false, reason: 'probe', waitMs: undefined });
    expect(admit(s, 61_999)).toMatchObject({ ok: false, reason: 'probe' });
    expect(admit(s, 62_000)).toMatchObject({ probed: ['s'] });
    expect(s).toMatchObject({ inflight: 1, requests: 1 });
  });

  it("honours each request's own time: a long attempt timeout keeps its slot", () => {
    const s = newLimits(ttl);
    answer(s, send(s, 0, 1, ttl), 200, conc(1), 0, ttl); // 2 slots, both free
    // One sent with a 120 s attempt timeout (121 s with the margin), one with none (60 s).
    const long = admit(s, 500, 121_000) as LimitsTicket;
    admit(s, 500);
    expect(admit(s, 59_000)).toMatchObject({ ok: false, reason: 'learned-limit' });
    // The second is lost at 62 s; the first still holds its slot.
    expect(admit(s, 62_000)).toMatchObject({ seq: 4 });
    expect(admit(s, 62_000)).toMatchObject({ ok: false, reason: 'learned-limit' });
    expect(long.expires).toBe(flightExpiry(500, 121_000));
    expect(s).toMatchObject({ inflight: 2, requests: 2 });
  });

  it('a concurrency slot held by a request never answered comes back once, not twice', () => {
    const s = newLimits(ttl);
    answer(s, send(s, 0, 1, ttl), 200, conc(1), 0, ttl); // 2 slots, both free
    const lost = [admit(s, 500), admit(s, 500)] as LimitsTicket[];
    const next = admit(s, 62_000);
    expect(next).toMatchObject({ seq: 4 });
    expect(s).toMatchObject({ inflight: 1, requests: 1 });
    expect(findPolicy(s, 'slots')?.remaining).toBe(1);
    // A lost request answered after all gives back nothing more: it gave its slot back already.
    settleLimits(s, { ...(lost[0] as LimitsTicket), cost: 1, now: 62_001, random: 0 }, ttl);
    expect(s).toMatchObject({ inflight: 1, requests: 1 });
    expect(findPolicy(s, 'slots')?.remaining).toBe(1);
    // The live one's does.
    settleLimits(s, { ...(next as LimitsTicket), cost: 1, now: 62_003, random: 0 }, ttl);
    expect(s).toMatchObject({ inflight: 0, requests: 0, flights: [] });
    expect(findPolicy(s, 'slots')?.remaining).toBe(2);
  });

  it('a replayed request whose time is up already counts as lost at once', () => {
    const s = newLimits(ttl);
    answer(s, send(s, 0, 1, ttl), 200, conc(0), 0, ttl); // 1 slot, free
    // Sent on a local copy at 1 s while the store was away, replayed at 70 s.
    recordLimits(s, 1, { probed: [], expires: flightExpiry(1000, 60_000) }, 70_000);
    expect(s).toMatchObject({ inflight: 0, requests: 0 });
    expect(findPolicy(s, 'slots')?.remaining).toBe(1);
    // Its late answer takes nothing from a live request.
    const live = commitLimits(s, 1, 70_000, ttl);
    settleLimits(
      s,
      { seq: 0, probed: [], expires: flightExpiry(1000, 60_000), cost: 1, now: 70_001, random: 0 },
      ttl,
    );
    expect(s).toMatchObject({ inflight: 1, requests: 1 });
    expect(live.expires).toBeGreaterThan(70_000);
  });

  it('keeps counting what is due later, and stops at the first entry not due', () => {
    const s = newLimits(ttl);
    commitLimits(s, 2, 0, ttl);
    commitLimits(s, 3, 30_500, ttl);
    pruneLimits(s, 59_999);
    expect(s).toMatchObject({ inflight: 5, requests: 2 });
    pruneLimits(s, 60_000);
    expect(s).toMatchObject({ inflight: 3, requests: 1, flights: [[92_000, 1, 3]] });
    pruneLimits(s, 92_000);
    expect(s).toMatchObject({ inflight: 0, requests: 0, flights: [] });
  });

  it('is JSON: a state read back from a shared store prunes the same', () => {
    const s = newLimits(ttl);
    commitLimits(s, 1, 5_000, ttl);
    commitLimits(s, 1, 1_000, ttl); // a clock that stepped back: filed in order
    commitLimits(s, 2, 5_500, ttl);
    expect(s.flights).toEqual([
      [62_000, 1, 1],
      [66_000, 2, 3],
    ]);
    const copy = JSON.parse(JSON.stringify(s)) as LimitsState;
    pruneLimits(copy, 62_000);
    expect(copy).toMatchObject({ inflight: 3, requests: 2, flights: [[66_000, 2, 3]] });
    // Answers find their entry, wherever it is in the list.
    settleLimits(
      copy,
      { seq: 3, probed: [], at: 5_500, expires: 66_000, cost: 2, now: 62_001, random: 0 },
      ttl,
    );
    expect(copy).toMatchObject({ inflight: 1, requests: 1, flights: [[66_000, 1, 1]] });
  });
});
