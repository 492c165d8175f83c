import { describe, expect, it } from 'vitest';
import { LeakyBucket } from '../../src/server/index.js';

describe('LeakyBucket', () => {
  it('queues requests at the drain pace and rejects those that do not fit', async () => {
    const queue = new LeakyBucket({ rate: 1, capacity: 3 });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await queue.take('k', { now: 0 }));
    expect(results.map((r) => r.delayMs)).toEqual([0, 1000, 2000, undefined]);
    expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
    expect(results[3]).toEqual({
      allowed: false,
      limit: 3,
      remaining: 0,
      resetMs: 1000,
      retryAfterMs: 1000,
    });
  });

  it('serves a late arrival at its turn, counting the time already drained', async () => {
    const queue = new LeakyBucket({ rate: 4, capacity: 10 });
    await queue.take('k', { now: 0, cost: 3 }); // drains until 750
    expect(await queue.take('k', { now: 500 })).toMatchObject({ allowed: true, delayMs: 250 });
    expect(await queue.take('k', { now: 2000 })).toMatchObject({ allowed: true, delayMs: 0 });
  });

  it('retryAfterMs is exact', async () => {
    const queue = new LeakyBucket({ rate: 3, capacity: 2 });
    const now = 1_764_500_000_001;
    await queue.take('k', { now, cost: 2 });
    const rejected = await queue.take('k', { now });
    expect(rejected.retryAfterMs).toBe(334);
    expect((await queue.peek('k', { now: now + 333 })).allowed).toBe(false);
    expect((await queue.peek('k', { now: now + 334 })).allowed).toBe(true);
  });

  it('a refund frees the turn only while it is the tail of the queue', async () => {
    const queue = new LeakyBucket({ rate: 1, capacity: 5 });
    const first = await queue.acquire('k', { now: 0 });
    const second = await queue.acquire('k', { now: 0 });
    await first.refund(); // someone waits behind it: its turn stays used
    expect((await queue.peek('k', { now: 0 })).remaining).toBe(3);
    await second.refund(); // the tail: given back
    expect((await queue.peek('k', { now: 0 })).remaining).toBe(4);
  });
});
