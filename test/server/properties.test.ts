/**
 * Property tests: every algorithm, random parameters, random traffic on fake time.
 *
 * - No algorithm admits more than it promises, in any window it promises it for.
 * - Every number is a non-negative integer; `retryAfterMs` and `resetMs` are exact where documented
 *   (a request that much later gets what was promised, a millisecond earlier it does not).
 * - A refund undoes a take exactly; a clock moved backwards creates nothing and locks out no
 *   longer than the algorithm's horizon.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ConcurrencyLimit,
  FixedWindow,
  Gcra,
  LeakyBucket,
  type RateLimiter,
  SlidingLog,
  SlidingWindowCounter,
  type TakeResult,
  TokenBucket,
} from '../../src/server/index.js';

interface Admitted {
  at: number;
  cost: number;
  delayMs: number;
}

interface Case {
  limiter: RateLimiter;
  /** Milliseconds within which a key recovers its whole limit, whatever happened before. */
  horizonMs: number;
  /** Throws when the admitted requests break the algorithm's promise. */
  promise(admitted: Admitted[]): void;
}

const BASE = 1_764_500_000_000;

/** `FC_RUNS=5000 npx vitest run test/server/properties.test.ts` searches deeper. */
fc.configureGlobal({ numRuns: Number(process.env.FC_RUNS) || 100 });

const rate = fc
  .tuple(fc.integer({ min: 1, max: 40 }), fc.constantFrom(1, 2, 3, 7))
  .map(([n, d]) => n / d);
const windowMs = fc.integer({ min: 1, max: 2000 });
const limit = fc.integer({ min: 1, max: 10 });

/** Sum of costs admitted in [from, to]. */
function admittedBetween(admitted: Admitted[], from: number, to: number): number {
  return admitted.filter((a) => a.at >= from && a.at <= to).reduce((sum, a) => sum + a.cost, 0);
}

function perAlignedWindow(max: number, windowMs: number) {
  return (admitted: Admitted[]) => {
    const byWindow = new Map<number, number>();
    for (const a of admitted) {
      const start = Math.floor(a.at / windowMs) * windowMs;
      byWindow.set(start, (byWindow.get(start) ?? 0) + a.cost);
    }
    for (const [start, sum] of byWindow) {
      if (sum > max) throw new Error(`${sum} admitted in the window starting at ${start}`);
    }
  };
}

/** Over any interval [a, b]: at most `burst + perSecond * (b - a) / 1000`. */
function perInterval(burst: number, perSecond: number) {
  return (admitted: Admitted[]) => {
    for (let i = 0; i < admitted.length; i++) {
      for (let j = i; j < admitted.length; j++) {
        const from = (admitted[i] as Admitted).at;
        const to = (admitted[j] as Admitted).at;
        const sum = admittedBetween(admitted, from, to);
        if (sum > burst + (perSecond * (to - from)) / 1000 + 1e-9) {
          throw new Error(`${sum} admitted in [${from}, ${to}]`);
        }
      }
    }
  };
}

const cases: Record<string, fc.Arbitrary<Case>> = {
  'fixed-window': fc.record({ limit, windowMs }).map((o) => ({
    limiter: new FixedWindow(o),
    horizonMs: o.windowMs,
    promise: perAlignedWindow(o.limit, o.windowMs),
  })),
  'sliding-log': fc.record({ limit, windowMs }).map((o) => ({
    limiter: new SlidingLog(o),
    horizonMs: o.windowMs,
    // Any trailing window (t - windowMs, t]: checking the ones ending at admissions suffices.
    promise(admitted: Admitted[]) {
      for (const a of admitted) {
        const sum = admittedBetween(admitted, a.at - o.windowMs + 1, a.at);
        if (sum > o.limit) throw new Error(`${sum} admitted in the window ending at ${a.at}`);
      }
    },
  })),
  'sliding-window-counter': fc.record({ limit, windowMs }).map((o) => ({
    limiter: new SlidingWindowCounter(o),
    horizonMs: 2 * o.windowMs,
    promise: perAlignedWindow(o.limit, o.windowMs),
  })),
  'token-bucket': fc.record({ capacity: limit, refillPerSecond: rate }).map((o) => ({
    limiter: new TokenBucket(o),
    horizonMs: Math.ceil((o.capacity * 1000) / o.refillPerSecond) + 1,
    promise: perInterval(o.capacity, o.refillPerSecond),
  })),
  gcra: fc.record({ rate, burst: fc.integer({ min: 0, max: 9 }) }).map((o) => ({
    limiter: new Gcra(o),
    horizonMs: Math.ceil(((o.burst + 1) * 1000) / o.rate),
    promise: perInterval(o.burst + 1, o.rate),
  })),
  'leaky-bucket': fc.record({ rate, capacity: limit }).map((o) => ({
    limiter: new LeakyBucket(o),
    horizonMs: Math.ceil((o.capacity * 1000) / o.rate),
    promise(admitted: Admitted[]) {
      perInterval(o.capacity, o.rate)(admitted);
      // Served at the drain pace: each turn starts at least one cost's drain time after the last.
      const interval = 1000 / o.rate;
      for (let k = 1; k < admitted.length; k++) {
        const prev = admitted[k - 1] as Admitted;
        const next = admitted[k] as Admitted;
        const gap = next.at + next.delayMs - (prev.at + prev.delayMs);
        if (gap < prev.cost * interval - 1) throw new Error(`turns ${gap} ms apart`);
      }
    },
  })),
};

const traffic = fc.array(
  fc.record({
    gap: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 0, max: 50 }),
      fc.integer({ min: 0, max: 600 }),
      fc.integer({ min: 0, max: 5000 }),
    ),
    cost: fc.integer({ min: 1, max: 10 }),
  }),
  { minLength: 1, maxLength: 60 },
);

function expectSane(r: TakeResult): void {
  for (const value of [r.limit, r.remaining, r.resetMs, r.retryAfterMs, r.delayMs ?? 0]) {
    expect(Number.isSafeInteger(value) && value >= 0).toBe(true);
  }
  expect(r.remaining).toBeLessThanOrEqual(r.limit);
  expect(r.retryAfterMs === 0).toBe(r.allowed);
  expect(r.resetMs === 0).toBe(r.remaining === r.limit);
}

/** Checks retryAfterMs and resetMs against what the key really offers then, and just before. */
async function expectExact(limiter: RateLimiter, at: number, cost: number, r: TakeResult) {
  if (!r.allowed) {
    expect((await limiter.peek('k', { now: at + r.retryAfterMs, cost })).allowed).toBe(true);
    expect((await limiter.peek('k', { now: at + r.retryAfterMs - 1, cost })).allowed).toBe(false);
  }
  if (r.resetMs > 0) {
    const later = await limiter.peek('k', { now: at + r.resetMs });
    const before = await limiter.peek('k', { now: at + r.resetMs - 1 });
    expect(later.remaining).toBeGreaterThan(r.remaining);
    expect(before.remaining).toBe(r.remaining);
  }
}

/** Plays `events` against `limiter` on fake time; returns the admitted requests and the end. */
async function play(
  limiter: RateLimiter,
  events: { gap: number; cost: number }[],
  check = true,
): Promise<{ admitted: Admitted[]; end: number }> {
  const admitted: Admitted[] = [];
  let now = BASE;
  for (const event of events) {
    now += event.gap;
    const cost = 1 + ((event.cost - 1) % limiter.limit);
    const r = await limiter.take('k', { now, cost });
    if (check) {
      expectSane(r);
      await expectExact(limiter, now, cost, r);
    }
    if (r.allowed) admitted.push({ at: now, cost, delayMs: r.delayMs ?? 0 });
  }
  return { admitted, end: now };
}

describe.each(Object.keys(cases))('%s', (name) => {
  const arbitrary = cases[name] as fc.Arbitrary<Case>;

  it('never admits more than it promises, and its numbers are exact', async () => {
    await fc.assert(
      fc.asyncProperty(arbitrary, traffic, async (c, events) => {
        const { admitted } = await play(c.limiter, events);
        c.promise(admitted);
      }),
    );
  });

  it('a refund undoes a take exactly', async () => {
    await fc.assert(
      fc.asyncProperty(
        arbitrary,
        traffic,
        fc.integer({ min: 1, max: 10 }),
        async (c, events, n) => {
          const { end } = await play(c.limiter, events, false);
          const cost = 1 + ((n - 1) % c.limiter.limit);
          const before = await c.limiter.peek('k', { now: end, cost });
          const acquired = await c.limiter.acquire('k', { now: end, cost });
          expect(acquired.result.allowed).toBe(before.allowed);
          await acquired.refund();
          expect(await c.limiter.peek('k', { now: end, cost })).toEqual(before);
        },
      ),
    );
  });

  it('a clock moved backwards creates nothing and recovers within the horizon', async () => {
    await fc.assert(
      fc.asyncProperty(
        arbitrary,
        traffic,
        fc.integer({ min: 1, max: 100_000_000 }),
        async (c, events, jump) => {
          const { end } = await play(c.limiter, events, false);
          const before = await c.limiter.peek('k', { now: end });
          const back = end - jump;
          const after = await c.limiter.take('k', { now: back });
          const availableAfter = after.allowed ? after.remaining + 1 : after.remaining;
          expect(availableAfter).toBeLessThanOrEqual(before.remaining);
          const full = await c.limiter.peek('k', {
            now: back + c.horizonMs,
            cost: c.limiter.limit,
          });
          expect(full.allowed).toBe(true);
        },
      ),
    );
  });
});

describe('concurrency', () => {
  it('admits exactly while the slots in flight leave room, whatever the order of releases', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('take' as const), cost: fc.integer({ min: 1, max: 5 }) }),
      fc.record({ kind: fc.constant('release' as const), index: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(limit, fc.array(op, { maxLength: 80 }), async (max, ops) => {
        const limiter = new ConcurrencyLimit({ limit: max });
        const held: { cost: number; refund(): Promise<void> }[] = [];
        let inFlight = 0;
        for (const o of ops) {
          if (o.kind === 'take') {
            const cost = 1 + ((o.cost - 1) % max);
            const a = await limiter.acquire('k', { cost });
            expectSane(a.result);
            expect(a.result.allowed).toBe(inFlight + cost <= max);
            if (a.result.allowed) {
              inFlight += cost;
              held.push({ cost, refund: a.refund });
            }
          } else if (held.length > 0) {
            const [h] = held.splice(o.index % held.length, 1);
            await h?.refund();
            inFlight -= h?.cost ?? 0;
          }
          expect((await limiter.peek('k')).remaining).toBe(max - inFlight);
        }
      }),
    );
  });
});
