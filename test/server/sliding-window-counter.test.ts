import { describe, expect, it } from 'vitest';
import { SlidingWindowCounter } from '../../src/server/index.js';

describe('SlidingWindowCounter', () => {
  it('seed: the previous window weighs all but its first millisecond at the boundary, 90% at +100 ms, 50% halfway', async () => {
    const limiter = new SlidingWindowCounter({ limit: 5, windowMs: 1000 });
    for (let i = 0; i < 5; i++)
      expect((await limiter.take('user', { now: 900 })).allowed).toBe(true);
    // t=999: the window itself is full.
    expect((await limiter.take('user', { now: 999 })).allowed).toBe(false);
    // t=1000: the trailing window (0, 1000] holds 999 ms of the previous window: 5 * 0.999 =
    // 4.995, counted as 4 whole units, so one fits (the seed's unrounded 5 would refuse it).
    expect(await limiter.take('user', { now: 1000 })).toMatchObject({
      allowed: true,
      remaining: 0,
    });
    // t=1100: 5 * 0.899 = 4.495 (4) plus the one at 1000: full.
    expect(await limiter.take('user', { now: 1100 })).toMatchObject({
      allowed: false,
      remaining: 0,
    });
    // t=1500: 5 * 0.499 = 2.495 (2) plus the one admitted at 1000: two more fit.
    expect(await limiter.take('user', { now: 1500 })).toMatchObject({
      allowed: true,
      remaining: 1,
    });
  });

  it('a client paced at limit / windowMs is never refused, even on the first millisecond of every window', async () => {
    // 200/s with a burst of 1 (5 ms windows): issue 23 measured 72 refusals of 2,001 requests,
    // each one landing on a window's first millisecond after a full window.
    const limiter = new SlidingWindowCounter({ limit: 1, windowMs: 5 });
    for (let t = 1_000_000; t < 1_000_000 + 5 * 400; t += 5) {
      expect((await limiter.take('k', { now: t })).allowed).toBe(true);
    }
    const paced = new SlidingWindowCounter({ limit: 5, windowMs: 1000 });
    for (let t = 0; t < 10_000; t += 200) {
      expect((await paced.take('k', { now: t })).allowed).toBe(true);
    }
  });

  it('seed: 15 s into a 60 s window, the previous window counts for 75% (less its first millisecond)', async () => {
    const limiter = new SlidingWindowCounter({ limit: 100, windowMs: 60_000 });
    await limiter.take('k', { now: 10_000, cost: 40 });
    await limiter.take('k', { now: 61_000, cost: 10 });
    // The trailing window (15_000, 75_000] holds 44_999 ms of the previous window: 40 * 44_999 /
    // 60_000 = 29.9993, counted as 29 whole units, plus 10 = 39 used.
    expect((await limiter.peek('k', { now: 75_000 })).remaining).toBe(61);
    // A millisecond earlier it holds exactly 75%: 30 + 10 = 40 used.
    expect((await limiter.peek('k', { now: 74_999 })).remaining).toBe(60);
  });

  it('retryAfterMs is exact while the previous window fades', async () => {
    const limiter = new SlidingWindowCounter({ limit: 10, windowMs: 1000 });
    await limiter.take('k', { now: 500, cost: 10 });
    const rejected = await limiter.take('k', { now: 1200, cost: 4 });
    // floor(10 * (1000 - e - 1) / 1000) <= 6 first holds at e = 300.
    expect(rejected).toMatchObject({ allowed: false, remaining: 3, retryAfterMs: 100 });
    expect((await limiter.peek('k', { now: 1299, cost: 4 })).allowed).toBe(false);
    expect((await limiter.peek('k', { now: 1300, cost: 4 })).allowed).toBe(true);
  });

  it('retryAfterMs is exact when the current window itself is full', async () => {
    const limiter = new SlidingWindowCounter({ limit: 4, windowMs: 1000 });
    await limiter.take('k', { now: 2000, cost: 4 });
    const rejected = await limiter.take('k', { now: 2100 });
    // The window rolls at t=3000, where the 4 weigh 999/1000: floor(3.996) = 3.
    expect(rejected.retryAfterMs).toBe(900);
    expect((await limiter.peek('k', { now: 2999 })).allowed).toBe(false);
    expect((await limiter.peek('k', { now: 3000 })).allowed).toBe(true);
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
