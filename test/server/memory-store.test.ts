import { describe, expect, it } from 'vitest';
import {
  ConcurrencyLimit,
  FixedWindow,
  MemoryStore,
  SlidingLog,
  TokenBucket,
} from '../../src/server/index.js';

describe('MemoryStore', () => {
  it('a million distinct keys never hold more than a small multiple of the live ones', async () => {
    const store = new MemoryStore();
    // One new key per millisecond, each live for one 1-second window: about 1000 live at a time.
    const limiter = new FixedWindow({ limit: 10, windowMs: 1000, store });
    let largest = 0;
    for (let i = 0; i < 1_000_000; i++) {
      await limiter.take(`client-${i}`, { now: i });
      if (i % 1000 === 0) largest = Math.max(largest, store.size);
    }
    expect(largest).toBeGreaterThanOrEqual(1000);
    expect(largest).toBeLessThanOrEqual(3000);
  });

  it('idle keys go once the clock has moved past their expiry, driven by later traffic', async () => {
    const store = new MemoryStore();
    const bucket = new TokenBucket({ capacity: 5, refillPerSecond: 1, store });
    for (let i = 0; i < 10_000; i++) await bucket.take(`k${i}`, { now: 0, cost: 5 });
    expect(store.size).toBe(10_000);
    // Full again after 5 s; one busy key's traffic sweeps the idle ones away.
    for (let i = 0; i < 6000; i++) await bucket.take('busy', { now: 5002 + i });
    expect(store.size).toBe(1);
  });

  it('prune() drops every expired key at once, and keeps live ones', async () => {
    const store = new MemoryStore();
    const log = new SlidingLog({ limit: 3, windowMs: 1000, store });
    for (let i = 0; i < 100; i++) await log.take(`k${i}`, { now: i * 10 });
    expect(store.prune(1495)).toBe(50); // keys of 0..490 expired; 500..990 live
    expect(store.size).toBe(50);
    store.clear();
    expect(store.size).toBe(0);
  });

  it('never evicts a concurrency key with slots in flight, and drops it once released', async () => {
    const store = new MemoryStore();
    const slots = new ConcurrencyLimit({ limit: 1, store });
    const window = new FixedWindow({ limit: 1, windowMs: 10, store });
    await slots.take('held', { now: 0 });
    for (let i = 0; i < 1000; i++) await window.take(`w${i}`, { now: 1_000_000 + i });
    expect((await slots.take('held', { now: 2_000_000 })).allowed).toBe(false);
    await slots.release('held');
    expect(store.prune(3_000_000)).toBeGreaterThan(0);
    expect(store.size).toBe(0);
  });

  it('keeps limiters sharing a store apart by name', async () => {
    const store = new MemoryStore();
    const a = new FixedWindow({ limit: 1, windowMs: 1000, store, name: 'a' });
    const b = new FixedWindow({ limit: 1, windowMs: 1000, store, name: 'b' });
    expect((await a.take('k', { now: 0 })).allowed).toBe(true);
    expect((await b.take('k', { now: 0 })).allowed).toBe(true);
    expect((await a.take('k', { now: 0 })).allowed).toBe(false);
  });

  it('holds at most maxKeys live keys, evicting ones not used lately', async () => {
    const store = new MemoryStore({ maxKeys: 1000 });
    const window = new FixedWindow({ limit: 1, windowMs: 3_600_000, store });
    for (let i = 0; i < 1000; i++) await window.take(`k${i}`, { now: 0 });
    expect(store.size).toBe(1000);
    expect(store.evicted).toBe(0);
    await window.take('k1000', { now: 0 });
    expect(store.size).toBe(1000);
    expect(store.evicted).toBe(1);
    for (let i = 1001; i < 5000; i++) await window.take(`k${i}`, { now: 0 });
    expect(store.size).toBe(1000);
    expect(store.evicted).toBe(4000);
  });

  it('keeps a key in use through a flood of fresh keys: no fresh quota by eviction', async () => {
    const store = new MemoryStore({ maxKeys: 100 });
    const window = new FixedWindow({ limit: 1, windowMs: 3_600_000, store });
    expect((await window.take('victim', { now: 0 })).allowed).toBe(true);
    for (let round = 0; round < 500; round++) {
      for (let i = 0; i < 10; i++) await window.take(`flood-${round}-${i}`, { now: 0 });
      // Rejected takes count as use: the key at its limit is the one an attacker wants evicted.
      expect((await window.take('victim', { now: 0 })).allowed).toBe(false);
    }
    expect(store.size).toBe(100);
    expect(store.evicted).toBe(4901);
  });

  it('never evicts a concurrency key with slots in flight to make room', async () => {
    const store = new MemoryStore({ maxKeys: 10 });
    const slots = new ConcurrencyLimit({ limit: 1, store });
    const window = new FixedWindow({ limit: 1, windowMs: 3_600_000, store });
    for (let i = 0; i < 5; i++) await slots.take(`held-${i}`, { now: 0 });
    for (let i = 0; i < 1000; i++) await window.take(`w${i}`, { now: 0 });
    for (let i = 0; i < 5; i++) {
      expect((await slots.take(`held-${i}`, { now: 0 })).allowed).toBe(false);
    }
    expect(store.size).toBe(10);
  });

  it('acquireNow decides as acquire does, without a promise, and refunds alike', async () => {
    const sync = new ConcurrencyLimit({ limit: 2 });
    const async = new ConcurrencyLimit({ limit: 2 });
    const got = [];
    for (let i = 0; i < 3; i++) {
      const now = sync.acquireNow('k', { now: 1000 + i });
      const later = await async.acquire('k', { now: 1000 + i });
      expect(now?.result).toEqual(later.result);
      got.push(now);
    }
    expect(got.map((a) => a?.result.allowed)).toEqual([true, true, false]);
    const { refund } = got[0] ?? { refund: async () => {} };
    await refund();
    await refund();
    expect((await sync.peek('k')).remaining).toBe(1);
  });

  it('acquireNow is undefined for a store that does not decide in this process', async () => {
    const inner = new MemoryStore();
    const store = {
      take: inner.take.bind(inner),
      peek: inner.peek.bind(inner),
      refund: inner.refund.bind(inner),
    };
    const limiter = new FixedWindow({ limit: 1, windowMs: 1000, store });
    expect(limiter.acquireNow('k')).toBeUndefined();
    expect((await limiter.acquire('k')).result.allowed).toBe(true);
  });

  it('acquireNow leaves a memory store whose take was replaced to that take', async () => {
    const store = new MemoryStore();
    const inner = store.take.bind(store);
    let calls = 0;
    store.take = (spec, key, request) => {
      calls += 1;
      return inner(spec, key, request);
    };
    const limiter = new FixedWindow({ limit: 1, windowMs: 1000, store });
    expect(limiter.acquireNow('k')).toBeUndefined();
    await limiter.acquire('k');
    expect(calls).toBe(1);
  });

  it('rejects bad options', () => {
    expect(() => new MemoryStore({ sweepPerOperation: 0 })).toThrow(/sweepPerOperation/);
    expect(() => new MemoryStore({ maxKeys: 0 })).toThrow(/maxKeys/);
  });
});
