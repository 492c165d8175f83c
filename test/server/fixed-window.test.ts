import { describe, expect, it } from 'vitest';
import { FixedWindow } from '../../src/server/index.js';
import { InvalidOptionError } from '../../src/shared/errors.js';

describe('FixedWindow', () => {
  it('seed: five at t=999 and five at t=1000 all pass a limit of 5 per second (the boundary burst)', async () => {
    const limiter = new FixedWindow({ limit: 5, windowMs: 1000 });
    const allowed: boolean[] = [];
    for (let i = 0; i < 5; i++) allowed.push((await limiter.take('user', { now: 999 })).allowed);
    for (let i = 0; i < 5; i++) allowed.push((await limiter.take('user', { now: 1000 })).allowed);
    expect(allowed).toEqual(Array(10).fill(true));
    // ...and the eleventh, still at t=1000, does not.
    expect((await limiter.take('user', { now: 1000 })).allowed).toBe(false);
  });

  it('seed: 6 per minute admits 11 requests within 460 ms across 12:01:00', async () => {
    const limiter = new FixedWindow({ limit: 6, windowMs: 60_000 });
    const at = (s: number, ms: number) => Date.UTC(2026, 0, 1, 12, 0, s, ms);
    const times = [
      at(59, 700),
      at(59, 760),
      at(59, 820),
      at(59, 880),
      at(59, 940),
      at(60, 10),
      at(60, 40),
      at(60, 70),
      at(60, 100),
      at(60, 130),
      at(60, 160),
    ];
    const results = [];
    for (const now of times) results.push(await limiter.take('tenant', { now }));
    expect(results.every((r) => r.allowed)).toBe(true);
    // The new window's sixth request used its last unit; the seventh waits for 12:02:00.
    const seventh = await limiter.take('tenant', { now: at(60, 190) });
    expect(seventh).toEqual({
      allowed: false,
      limit: 6,
      remaining: 0,
      resetMs: 60_000 - 190,
      retryAfterMs: 60_000 - 190,
    });
  });

  it('aligns windows to multiples of windowMs since the epoch', async () => {
    const limiter = new FixedWindow({ limit: 1, windowMs: 1000 });
    expect((await limiter.take('k', { now: 1_234_567 })).resetMs).toBe(433);
  });

  it('reports remaining and reset for admitted requests, and 0 reset for an untouched key', async () => {
    const limiter = new FixedWindow({ limit: 3, windowMs: 1000 });
    expect(await limiter.peek('k', { now: 100, cost: 2 })).toEqual({
      allowed: true,
      limit: 3,
      remaining: 3,
      resetMs: 0,
      retryAfterMs: 0,
    });
    expect(await limiter.take('k', { now: 100, cost: 2 })).toEqual({
      allowed: true,
      limit: 3,
      remaining: 1,
      resetMs: 900,
      retryAfterMs: 0,
    });
  });

  it('retryAfterMs is exact: admitted exactly then, not a millisecond earlier', async () => {
    const limiter = new FixedWindow({ limit: 2, windowMs: 1000 });
    await limiter.take('k', { now: 250, cost: 2 });
    const rejected = await limiter.take('k', { now: 400 });
    expect(rejected.retryAfterMs).toBe(600);
    expect((await limiter.peek('k', { now: 999 })).allowed).toBe(false);
    expect((await limiter.take('k', { now: 1000 })).allowed).toBe(true);
  });

  it('a rejected request consumes nothing', async () => {
    const limiter = new FixedWindow({ limit: 3, windowMs: 1000 });
    await limiter.take('k', { now: 0, cost: 2 });
    expect((await limiter.take('k', { now: 1, cost: 2 })).allowed).toBe(false);
    expect((await limiter.take('k', { now: 2, cost: 1 })).allowed).toBe(true);
  });

  it('a clock moved back an hour forgives nothing and clears within one window', async () => {
    const limiter = new FixedWindow({ limit: 2, windowMs: 1000 });
    const t = 10_000_500;
    await limiter.take('k', { now: t, cost: 2 });
    const back = t - 3_600_000;
    const afterJump = await limiter.take('k', { now: back });
    expect(afterJump.allowed).toBe(false);
    expect(afterJump.retryAfterMs).toBeLessThanOrEqual(1000);
    expect((await limiter.take('k', { now: back + afterJump.retryAfterMs })).allowed).toBe(true);
  });

  it('keys are independent', async () => {
    const limiter = new FixedWindow({ limit: 1, windowMs: 1000 });
    expect((await limiter.take('a', { now: 0 })).allowed).toBe(true);
    expect((await limiter.take('b', { now: 0 })).allowed).toBe(true);
    expect((await limiter.take('a', { now: 0 })).allowed).toBe(false);
  });

  it('rejects bad options naming the option, and bad costs at the call', async () => {
    expect(() => new FixedWindow({ limit: 0, windowMs: 1000 })).toThrow(
      new InvalidOptionError('limit', 'must be a positive integer, got 0'),
    );
    expect(() => new FixedWindow({ limit: 1, windowMs: 1.5 })).toThrow(/windowMs/);
    const limiter = new FixedWindow({ limit: 3, windowMs: 1000 });
    await expect(limiter.take('k', { cost: 4 })).rejects.toThrow(RangeError);
    await expect(limiter.take('k', { cost: 0 })).rejects.toThrow(/cost must be an integer from 1/);
    await expect(limiter.take('k', { now: Number.NaN })).rejects.toThrow(/now must be a finite/);
  });
});
