/**
 * `Idempotency-Key`: one side effect per key, replays, and refusals, over real HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ENTRY_OVERHEAD_BYTES } from '../../../src/server/http/idempotency.js';
import {
  createMockServer,
  type MockServer,
  type MockServerConfig,
} from '../../../src/server/index.js';
import { collectGarbage, FakeClock, heldBytes, until } from './helpers.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(config: Partial<MockServerConfig> = {}, clock = new FakeClock()) {
  server = await createMockServer({
    clock,
    routes: [{ method: 'POST', path: '/payments', faults: { latencyMs: 0 } }],
    ...config,
  });
  const pay = (key: string | undefined, body: unknown, header = 'idempotency-key') =>
    fetch(`${server?.url}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { [header]: key } : {}) },
      body: JSON.stringify(body),
    });
  return { server, clock, pay };
}

describe('Idempotency-Key', () => {
  it('runs the side effect once per key and replays the stored response', async () => {
    const { server, pay } = await start();
    const first = await pay('k1', { amount: 5 });
    const again = await pay('k1', { amount: 5 });
    expect(first.headers.has('idempotent-replayed')).toBe(false);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());
    await pay('k2', { amount: 5 });
    expect(server.stats()).toMatchObject({ admitted: 3, sideEffects: 2 });
  });

  it('echoes the key on every answer of a route that honours it, and not where it is ignored', async () => {
    const { pay } = await start({
      idempotency: { header: 'X-Idem' },
      routes: [
        { method: 'POST', path: '/payments' },
        { method: 'POST', path: '/ignored', idempotency: false },
      ],
    });
    const first = await pay('k1', { amount: 5 }, 'x-idem');
    expect(first.headers.get('x-idem')).toBe('k1');
    const replayed = await pay('k1', { amount: 5 }, 'x-idem');
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.headers.get('x-idem')).toBe('k1');
    const reused = await pay('k1', { amount: 6 }, 'x-idem');
    expect(reused.status).toBe(422);
    expect(reused.headers.get('x-idem')).toBe('k1');
    expect((await pay(undefined, {}, 'x-idem')).headers.has('x-idem')).toBe(false);
    const ignored = await fetch(`${server?.url}/ignored`, {
      method: 'POST',
      headers: { 'x-idem': 'k1' },
    });
    expect(ignored.status).toBe(200);
    expect(ignored.headers.has('x-idem')).toBe(false);
  });

  it('echoes the key on a 429 too', async () => {
    const { pay } = await start({
      routes: [
        {
          method: 'POST',
          path: '/payments',
          limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 60_000 }],
        },
      ],
    });
    await pay('k1', {});
    const refused = await pay('k2', {});
    expect(refused.status).toBe(429);
    expect(refused.headers.get('idempotency-key')).toBe('k2');
  });

  it('without a key, every request runs its side effect', async () => {
    const { server, pay } = await start();
    await pay(undefined, {});
    await pay(undefined, {});
    expect(server.stats().sideEffects).toBe(2);
  });

  it('the same key with a different body is a 422, and runs nothing', async () => {
    const { server, pay } = await start();
    await pay('k1', { amount: 5 });
    const reused = await pay('k1', { amount: 6 });
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({ error: 'idempotency_key_reused' });
    expect(server.stats().routes['POST /payments']).toMatchObject({
      sideEffects: 1,
      idempotencyConflicts: 1,
    });
  });

  it('a repeat while the first is still being handled is a 409', async () => {
    const { server, pay, clock } = await start({
      routes: [{ method: 'POST', path: '/payments', faults: { latencyMs: 500 } }],
    });
    const first = pay('k1', { amount: 5 });
    await until(() => clock.pending.length === 1, 'the first to be in its handler');
    const second = await pay('k1', { amount: 5 });
    expect(second.status).toBe(409);
    clock.advance(500);
    expect((await first).status).toBe(200);
    expect((await pay('k1', { amount: 5 })).headers.get('idempotent-replayed')).toBe('true');
    expect(server.stats().sideEffects).toBe(1);
  });

  it('honours a configured header name and expiry, and can be turned off per route', async () => {
    const { server, pay, clock } = await start({
      idempotency: { header: 'X-Request-Id', ttlMs: 1000 },
      routes: [
        { method: 'POST', path: '/payments' },
        { method: 'POST', path: '/events', idempotency: false },
      ],
    });
    await pay('r1', {}, 'x-request-id');
    await pay('r1', {}, 'x-request-id');
    expect(server.stats().sideEffects).toBe(1);
    clock.advance(1000);
    await pay('r1', {}, 'x-request-id');
    expect(server.stats().sideEffects).toBe(2);
    for (let i = 0; i < 2; i++) {
      await fetch(`${server.url}/events`, { method: 'POST', headers: { 'x-request-id': 'e' } });
    }
    expect(server.stats().routes['POST /events']?.sideEffects).toBe(2);
  });

  it('a request rejected by its limits never claims the key', async () => {
    const { server, pay, clock } = await start({
      routes: [
        {
          method: 'POST',
          path: '/payments',
          limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 1000 }],
        },
      ],
    });
    await pay('other', {});
    expect((await pay('k1', {})).status).toBe(429);
    clock.advance(1000);
    const later = await pay('k1', {});
    expect(later.status).toBe(200);
    expect(later.headers.has('idempotent-replayed')).toBe(false);
    expect(server.stats().sideEffects).toBe(2);
  });
});

describe('Idempotency-Key store bounds', () => {
  const entryBytes = (label: string, key: string) =>
    label.length + 1 + key.length + 43 + ENTRY_OVERHEAD_BYTES;

  it('stores no copy of a response: 8 POSTs of 1 MiB with fresh keys hold a few KB', async () => {
    const { server } = await start({ routes: [{ method: 'POST', path: '/payments' }] });
    // Control bytes: the echo JSON-escapes each into six, a 6 MiB response per request.
    const body = Buffer.alloc(1024 * 1024 - 1, 1);
    const post = (key: string) =>
      fetch(`${server.url}/payments`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'idempotency-key': key },
        body,
      });
    collectGarbage();
    const before = heldBytes();
    for (let i = 0; i < 8; i++) {
      const response = await post(`fresh-${i}`);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    // The last exchange's buffers (the 6 MiB answer in the sockets, on both sides) go a moment
    // after the client has read it: let them, then measure what stays.
    await until(() => server.stats().held.requests === 0, 'the last exchange to end');
    await new Promise((resolve) => setTimeout(resolve, 200));
    collectGarbage();
    const grown = heldBytes() - before;
    expect(server.stats().held).toMatchObject({
      idempotencyKeys: 8,
      idempotencyBytes: 8 * entryBytes('POST /payments', 'fresh-0'),
    });
    // Stored as copies, these would be 48 MiB.
    expect(grown).toBeLessThan(12 * 1024 * 1024);
    // And the replay is the original, byte for byte.
    const original = await (await post('again')).text();
    const replay = await post('again');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(original);
  });

  it('replays the original echo even when the repeat says another Content-Type', async () => {
    const { server } = await start();
    const send = (type: string) =>
      fetch(`${server.url}/payments`, {
        method: 'POST',
        headers: { 'content-type': type, 'idempotency-key': 'k' },
        body: '{"amount":5}',
      });
    const original = await (await send('application/json')).json();
    expect(original).toMatchObject({ body: { amount: 5 }, execution: 1 });
    expect(await (await send('text/plain')).json()).toEqual(original);
  });

  it('keeps at most maxBytes, dropping the oldest key first', async () => {
    const maxBytes = 3 * entryBytes('POST /payments', 'k-1');
    const { server, pay } = await start({ idempotency: { maxBytes } });
    for (const key of ['k-1', 'k-2', 'k-3']) await pay(key, {});
    expect(server.stats().held).toMatchObject({ idempotencyKeys: 3, idempotencyBytes: maxBytes });
    await pay('k-4', {});
    expect(server.stats().held).toMatchObject({ idempotencyKeys: 3, idempotencyBytes: maxBytes });
    // k-1 was dropped: its repeat runs again; k-4 (and k-2, k-3) replay.
    expect((await pay('k-4', {})).headers.get('idempotent-replayed')).toBe('true');
    expect((await pay('k-2', {})).headers.get('idempotent-replayed')).toBe('true');
    expect((await pay('k-1', {})).headers.has('idempotent-replayed')).toBe(false);
    expect(server.stats().sideEffects).toBe(5);
  });

  it('keeps at most maxEntries keys, dropping the oldest first', async () => {
    const { server, pay } = await start({ idempotency: { maxEntries: 2 } });
    for (const key of ['a', 'b', 'c']) await pay(key, {});
    expect(server.stats().held.idempotencyKeys).toBe(2);
    expect((await pay('c', {})).headers.get('idempotent-replayed')).toBe('true');
    expect((await pay('a', {})).headers.has('idempotent-replayed')).toBe(false);
  });

  it('keeps a key over 128 characters as its hash: bounded, and still one key per value', async () => {
    const { server, pay } = await start();
    const long = 'k'.repeat(10_000);
    await pay(`${long}1`, {});
    const bytes = server.stats().held.idempotencyBytes;
    expect(bytes).toBe(entryBytes('POST /payments', `sha256:${'x'.repeat(43)}`));
    expect((await pay(`${long}1`, {})).headers.get('idempotent-replayed')).toBe('true');
    expect((await pay(`${long}2`, {})).headers.has('idempotent-replayed')).toBe(false);
    expect(server.stats().sideEffects).toBe(2);
  });
});
