import { describe, expect, it } from 'vitest';
import { SlidingLog } from '../../src/server/index.js';

describe('SlidingLog', () => {
  it('seed: limit 3 per second at t=0,100,200,300,1200,1250', async () => {
    const limiter = new SlidingLog({ limit: 3, windowMs: 1000 });
    const results = [];
    for (const now of [0, 100, 200, 300, 1200, 1250]) {
      results.push(await limiter.take('k', { now }));
    }
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, true, true]);
    // The fourth waits for the entry of t=0 to leave the window, at t=1000.
    expect(results[3]?.retryAfterMs).toBe(700);
  });

  it('counts any trailing window, not aligned ones: no boundary burst', async () => {
    const limiter = new SlidingLog({ limit: 5, windowMs: 1000 });
    for (let i = 0; i < 5; i++) await limiter.take('k', { now: 999 });
    const after = await limiter.take('k', { now: 1000 });
    expect(after.allowed).toBe(false);
    expect(after.retryAfterMs).toBe(999);
  });

  it('frees units in the order they were spent', async () => {
    const limiter = new SlidingLog({ limit: 4, windowMs: 1000 });
    await limiter.take('k', { now: 0, cost: 1 });
    await limiter.take('k', { now: 300, cost: 3 });
    const big = await limiter.take('k', { now: 500, cost: 2 });
    // One unit frees at 1000, three more at 1300: a cost of 2 fits at 1300.
    expect(big).toMatchObject({ allowed: false, remaining: 0, resetMs: 500, retryAfterMs: 800 });
    expect((await limiter.peek('k', { now: 1299, cost: 2 })).allowed).toBe(false);
    expect((await limiter.peek('k', { now: 1300, cost: 2 })).allowed).toBe(true);
  });

  it('a clock moved back shifts the log: nothing forgiven, nothing kept beyond the window', async () => {
    const limiter = new SlidingLog({ limit: 2, windowMs: 1000 });
    await limiter.take('k', { now: 50_000 });
    await limiter.take('k', { now: 50_400 });
    const back = 10_000;
    const afterJump = await limiter.take('k', { now: back });
    expect(afterJump.allowed).toBe(false);
    // The older entry keeps its 400 ms lead: it leaves 600 ms after the jump.
    expect(afterJump.retryAfterMs).toBe(600);
    expect((await limiter.peek('k', { now: back + 1000, cost: 2 })).allowed).toBe(true);
  });

  it('refunds remove exactly the refunded take', async () => {
    const limiter = new SlidingLog({ limit: 3, windowMs: 1000 });
    await limiter.take('k', { now: 0 });
    const second = await limiter.acquire('k', { now: 10, cost: 2 });
    expect(second.result.remaining).toBe(0);
    await second.refund();
    await second.refund(); // twice is once
    expect((await limiter.peek('k', { now: 10 })).remaining).toBe(2);
  });
});
