/**
 * Issue 4 over real HTTP: against the in-repo mock server, for each algorithm and header family,
 * a burst of calls fired at once all succeed, with no 429 when the server declares its policy
 * (IETF fields) and at most one per window when it sends only X-RateLimit fields or Retry-After.
 * The bursts run on fake time shared by the server and the client (see fake-time.ts).
 */

import { fetch as undiciFetch } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { LimitedClient, type WrappedFetch, wrapFetch } from '../../../src/index.js';
import type { HeaderFamily, LimitConfig, RetryAfterFormat } from '../../../src/server/index.js';
import { countingFetch, FakeClock, runOnFakeTime } from './fake-time.js';
import { closeAll, pause, start } from './server.js';

const WINDOW_MS = 1000;
const LIMIT = 5;
const CALLS = 15;

const algorithms: Record<string, LimitConfig> = {
  'fixed-window': { algorithm: 'fixed-window', limit: LIMIT, windowMs: WINDOW_MS, name: 'w' },
  'sliding-log': { algorithm: 'sliding-log', limit: LIMIT, windowMs: WINDOW_MS, name: 'w' },
  'sliding-window-counter': {
    algorithm: 'sliding-window-counter',
    limit: LIMIT,
    windowMs: WINDOW_MS,
    name: 'w',
  },
  'token-bucket': { algorithm: 'token-bucket', capacity: LIMIT, refillPerSecond: LIMIT, name: 'w' },
  gcra: { algorithm: 'gcra', rate: LIMIT, burst: LIMIT, name: 'w' },
  'leaky-bucket': { algorithm: 'leaky-bucket', rate: LIMIT, capacity: LIMIT, name: 'w' },
};
const families: HeaderFamily[] = ['ietf', 'draft-7', 'draft-6', 'x-ratelimit', 'none'];

afterAll(closeAll);

interface Run {
  /** 429s the server sent. */
  rejected: number;
  /** Fixed windows the run touched. */
  windows: number;
  statuses: number[];
  /** When each 429 arrived, ms from the start. */
  pushbacks: number[];
  /** When each call resolved, ms from the start. */
  resolved: number[];
  elapsedMs: number;
}

async function burst(
  limit: LimitConfig,
  headers: HeaderFamily,
  options: { undici?: boolean; retryAfter?: RetryAfterFormat } = {},
): Promise<Run> {
  // The server and the client on one fake clock, moved only while no request is on the wire: the
  // server's refills come when the client paced for them, whatever the machine's load. Not the
  // leaky bucket, which holds a request on the server until its turn (on real time, as before).
  const clock = limit.algorithm === 'leaky-bucket' ? undefined : new FakeClock();
  const now = () => (clock ? clock.now() : Date.now());
  const server = await start({
    ...(clock ? { clock } : {}),
    routes: [{ path: '/items/:id', limits: [limit], headers, retryAfter: options.retryAfter }],
  });
  const started = now();
  const pushbacks: number[] = [];
  const wire = countingFetch(
    options.undici ? (undiciFetch as unknown as typeof globalThis.fetch) : fetch,
  );
  const limited = options.undici
    ? undefined
    : new LimitedClient(server.url, { clock, fetch: wire.fetch });
  const wrapped = options.undici ? wrapFetch(wire.fetch, clock ? { clock } : {}) : undefined;
  const send = (i: number) =>
    limited ? limited.get(`/items/${i}`) : (wrapped as WrappedFetch)(`${server.url}/items/${i}`);
  const api = limited ?? (wrapped as WrappedFetch);
  api.on('rate-limited', () => pushbacks.push(now() - started));
  const resolved: number[] = [];
  const calls = Promise.all(
    Array.from({ length: CALLS }, (_, i) =>
      send(i).then((r) => {
        resolved.push(now() - started);
        return r;
      }),
    ),
  );
  if (clock) await runOnFakeTime(clock, wire, calls, { maxMs: 600_000 });
  const rs = await calls;
  await Promise.all(rs.map((r) => r.arrayBuffer()));
  await api.close();
  const ended = now();
  return {
    rejected: server.stats().rejected,
    windows: Math.floor(ended / WINDOW_MS) - Math.floor(started / WINDOW_MS) + 1,
    statuses: rs.map((r) => r.status),
    pushbacks,
    resolved,
    elapsedMs: ended - started,
  };
}

/**
 * With only Retry-After, the server reveals its limit by refusing. The first time it does, every
 * request in flight is refused too: the ramp doubles the window per round trip, so there are at
 * most about as many of them as the requests it had accepted (plus the round trip's stragglers).
 * After that first hold, the client paces itself below the rate it was refused at, and grows back
 * slowly: at most one 429 per window.
 */
function checkBlind(run: Run): void {
  const first = run.pushbacks[0] ?? 0;
  const accepted = run.resolved.filter((t) => t <= first).length;
  const initial = run.pushbacks.filter((t) => t < first + WINDOW_MS);
  const later = run.pushbacks.filter((t) => t >= first + WINDOW_MS);
  const context = JSON.stringify({ ...run, statuses: undefined });
  expect(initial.length, context).toBeLessThanOrEqual(accepted + 2);
  const laterWindows = Math.ceil((run.elapsedMs - (first + WINDOW_MS)) / WINDOW_MS) + 1;
  expect(later.length, context).toBeLessThanOrEqual(Math.max(1, laterWindows));
}

describe.concurrent.each(Object.keys(algorithms))('%s', (name) => {
  const limit = algorithms[name] as LimitConfig;

  it.each(families)('headers %s: every call succeeds, within the 429 allowance', async (family) => {
    const run = await burst(limit, family);
    expect(run.statuses).toEqual(Array(CALLS).fill(200));
    expect(run.pushbacks).toHaveLength(run.rejected);
    if (family === 'ietf') expect(run.rejected).toBe(0);
    else if (family !== 'none') expect(run.rejected).toBeLessThanOrEqual(run.windows);
    else if (name !== 'sliding-window-counter') checkBlind(run);
    // A sliding-window counter weighs the previous window in: right after a burst it accepts far
    // fewer than its limit, so no quota per window can be learned from 429s alone, and each call
    // admitted after the first burst leaves about one refused probe behind (its Retry-After is
    // exact, so the refusal costs no time). Its calls still all succeed.
    else expect(run.rejected).toBeLessThanOrEqual(CALLS + LIMIT + 2);
  });
});

describe.concurrent('other shapes', () => {
  it('a concurrency limit declared in IETF fields is never exceeded', async () => {
    const server = await start({
      routes: [
        {
          path: '*',
          limits: [{ algorithm: 'concurrency', limit: 3, name: 'slots' }],
          faults: { latencyMs: 30 },
        },
      ],
    });
    const client = new LimitedClient(server.url);
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => client.get(`/c/${i}`)));
    expect(rs.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(server.stats().rejected).toBe(0);
    await client.close();
  });

  it("works with undici's fetch as well as the global one", async () => {
    const run = await burst(algorithms['token-bucket'] as LimitConfig, 'ietf', { undici: true });
    expect(run.statuses).toEqual(Array(CALLS).fill(200));
    expect(run.rejected).toBe(0);
  });

  it('reads Retry-After as an HTTP-date as well', async () => {
    const run = await burst(algorithms['fixed-window'] as LimitConfig, 'none', {
      retryAfter: 'http-date',
    });
    expect(run.statuses).toEqual(Array(CALLS).fill(200));
    checkBlind(run);
  });

  it('a hostile Retry-After closes the host for maxRetryAfterMs at most: then a probe finds it healthy', async () => {
    // A server bug seen in the wild: a Unix timestamp sent as delay-seconds, once.
    const server = await start({
      routes: [
        {
          method: 'GET',
          path: '/x',
          faults: { unavailable: { times: 1, retryAfterSeconds: 1_764_000_000 } },
        },
      ],
    });
    // Holds are recorded for max(maxRetryAfterMs, 1 s) at most.
    const client = new LimitedClient(server.url, { maxRetryAfterMs: 200 });
    expect((await client.get('/x')).status).toBe(503); // longer than allowed: returned at once
    const refused = await client.get('/x').catch((e) => e);
    expect(refused).toMatchObject({ code: 'ERR_RATE_LIMITED' });
    expect(refused.retryAfterMs).toBeLessThanOrEqual(1200);
    await pause(1300);
    expect((await client.get('/x')).status).toBe(200);
    expect((await client.get('/x')).status).toBe(200);
    expect(server.stats().routes['GET /x']).toMatchObject({ unavailable: 1, admitted: 3 }); // the refused call was never sent
    await client.close();
  });

  it('a fast call to a new host does not wait for a slow first request to answer', async () => {
    const server = await start({
      routes: [
        { method: 'GET', path: '/slow', headers: 'none', faults: { latencyMs: 2500 } },
        { method: 'GET', path: '/fast', headers: 'none' },
      ],
    });
    const client = new LimitedClient(server.url);
    const order: string[] = [];
    const slow = client.get('/slow').then(() => order.push('slow'));
    await pause(20);
    const fast = client.get('/fast').then(() => order.push('fast'));
    await Promise.all([slow, fast]);
    expect(order).toEqual(['fast', 'slow']);
    await client.close();
  });

  it('holds for the most restrictive of several policies at once', async () => {
    const server = await start({
      routes: [
        {
          path: '*',
          limits: [
            { algorithm: 'fixed-window', limit: 10, windowMs: 1000, name: 'second' },
            // A sliding log: a fixed minute aligned to the clock could end mid-test.
            { algorithm: 'sliding-log', limit: 12, windowMs: 60_000, name: 'minute' },
          ],
        },
      ],
    });
    const client = new LimitedClient(server.url, { maxRetryAfterMs: 5000 });
    const results = await Promise.allSettled(
      Array.from({ length: 15 }, (_, i) => client.get(`/m/${i}`)),
    );
    const ok = results.filter((r) => r.status === 'fulfilled' && r.value.status === 200);
    const refused = results.filter((r) => r.status === 'rejected');
    // Twelve fit in the minute; the other three would wait most of a minute: refused, unsent.
    expect(ok).toHaveLength(12);
    expect(refused).toHaveLength(3);
    expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({
      code: 'ERR_RATE_LIMITED',
      policy: 'minute',
    });
    expect(server.stats().rejected).toBe(0);
    await client.close();
  });
});
