import { describe, expect, it } from 'vitest';
import { SlidingWindowCounter } from '../../src/server/index.js';

describe('SlidingWindowCounter', () => {
  it('seed: the previous window weighs 100% at the boundary, 90% at +100 ms, 50% halfway', async () => {
    const limiter = new SlidingWindowCounter({ limit: 5, windowMs: 1000 });
    for (let i = 0; i < 5; i++)
      expect((await limiter.take('user', { now: 900 })).allowed).toBe(true);
    // t=1000: 5 * 100% = 5 of 5 used.
    expect(await limiter.take('user', { now: 1000 })).toMatchObject({
      allowed: false,
      remaining: 0,
    });
    // t=1100: 5 * 90% = 4.5, counted as 4 whole units, so one fits.
    expect(await limiter.take('user', { now: 1100 })).toMatchObject({
      allowed: true,
      remaining: 0,
    });
    // t=1500: 5 * 50% = 2.5 (2) plus the one admitted at 1100: two more fit.
    expect(await limiter.take('user', { now: 1500 })).toMatchObject({
      allowed: true,
      remaining: 1,
    });
  });

  it('seed: 15 s into a 60 s window, the previous window counts for 75%', async () => {
    const limiter = new SlidingWindowCounter({ limit: 100, windowMs: 60_000 });
    await limiter.take('k', { now: 10_000, cost: 40 });
    await limiter.take('k', { now: 61_000, cost: 10 });
    // 40 * 0.75 + 10 = 40 used.
    expect((await limiter.peek('k', { now: 75_000 })).remaining).toBe(60);
  });

  it('retryAfterMs is exact while the previous window fades', async () => {
    const limiter = new SlidingWindowCounter({ limit: 10, windowMs: 1000 });
    await limiter.take('k', { now: 500, cost: 10 });
    const rejected = await limiter.take('k', { now: 1200, cost: 4 });
    // floor(10 * (1000 - e) / 1000) <= 6 first holds at e = 301.
    expect(rejected).toMatchObject({ allowed: false, remaining: 2, retryAfterMs: 101 });
    expect((await limiter.peek('k', { now: 1300, cost: 4 })).allowed).toBe(false);
    expect((await limiter.peek('k', { now: 1301, cost: 4 })).allowed).toBe(true);
  });

  it('retryAfterMs is exact when the current window itself is full', async () => {
    const limiter = new SlidingWindowCounter({ limit: 4, windowMs: 1000 });
    await limiter.take('k', { now: 2000, cost: 4 });
    const rejected = await limiter.take('k', { now: 2100 });
    // The window rolls at t=3000, where the 4 still weigh 100%; at 3001, floor(3.996) = 3.
    expect(rejected.retryAfterMs).toBe(901);
    expect((await limiter.peek('k', { now: 3000 })).allowed).toBe(false);
    expect((await limiter.peek('k', { now: 3001 })).allowed).toBe(true);
  });

  it('a clock moved back forgives nothing and clears within two windows', async () => {
    const limiter = new SlidingWindowCounter({ limit: 3, windowMs: 1000 });
    await limiter.take('k', { now: 5_000_900, cost: 3 });
    const back = 5_000_900 - 86_400_000;
    const afterJump = await limiter.take('k', { now: back });
    expect(afterJump.allowed).toBe(false);
    expect(afterJump.retryAfterMs).toBeLessThanOrEqual(2000);
    expect((await limiter.peek('k', { now: back + 2000, cost: 3 })).allowed).toBe(true);
  });
});
