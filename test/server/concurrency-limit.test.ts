import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../../src/server/index.js';

describe('ConcurrencyLimit', () => {
  it('caps requests in flight until they are released', async () => {
    const limiter = new ConcurrencyLimit({ limit: 2, retryAfterMs: 250 });
    expect((await limiter.take('k')).remaining).toBe(1);
    expect((await limiter.take('k')).remaining).toBe(0);
    expect(await limiter.take('k')).toEqual({
      allowed: false,
      limit: 2,
      remaining: 0,
      resetMs: 250,
      retryAfterMs: 250,
    });
    await limiter.release('k');
    expect((await limiter.take('k')).allowed).toBe(true);
  });

  it('ignores time entirely: no slot frees by waiting', async () => {
    const limiter = new ConcurrencyLimit({ limit: 1 });
    await limiter.take('k', { now: 0 });
    expect((await limiter.take('k', { now: 86_400_000 })).allowed).toBe(false);
    expect((await limiter.take('k', { now: -5 })).retryAfterMs).toBe(1000);
  });

  it('an acquisition refund releases its slots once; over-release creates no slots', async () => {
    const limiter = new ConcurrencyLimit({ limit: 3 });
    const a = await limiter.acquire('k', { cost: 2 });
    await a.refund();
    await a.refund();
    await limiter.release('k');
    expect((await limiter.peek('k')).remaining).toBe(3);
    await limiter.take('k', { cost: 3 });
    expect((await limiter.take('k')).allowed).toBe(false);
  });
});
