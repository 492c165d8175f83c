import { describe, expect, it } from 'vitest';
import {
  MemoryStateStore,
  type StateStore,
  type Transaction,
  updateAt,
} from '../../src/client/host/store.js';
import type { Clock } from '../../src/shared/clock.js';
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

/** A clock that counts its reads: what `updateAt` saves is a read. */
function countingClock(at: number): Clock & { reads: number } {
  const clock = new FakeClock(at);
  const counted = Object.assign(Object.create(clock) as FakeClock, { reads: 0 });
  counted.now = () => {
    counted.reads++;
    return clock.now();
  };
  return counted;
}

describe('updateAt', () => {
  it('gives a memory store on the same clock the time its caller read, without a read', () => {
    const clock = countingClock(5000);
    const store = new MemoryStateStore({ clock });
    expect(updateAt(store, 'a', inc, 1000, clock, 5000)).toBe(1);
    expect(clock.reads).toBe(0);
    // Expiry counts from the time given: 1000 ms after each update, the state is gone.
    expect(updateAt(store, 'a', inc, 1000, clock, 5999)).toBe(2);
    expect(updateAt(store, 'a', inc, 1000, clock, 6998)).toBe(3);
    expect(updateAt(store, 'a', inc, 1000, clock, 7998)).toBe(1);
    expect(clock.reads).toBe(0);
  });

  it('reads the clock of a memory store on another clock', () => {
    const own = countingClock(0);
    const store = new MemoryStateStore({ clock: own });
    updateAt(store, 'a', inc, 1000, new FakeClock(0), 0);
    // The caller's time is on another clock: an hour on, the store's own still keeps the state.
    expect(updateAt(store, 'a', inc, 1000, new FakeClock(0), 3_600_000)).toBe(2);
    expect(own.reads).toBe(2);
  });

  it("calls a subclass's own update, and any other store's", () => {
    const clock = new FakeClock(0);
    const seen: string[] = [];
    class Logged extends MemoryStateStore {
      override update<S, R>(key: string, transaction: Transaction<S, R>, ttlMs: number): R {
        seen.push(`sub ${key}`);
        return super.update(key, transaction, ttlMs);
      }
    }
    const other: StateStore = {
      update(key, transaction) {
        seen.push(`other ${key}`);
        return transaction.run(undefined)[1];
      },
      delete() {},
    };
    expect(updateAt(new Logged({ clock }), 'a', inc, 1000, clock, 0)).toBe(1);
    expect(updateAt(other, 'b', inc, 1000, clock, 0)).toBe(1);
    expect(seen).toEqual(['sub a', 'other b']);
  });
});
