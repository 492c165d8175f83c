import { describe, expect, it } from 'vitest';
import {
  type ClientEvents,
  isClientClosedError,
  isInvalidOptionError,
  LimitedClient,
  MemoryStateStore,
} from '../../src/index.js';
import { FakeClock, flush, respond, scriptedFetch } from './helpers.js';

function client(handler = () => respond(200), options = {}) {
  const clock = new FakeClock();
  const fetch = scriptedFetch(clock, handler);
  const c = new LimitedClient('https://api.example.com/v1', { fetch, clock, ...options });
  return { c, clock, fetch };
}

describe('LimitedClient', () => {
  it('sends each verb to the base URL joined with the path', async () => {
    const { c, fetch } = client();
    await c.get('users');
    await c.get('/users?page=2');
    await c.head('users/1');
    await c.delete('/users/1');
    await c.put('users/1', { name: 'a' });
    await c.patch('users/1', { name: 'b' });
    await c.post('users', { name: 'c' });
    await c.request('https://other.example.org/x');
    await c.fetch('/items');
    expect(fetch.calls.map((x) => `${x.method} ${x.url}`)).toEqual([
      'GET https://api.example.com/v1/users',
      'GET https://api.example.com/v1/users?page=2',
      'HEAD https://api.example.com/v1/users/1',
      'DELETE https://api.example.com/v1/users/1',
      'PUT https://api.example.com/v1/users/1',
      'PATCH https://api.example.com/v1/users/1',
      'POST https://api.example.com/v1/users',
      'GET https://other.example.org/x',
      'GET https://api.example.com/v1/items',
    ]);
    expect(Object.keys(c.stats().hosts).sort()).toEqual([
      'https://api.example.com',
      'https://other.example.org',
    ]);
  });

  it('sends JSON bodies with their content type, and keys writes', async () => {
    const { c, fetch } = client();
    await c.post('orders', { sku: 'x', qty: 2 });
    const call = fetch.calls[0];
    expect(call?.body).toBe('{"sku":"x","qty":2}');
    expect(call?.headers.get('content-type')).toBe('application/json');
    expect(call?.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    await c.put('orders/1', 'plain text', { headers: { 'content-type': 'text/plain' } });
    expect(fetch.calls[1]?.body).toBe('plain text');
    expect(fetch.calls[1]?.headers.has('idempotency-key')).toBe(false);
  });

  it('accepts a Request', async () => {
    const { c, fetch } = client();
    await c.request(new Request('https://api.example.com/v1/r', { method: 'DELETE' }));
    expect(fetch.calls[0]?.method).toBe('DELETE');
  });

  it('sends client-wide headers under the call headers', async () => {
    const { c, fetch } = client(undefined, { headers: { authorization: 'Bearer t', accept: 'a' } });
    await c.get('x', { headers: { accept: 'b' } });
    expect(fetch.calls[0]?.headers.get('authorization')).toBe('Bearer t');
    expect(fetch.calls[0]?.headers.get('accept')).toBe('b');
  });

  it('resolves to error responses as fetch does', async () => {
    const { c } = client(() => respond(404, {}, 'nope'));
    const r = await c.get('missing');
    expect(r.status).toBe(404);
    expect(await r.text()).toBe('nope');
  });

  it('throws InvalidOptionError at construction', () => {
    expect(() => new LimitedClient('https://a.com', { concurrency: -1 })).toThrow(
      'invalid option concurrency',
    );
    try {
      new LimitedClient('https://a.com', { maxQueue: 1.5 });
    } catch (e) {
      expect(isInvalidOptionError(e)).toBe(true);
    }
  });

  it('emits typed events; on returns a disposer and off removes', async () => {
    let status = 429;
    const { c, clock } = client(() => respond(status, { 'retry-after': '1' }));
    const seen: ClientEvents['rate-limited'][] = [];
    const retries: number[] = [];
    const dispose = c.on('rate-limited', (e) => seen.push(e));
    const onRetry = (e: ClientEvents['retry']) => retries.push(e.delayMs);
    c.on('retry', onRetry);
    const p = c.get('x');
    await flush();
    status = 200;
    await clock.until(p);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      origin: 'https://api.example.com',
      status: 429,
      retryAfterMs: 1000,
    });
    expect(retries).toHaveLength(1);
    dispose();
    c.off('retry', onRetry);
    status = 429;
    const q = c.get('y');
    await flush();
    status = 200;
    await clock.until(q);
    expect(seen).toHaveLength(1);
    expect(retries).toHaveLength(1);
  });

  it('counts per host in stats()', async () => {
    let n = 0;
    const { c, clock } = client(() => (n++ === 0 ? respond(503) : respond(200)));
    const p = c.get('x');
    await clock.until(p);
    const s = c.stats().hosts['https://api.example.com'];
    expect(s).toMatchObject({
      requests: 1,
      attempts: 2,
      responses: 2,
      retries: 1,
      circuit: 'closed',
      mode: 'blind',
    });
    expect(c.stats().totals).toMatchObject({ requests: 1, attempts: 2, retries: 1 });
  });

  it('close() refuses new calls, drops queued ones, and lets attempts in flight finish without a retry', async () => {
    const clock = new FakeClock();
    const fetch = scriptedFetch(clock, (call) =>
      clock.sleep(1000).then(() => respond(call.url.endsWith('/failing') ? 503 : 200)),
    );
    const c = new LimitedClient('https://api.example.com', {
      fetch,
      clock,
      concurrency: 2,
      coldStart: false,
    });
    const final = c.get('ok');
    const failing = c.get('failing').catch((e) => e);
    const queued = c.get('queued').catch((e) => e);
    await flush();
    expect(fetch.calls).toHaveLength(2); // both in flight, the third in the queue
    await c.close();
    expect(isClientClosedError(await queued)).toBe(true);
    await clock.until(Promise.all([final, failing]));
    // The attempt in flight finished: its final answer comes back...
    expect((await final).status).toBe(200);
    // ...and the one that would need a retry gets none.
    expect(isClientClosedError(await failing)).toBe(true);
    await clock.advance(10_000);
    expect(fetch.calls).toHaveLength(2);
    await expect(c.get('c')).rejects.toThrow('the client is closed');
  });
});

describe('stats()', () => {
  it("only looks: it does not keep an idle host's state alive", async () => {
    const clock = new FakeClock();
    const store = new MemoryStateStore({ clock });
    const fetch = scriptedFetch(clock, () => respond(200));
    const c = new LimitedClient('https://api.example.com', {
      fetch,
      clock,
      store,
      hostIdleMs: 1000,
    });
    await c.get('x');
    expect(c.stats().hosts['https://api.example.com']?.mode).toBe('blind');
    // The host's state is in the store under its origin, until it has been idle long enough.
    expect(store.get('https://api.example.com')).toBeDefined();
    for (let i = 0; i < 4; i++) {
      await clock.advance(500);
      c.stats();
    }
    expect(store.get('https://api.example.com')).toBeUndefined();
  });
});

describe('base URL', () => {
  it('ignores a query or fragment on the base and keeps the path prefix', async () => {
    const clock = new FakeClock();
    const fetch = scriptedFetch(clock, () => respond(200));
    const c = new LimitedClient('https://api.example.com/v2?key=x#top', { fetch, clock });
    await c.get('items?page=1');
    expect(fetch.calls[0]?.url).toBe('https://api.example.com/v2/items?page=1');
  });
});
