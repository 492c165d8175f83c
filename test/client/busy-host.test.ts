/**
 * A host with a call under way is never evicted, even in the turns where the call holds no slot,
 * no place in line and no sleep: between an attempt's answer and its retry's wait, while the retry
 * budget is asked of a store that answers asynchronously.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStateStore, type StateStore, type Transaction, wrapFetch } from '../../src/index.js';
import { FakeClock, flush, respond, scriptedFetch } from './helpers.js';

/**
 * A store over memory that answers asynchronously, and holds its `holdAt`th update (1-based)
 * until `release()`; `held` resolves when that update arrives.
 */
function gatedStore(clock: FakeClock, holdAt: number) {
  const memory = new MemoryStateStore({ clock });
  let calls = 0;
  let release = () => {};
  let arrived = () => {};
  const held = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const store: StateStore = {
    update<S, R>(key: string, transaction: Transaction<S, R>, ttlMs: number) {
      calls++;
      if (calls !== holdAt) return Promise.resolve(memory.update(key, transaction, ttlMs));
      arrived();
      return new Promise<R>((resolve) => {
        release = () => resolve(memory.update(key, transaction, ttlMs));
      });
    },
    delete: (key) => memory.delete(key),
  };
  return { store, held, release: () => release() };
}

describe('a busy host', () => {
  it('is kept while its call asks the store for a retry, when another host pushes it out', async () => {
    const clock = new FakeClock();
    // Updates of host A's call: 1 admit, 2 settle (the 503), 3 the retry budget: held.
    const gate = gatedStore(clock, 3);
    const fetch = scriptedFetch(clock, (call, i) =>
      call.url.startsWith('https://a.test') && i === 0 ? respond(503) : respond(200),
    );
    const client = wrapFetch(fetch, { clock, store: gate.store, maxHosts: 1 });
    const a = client('https://a.test/x');
    await gate.held;
    // Host B's first call: the registry is over its bound of one host, and sweeps host A.
    const b = await client('https://b.test/y');
    expect(b.status).toBe(200);
    gate.release();
    await flush();
    await clock.until(a);
    const response = await a;
    expect(response.status).toBe(200);
    expect(fetch.calls.map((c) => c.url)).toEqual([
      'https://a.test/x',
      'https://b.test/y',
      'https://a.test/x',
    ]);
    // Host A was kept past the bound while busy: both are there.
    expect(Object.keys(client.stats().hosts).sort()).toEqual(['https://a.test', 'https://b.test']);
    await client.close();
  });
});
