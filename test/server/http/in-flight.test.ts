/**
 * What holds a request open: concurrency slots (released on finish and on abort), leaky-bucket
 * turns, and the server's own close().
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../../src/server/index.js';
import { FakeClock, until } from './helpers.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('concurrency limit over HTTP', () => {
  async function start(clock: FakeClock) {
    server = await createMockServer({
      clock,
      routes: [
        {
          path: '/render',
          faults: { latencyMs: 1000 },
          limits: [{ algorithm: 'concurrency', limit: 1, retryAfterMs: 300, name: 'renders' }],
        },
      ],
    });
    return `${server.url}/render`;
  }

  it('holds the slot until the response finishes', async () => {
    const clock = new FakeClock();
    const url = await start(clock);
    const first = fetch(url);
    await until(() => clock.pending.length === 1, 'the first request to be working');
    const second = await fetch(url);
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(await second.json()).toMatchObject({ policy: 'renders', retryAfterMs: 300 });
    clock.advance(1000);
    expect((await first).status).toBe(200);
    const third = fetch(url);
    await until(() => clock.pending.length === 1, 'the third request to be admitted');
    clock.advance(1000);
    expect((await third).status).toBe(200);
  });

  it('releases the slot as soon as the client aborts', async () => {
    const clock = new FakeClock();
    const url = await start(clock);
    const abort = new AbortController();
    const first = fetch(url, { signal: abort.signal });
    await until(() => clock.pending.length === 1, 'the first request to be working');
    abort.abort();
    await expect(first).rejects.toThrow();
    // The handler is still working (its work outlives the client), but the slot is free as soon
    // as the server has seen the abort: probe until a request is admitted.
    let admitted = false;
    for (let attempt = 0; attempt < 100 && !admitted; attempt++) {
      let answered = false;
      const probe = fetch(url).then((r) => {
        answered = true;
        return r;
      });
      await until(
        () => answered || clock.pending.length === 2,
        'the probe to be answered or admitted',
      );
      if (answered) {
        expect((await probe).status).toBe(429);
        continue;
      }
      admitted = true;
      clock.advance(1000);
      expect((await probe).status).toBe(200);
    }
    expect(admitted).toBe(true);
    expect(server?.stats().routes['* /render']?.sideEffects).toBe(2);
  });
});

describe('leaky bucket over HTTP', () => {
  it('serves queued requests in turn at the drain pace, and rejects what does not fit', async () => {
    const clock = new FakeClock();
    server = await createMockServer({
      clock,
      routes: [{ path: '/q', limits: [{ algorithm: 'leaky-bucket', rate: 1, capacity: 3 }] }],
    });
    const done: number[] = [];
    const requests = [0, 1, 2].map((i) =>
      fetch(`${server?.url}/q`).then((r) => {
        done.push(i);
        return r.status;
      }),
    );
    await until(() => clock.pending.length === 2 && done.length === 1, 'two queued, one served');
    expect(clock.pending.sort()).toEqual([1000, 2000]);
    const overflow = await fetch(`${server.url}/q`);
    expect(overflow.status).toBe(429);
    expect(await overflow.json()).toMatchObject({ retryAfterMs: 1000 });
    clock.advance(1000);
    await until(() => done.length === 2, 'the second turn');
    clock.advance(1000);
    expect(await Promise.all(requests)).toEqual([200, 200, 200]);
    expect(done).toEqual([0, 1, 2]);
  });
});

describe('close()', () => {
  it('ends open connections and pending waits, and resolves once', async () => {
    const clock = new FakeClock();
    server = await createMockServer({
      clock,
      routes: [{ path: '/slow', faults: { latencyMs: 60_000 } }, { path: '/fast' }],
    });
    expect((await fetch(`${server.url}/fast`)).status).toBe(200); // leaves a keep-alive socket
    const pending = fetch(`${server.url}/slow`);
    await until(() => clock.pending.length === 1, 'the slow request to be waiting');
    const closing = server.close();
    expect(server.close()).toBe(closing);
    await closing;
    await expect(pending).rejects.toThrow();
    expect(clock.pending).toEqual([]);
    await expect(fetch(`${server.url}/fast`)).rejects.toThrow();
  });
});
