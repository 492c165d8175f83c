import { describe, expect, it } from 'vitest';
import { Gcra } from '../../src/server/index.js';

describe('Gcra', () => {
  it('seed: rate 10/s, burst 5: six of eight pass at t=0, the rest retry after 100 ms', async () => {
    const limiter = new Gcra({ rate: 10, burst: 5 });
    const results = [];
    for (let i = 0; i < 8; i++) results.push(await limiter.take('k', { now: 0 }));
    expect(results.map((r) => r.allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
    expect(results[6]).toEqual({
      allowed: false,
      limit: 6,
      remaining: 0,
      resetMs: 100,
      retryAfterMs: 100,
    });
  });

  it('seed: 250 ms after the burst the key has recovered enough for another request', async () => {
    const limiter = new Gcra({ rate: 10, burst: 5 });
    for (let i = 0; i < 8; i++) await limiter.take('k', { now: 0 });
    // Two intervals and a half have drained: two whole units are free, one is taken.
    expect(await limiter.take('k', { now: 250 })).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiter.take('k', { now: 250 })).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.take('k', { now: 250 })).toMatchObject({
      allowed: false,
      retryAfterMs: 50,
    });
  });

  it('burst 0 enforces the pace exactly', async () => {
    const limiter = new Gcra({ rate: 4, burst: 0 });
    expect((await limiter.take('k', { now: 0 })).allowed).toBe(true);
    expect((await limiter.take('k', { now: 249 })).allowed).toBe(false);
    expect((await limiter.take('k', { now: 250 })).allowed).toBe(true);
  });

  it('a clock moved back a day never locks the key out for more than a full burst', async () => {
    const limiter = new Gcra({ rate: 10, burst: 5 });
    const now = 1_764_500_000_000;
    for (let i = 0; i < 6; i++) await limiter.take('k', { now });
    const back = now - 86_400_000;
    const afterJump = await limiter.take('k', { now: back });
    expect(afterJump.allowed).toBe(false);
    expect(afterJump.retryAfterMs).toBe(100);
    expect((await limiter.peek('k', { now: back + 600, cost: 6 })).allowed).toBe(true);
  });
});
