/**
 * `Idempotency-Key`: one side effect per key, replays, and refusals, over real HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMockServer,
  type MockServer,
  type MockServerConfig,
} from '../../../src/server/index.js';
import { FakeClock, until } from './helpers.js';

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
