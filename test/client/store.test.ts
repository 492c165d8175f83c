import { describe, expect, it } from 'vitest';
import { MemoryStateStore, type Transaction } from '../../src/client/store.js';
import { FakeClock } from './helpers.js';

const inc: Transaction<number, number> = {
  run: (state) => {
    const next = (state ?? 0) + 1;
    return [next, next];
  },
};

describe('MemoryStateStore', () => {
  it('runs a transaction on the current state and answers synchronously', () => {
    const store = new MemoryStateStore({ clock: new FakeClock(0) });
    expect(store.update('a', inc, 1000)).toBe(1);
    expect(store.update('a', inc, 1000)).toBe(2);
    expect(store.update('b', inc, 1000)).toBe(1);
  });

  it('deletes a key whose transaction returns undefined', () => {
    const store = new MemoryStateStore({ clock: new FakeClock(0) });
    store.update('a', inc, 1000);
    store.update('a', { run: () => [undefined, null] }, 1000);
    expect(store.size).toBe(0);
  });

  it('forgets a key ttl after its last update', async () => {
    const clock = new FakeClock(0);
    const store = new MemoryStateStore({ clock });
    store.update('a', inc, 1000);
    await clock.advance(999);
    expect(store.update('a', inc, 1000)).toBe(2);
    await clock.advance(1000);
    expect(store.update('a', inc, 1000)).toBe(1);
  });

  it('keeps at most maxKeys, dropping the least recently updated', () => {
    const store = new MemoryStateStore({ clock: new FakeClock(0), maxKeys: 100 });
    for (let i = 0; i < 100_000; i++) store.update(`host-${i}`, inc, 60_000);
    expect(store.size).toBe(100);
    expect(store.update('host-99999', inc, 60_000)).toBe(2);
    expect(store.update('host-0', inc, 60_000)).toBe(1);
  });

  it('drops expired keys as new ones arrive', async () => {
    const clock = new FakeClock(0);
    const store = new MemoryStateStore({ clock });
    for (let i = 0; i < 50; i++) store.update(`old-${i}`, inc, 1000);
    await clock.advance(2000);
    store.update('new', inc, 1000);
    expect(store.size).toBe(1);
  });
});
