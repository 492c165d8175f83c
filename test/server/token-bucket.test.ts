import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../src/server/index.js';

describe('TokenBucket', () => {
  it('seed: capacity 5 at 2/s: a burst of five, the sixth retries after 500 ms, three refill in 1.5 s', async () => {
    const bucket = new TokenBucket({ capacity: 5, refillPerSecond: 2 });
    for (let i = 0; i < 5; i++) expect((await bucket.take('k', { now: 0 })).allowed).toBe(true);
    expect(await bucket.take('k', { now: 0 })).toEqual({
      allowed: false,
      limit: 5,
      remaining: 0,
      resetMs: 500,
      retryAfterMs: 500,
    });
    expect(await bucket.take('k', { now: 1500 })).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('seed: weighted costs 1, 5, 50, 50 on 60 tokens at 10/s, then 50 after five seconds', async () => {
    const bucket = new TokenBucket({ capacity: 60, refillPerSecond: 10 });
    const take = (cost: number, now: number) => bucket.take('tenant', { cost, now });
    expect(await take(1, 0)).toMatchObject({ allowed: true, remaining: 59 });
    expect(await take(5, 0)).toMatchObject({ allowed: true, remaining: 54 });
    expect(await take(50, 0)).toMatchObject({ allowed: true, remaining: 4 });
    expect(await take(50, 0)).toMatchObject({ allowed: false, remaining: 4, retryAfterMs: 4600 });
    expect(await take(50, 5000)).toMatchObject({ allowed: true, remaining: 4 });
  });

  it('seed: an empty bucket of 10 at 2/s is full again after 5 idle seconds, and no fuller', async () => {
    const bucket = new TokenBucket({ capacity: 10, refillPerSecond: 2 });
    await bucket.take('k', { now: 0, cost: 10 });
    expect((await bucket.peek('k', { now: 4999 })).remaining).toBe(9);
    expect((await bucket.peek('k', { now: 5000 })).remaining).toBe(10);
    expect((await bucket.peek('k', { now: 3_600_000 })).remaining).toBe(10);
  });

  it('retryAfterMs is exact with a rate that does not divide a second', async () => {
    const bucket = new TokenBucket({ capacity: 2, refillPerSecond: 3 });
    const now = 1_764_500_000_123;
    await bucket.take('k', { now, cost: 2 });
    const rejected = await bucket.take('k', { now, cost: 2 });
    // Two tokens at 3/s take 666.67 ms: admitted at +667, not at +666.
    expect(rejected.retryAfterMs).toBe(667);
    expect(rejected.resetMs).toBe(334);
    expect((await bucket.peek('k', { now: now + 666, cost: 2 })).allowed).toBe(false);
    expect((await bucket.peek('k', { now: now + 667, cost: 2 })).allowed).toBe(true);
  });

  it('a clock moved back refills nothing, and refilling resumes from the new time', async () => {
    const bucket = new TokenBucket({ capacity: 4, refillPerSecond: 1 });
    await bucket.take('k', { now: 100_000, cost: 4 });
    const back = 40_000;
    expect((await bucket.take('k', { now: back })).allowed).toBe(false);
    expect((await bucket.peek('k', { now: back + 999 })).allowed).toBe(false);
    expect((await bucket.peek('k', { now: back + 1000 })).allowed).toBe(true);
    expect((await bucket.peek('k', { now: back + 4000, cost: 4 })).allowed).toBe(true);
  });
});
