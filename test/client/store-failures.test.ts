/**
 * A state store that fails (a Redis that times out, say) must never cost a caller the response
 * the server sent, nor leave a concurrency slot or an in-flight count taken.
 */
import { describe, expect, it } from 'vitest';
import {
  type ClientEvents,
  LimitedClient,
  type LimitedClientOptions,
  MemoryStateStore,
  type StateStore,
  type Transaction,
} from '../../src/index.js';
import { FakeClock, type Handler, respond, scriptedFetch } from './helpers.js';

/**
 * A store over memory whose `failAt` updates (1-based) fail: asynchronously (a rejected promise,
 * as a network store would) or synchronously (a throw).
 */
function flakyStore(clock: FakeClock, failAt: number[], mode: 'reject' | 'throw' = 'reject') {
  const memory = new MemoryStateStore({ clock });
  let calls = 0;
  const store: StateStore = {
    update<S, R>(key: string, transaction: Transaction<S, R>, ttlMs: number) {
      calls++;
      if (failAt.includes(calls)) {
        const error = new Error(`store down (update ${calls})`);
        if (mode === 'throw') throw error;
        return Promise.reject(error);
      }
      return Promise.resolve(memory.update(key, transaction, ttlMs));
    },
    delete: (key) => memory.delete(key),
  };
  return store;
}

function setup(
  handler: Handler,
  failAt: number[],
  options: LimitedClientOptions = {},
  mode: 'reject' | 'throw' = 'reject',
) {
  const clock = new FakeClock();
  const fetch = scriptedFetch(clock, handler);
  const store = flakyStore(clock, failAt, mode);
  const client = new LimitedClient('https://api.example.com', {
    fetch,
    clock,
    store,
    ...options,
  });
  const failures: ClientEvents['store-error'][] = [];
  client.on('store-error', (e) => failures.push(e));
  const host = () => client.stats().hosts['https://api.example.com'];
  return { clock, fetch, client, failures, host };
}

describe('a store that fails', () => {
  it('while settling: the caller gets the response and the slot comes back', async () => {
    // Update 1 admits, update 2 settles the first attempt.
    const { clock, fetch, client, failures, host } = setup(() => respond(201), [2], {
      concurrency: 1,
      coldStart: false,
    });
    const first = await client.post('/charge', { amount: 5 });
    expect(first.status).toBe(201);
    // The response's slot comes back with its body's end (read here).
    await first.text();
    expect(host()?.inFlight).toBe(0);
    expect(failures).toMatchObject([{ operation: 'settle', method: 'POST' }]);
    const second = client.get('/x');
    await clock.until(second, 1000);
    expect((await second).status).toBe(201);
    expect(fetch.calls).toHaveLength(2);
  });

  it('while settling during cold start: the lost count ages out, the next request goes', async () => {
    const { clock, client, host } = setup(() => respond(200), [2]);
    expect((await client.get('/a')).status).toBe(200);
    expect(host()?.inFlight).toBe(0);
    const next = client.get('/b');
    await clock.until(next, 5000);
    expect((await next).status).toBe(200);
  });

  it('when it throws synchronously, the same holds', async () => {
    const { client, host } = setup(
      () => respond(200),
      [2],
      { coldStart: false, concurrency: 1 },
      'throw',
    );
    const a = await client.get('/a');
    expect(a.status).toBe(200);
    await a.text(); // its slot comes back with its body's end
    expect(host()?.inFlight).toBe(0);
    expect((await client.get('/b')).status).toBe(200);
  });

  it('while taking a retry from the budget: the caller gets the last response, not the error', async () => {
    // 1 admit, 2 settle, 3 the retry budget.
    const { fetch, client, failures } = setup(() => respond(503), [3], { coldStart: false });
    const gaveUp: ClientEvents['give-up'][] = [];
    client.on('give-up', (e) => gaveUp.push(e));
    const response = await client.get('/x');
    expect(response.status).toBe(503);
    expect(fetch.calls).toHaveLength(1);
    expect(gaveUp).toMatchObject([{ reason: 'store-error', status: 503 }]);
    expect(failures).toMatchObject([{ operation: 'retry-budget' }]);
  });
});
