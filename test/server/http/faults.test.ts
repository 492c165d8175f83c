/**
 * Injected faults, on fake time: outages, resets before and after the side effect, latency and
 * slow bodies. Nothing here measures elapsed time; the fake clock says what the server waited.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer, type RouteConfig } from '../../../src/server/index.js';
import { FakeClock, until } from './helpers.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(route: Omit<RouteConfig, 'path'>, clock = new FakeClock()) {
  server = await createMockServer({ clock, routes: [{ path: '/op', ...route }] });
  return { server, clock, url: `${server.url}/op` };
}

describe('unavailable (503)', () => {
  it('answers 503 with Retry-After for a time span after the start, then recovers', async () => {
    const { url, clock, server } = await start({
      faults: { unavailable: { afterMs: 1000, forMs: 2000, retryAfterSeconds: 2 } },
    });
    expect((await fetch(url)).status).toBe(200);
    clock.advance(1000);
    const down = await fetch(url);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('2');
    clock.advance(1999);
    expect((await fetch(url)).status).toBe(503);
    clock.advance(1);
    expect((await fetch(url)).status).toBe(200);
    expect(server.stats().routes['* /op']).toMatchObject({ unavailable: 2, sideEffects: 2 });
  });

  it('fires with the configured probability, drawn from the clock, and without Retry-After', async () => {
    const { url, clock } = await start({ faults: { unavailable: { probability: 0.25 } } });
    clock.randomValue = 0.2;
    const down = await fetch(url);
    expect(down.status).toBe(503);
    expect(down.headers.has('retry-after')).toBe(false);
    clock.randomValue = 0.25;
    expect((await fetch(url)).status).toBe(200);
  });

  it('fires at most `times` times', async () => {
    const { url } = await start({ faults: { unavailable: { times: 2 } } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(url)).status);
    expect(statuses).toEqual([503, 503, 200, 200]);
  });
});

describe('connection resets', () => {
  it('before the handler: the request fails and nothing ran', async () => {
    const { url, server } = await start({
      faults: { reset: { when: 'before-handler', times: 1 } },
    });
    await expect(fetch(url, { method: 'POST' })).rejects.toThrow();
    expect(server.stats().routes['* /op']).toMatchObject({ resets: 1, sideEffects: 0 });
    expect((await fetch(url, { method: 'POST' })).status).toBe(200);
  });

  it('after the handler: the side effect ran once, and a retry with its key replays it', async () => {
    const { url, server } = await start({
      method: 'POST',
      faults: { reset: { when: 'after-handler' } },
    });
    const post = () =>
      fetch(url, {
        method: 'POST',
        headers: { 'idempotency-key': 'pay-1', 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 10 }),
      });
    await expect(post()).rejects.toThrow();
    expect(server.stats().sideEffects).toBe(1);
    const replay = await post();
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toMatchObject({ execution: 1, body: { amount: 10 } });
    expect(server.stats().routes['POST /op']).toMatchObject({
      admitted: 2,
      sideEffects: 1,
      resets: 1,
      replays: 1,
    });
  });
});

describe('server errors (a plain 5xx)', () => {
  it.each([500, 502, 503, 504] as const)(
    'after the handler: %i with no Retry-After, the side effect ran once, a retry with its key replays it',
    async (status) => {
      const { url, server } = await start({
        method: 'POST',
        faults: { serverError: { status, when: 'after-handler' } },
      });
      const post = () =>
        fetch(url, {
          method: 'POST',
          headers: { 'idempotency-key': 'pay-1', 'content-type': 'application/json' },
          body: JSON.stringify({ amount: 10 }),
        });
      const failed = await post();
      expect(failed.status).toBe(status);
      expect(failed.headers.has('retry-after')).toBe(false);
      expect(await failed.json()).toEqual({ error: 'server_error', route: 'POST /op' });
      expect(server.stats().sideEffects).toBe(1);
      const replay = await post();
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.json()).toMatchObject({ execution: 1 });
      expect(server.stats().routes['POST /op']).toMatchObject({
        sideEffects: 1,
        serverErrors: 1,
        replays: 1,
      });
    },
  );

  it('after the handler, without a key: every request runs its side effect, `times` bounds it', async () => {
    const { url, server } = await start({
      faults: { serverError: { status: 502, when: 'after-handler', times: 2 } },
    });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(url, { method: 'POST' })).status);
    expect(statuses).toEqual([502, 502, 200]);
    expect(server.stats().routes['* /op']).toMatchObject({ sideEffects: 3, serverErrors: 2 });
  });

  it('before the handler: nothing ran', async () => {
    const { url, server } = await start({
      faults: { serverError: { status: 500, when: 'before-handler', times: 1 } },
    });
    expect((await fetch(url, { method: 'POST' })).status).toBe(500);
    expect(server.stats().routes['* /op']).toMatchObject({ sideEffects: 0, serverErrors: 1 });
    expect((await fetch(url, { method: 'POST' })).status).toBe(200);
  });

  it('refuses a status that is not 500, 502, 503 or 504', async () => {
    await expect(
      start({ faults: { serverError: { status: 501 as never, when: 'after-handler' } } }),
    ).rejects.toThrow(
      'invalid option routes[0].faults.serverError.status: must be 500, 502, 503 or 504, got 501',
    );
  });
});

describe('latency and slow bodies', () => {
  it('holds the response for latencyMs on the server clock, drawn from a range', async () => {
    const { url, clock } = await start({ faults: { latencyMs: { min: 100, max: 200 } } });
    clock.randomValue = 0.5;
    const response = fetch(url);
    await until(() => clock.pending.length === 1, 'the handler to sleep');
    expect(clock.pending).toEqual([150]);
    clock.advance(150);
    expect((await response).status).toBe(200);
  });

  it('sends the body a chunk at a time', async () => {
    const { url, clock } = await start({
      response: { body: 'abcdefghij' },
      faults: { slowBody: { chunkBytes: 4, intervalMs: 50 } },
    });
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    // The first chunk comes with the headers; the server then waits on its clock.
    const first = await reader.read();
    expect(decoder.decode(first.value)).toBe('"abc');
    expect(clock.pending).toEqual([50]);
    let rest = '';
    let finished = false;
    const reading = (async () => {
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        rest += decoder.decode(next.value);
      }
      finished = true;
    })();
    while (!finished) {
      await until(() => finished || clock.pending.length > 0, 'a chunk or the end');
      if (clock.pending.length > 0) clock.advance(50);
    }
    await reading;
    expect(rest).toBe('defghij"');
    expect(clock.slept).toEqual([50, 50]);
  });
});
