/**
 * Every header family over real HTTP on loopback, read back with the project's own parser.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';
import {
  createMockServer,
  type HeaderFamily,
  type MockServer,
  type RouteConfig,
} from '../../../src/server/index.js';
import { FakeClock } from './helpers.js';

// 12:00:30.250: the one-minute window ends in 29 750 ms, which every header rounds up to 30 s.
const NOW = Date.UTC(2026, 10, 30, 12, 0, 30, 250);

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(route: Omit<RouteConfig, 'path' | 'limits'>, clock = new FakeClock(NOW)) {
  server = await createMockServer({
    clock,
    routes: [
      {
        path: '/things',
        limits: [
          { algorithm: 'fixed-window', limit: 3, windowMs: 60_000, name: 'minute' },
          {
            algorithm: 'token-bucket',
            capacity: 10,
            refillPerSecond: 1,
            key: 'global',
            name: 'burst',
          },
        ],
        ...route,
      },
    ],
  });
  return { server, clock, get: () => fetch(`${server?.url}/things`) };
}

describe('header families, read back by parseRateLimitHeaders', () => {
  it('ietf: every policy, with its quota, window, remaining units and reset', async () => {
    const { get } = await start({ headers: 'ietf' });
    const response = await get();
    expect(response.status).toBe(200);
    const info = parseRateLimitHeaders(response.headers, { now: NOW });
    expect(info).toMatchObject({ source: 'ietf', policy: 'minute', limit: 3, remaining: 2 });
    expect(info?.policies).toEqual([
      { name: 'minute', limit: 3, remaining: 2, resetMs: 30_000, windowMs: 60_000 },
      { name: 'burst', limit: 10, remaining: 9, resetMs: 1000, windowMs: 10_000 },
    ]);
    expect(response.headers.get('ratelimit-policy')).toBe('"minute";q=3;w=60, "burst";q=10;w=10');
  });

  for (const family of ['draft-7', 'draft-6', 'x-ratelimit'] as const) {
    it(`${family}: the most restrictive policy`, async () => {
      const { get } = await start({ headers: family });
      await get();
      const response = await get();
      const info = parseRateLimitHeaders(response.headers, { now: NOW });
      // Draft resets are delta seconds (29.75 s rounded up); X-RateLimit-Reset is the Unix second
      // 12:01:00, read against now: exactly the 29 750 ms left.
      const resetMs = family === 'x-ratelimit' ? 29_750 : 30_000;
      expect(info).toMatchObject({ source: family, limit: 3, remaining: 1, resetMs });
      if (family !== 'x-ratelimit') expect(info?.windowMs).toBe(60_000);
    });
  }

  it('none: no rate-limit fields, only Retry-After on a 429', async () => {
    const { get } = await start({ headers: 'none' });
    expect(parseRateLimitHeaders((await get()).headers)).toBeUndefined();
    await get();
    await get();
    const rejected = await get();
    expect(rejected.status).toBe(429);
    expect(parseRateLimitHeaders(rejected.headers, { now: NOW })).toEqual({
      policies: [],
      source: 'retry-after',
      retryAfterMs: 30_000,
    });
  });

  it('a 429 names the policy and its scope, with Retry-After rounded up to whole seconds', async () => {
    const { get } = await start({});
    for (let i = 0; i < 3; i++) await get();
    const rejected = await get();
    expect(rejected.status).toBe(429);
    expect(rejected.headers.get('retry-after')).toBe('30');
    const info = parseRateLimitHeaders(rejected.headers, { now: NOW });
    expect(info).toMatchObject({ policy: 'minute', remaining: 0, retryAfterMs: 30_000 });
    // The bucket was not charged for the rejected request: 10 - 3.
    expect(info?.policies.find((p) => p.name === 'burst')?.remaining).toBe(7);
    expect(await rejected.json()).toMatchObject({
      error: 'rate_limited',
      policy: 'minute',
      scope: 'ip',
      limit: 3,
      remaining: 0,
      cost: 1,
      retryAfterMs: 29_750,
    });
  });

  it('Retry-After as an HTTP-date is never earlier than the truth', async () => {
    const { get } = await start({ retryAfter: 'http-date' });
    for (let i = 0; i < 3; i++) await get();
    const rejected = await get();
    expect(rejected.headers.get('date')).toBe('Mon, 30 Nov 2026 12:00:30 GMT');
    expect(rejected.headers.get('retry-after')).toBe('Mon, 30 Nov 2026 12:01:00 GMT');
    // The window ends at 12:01:00.000, 29 750 ms after NOW: read against now (Date agrees with
    // it), the date gives exactly that; read against Date (a skewed client), 30 000, later still.
    expect(parseRateLimitHeaders(rejected.headers, { now: NOW })?.retryAfterMs).toBe(29_750);
    expect(parseRateLimitHeaders(rejected.headers, { now: NOW + 5000 })?.retryAfterMs).toBe(30_000);
  });

  it('rounds even a single millisecond up to a whole second, in seconds and as a date', async () => {
    const oneMsLeft = Date.UTC(2026, 10, 30, 12, 0, 59, 999);
    for (const retryAfter of ['seconds', 'http-date'] as const) {
      const { get } = await start({ retryAfter }, new FakeClock(oneMsLeft));
      for (let i = 0; i < 3; i++) await get();
      const rejected = await get();
      expect(await rejected.json()).toMatchObject({ retryAfterMs: 1 });
      const info = parseRateLimitHeaders(rejected.headers, { now: oneMsLeft });
      // Seconds round the 1 ms up to 1 s; the date names 12:01:00, which is exactly 1 ms away.
      expect(info?.retryAfterMs).toBe(retryAfter === 'seconds' ? 1000 : 1);
      if (retryAfter === 'http-date') {
        expect(rejected.headers.get('retry-after')).toBe('Mon, 30 Nov 2026 12:01:00 GMT');
      }
      expect(info?.resetMs).toBe(1000);
      await server?.close();
    }
  });

  it('the exact retryAfterMs of the body holds over HTTP: a millisecond early is still too early', async () => {
    const { get, clock } = await start({});
    for (let i = 0; i < 3; i++) await get();
    const { retryAfterMs } = (await (await get()).json()) as { retryAfterMs: number };
    clock.advance(retryAfterMs - 1);
    expect((await get()).status).toBe(429);
    clock.advance(1);
    expect((await get()).status).toBe(200);
  });

  it('ietf: a concurrency limit is declared in concurrent requests, without window or reset', async () => {
    server = await createMockServer({
      routes: [{ path: '/x', limits: [{ algorithm: 'concurrency', limit: 4, name: 'slots' }] }],
    });
    const response = await fetch(`${server.url}/x`);
    expect(response.headers.get('ratelimit-policy')).toBe('"slots";q=4;qu="concurrent-requests"');
    expect(parseRateLimitHeaders(response.headers)?.policies).toEqual([
      { name: 'slots', limit: 4, remaining: 3, unit: 'concurrent-requests' },
    ]);
  });

  it('every family parses to the numbers the limiter decided, for each algorithm', async () => {
    const families: HeaderFamily[] = ['ietf', 'draft-7', 'draft-6', 'x-ratelimit'];
    const limits = [
      { algorithm: 'sliding-log', limit: 4, windowMs: 2000 },
      { algorithm: 'sliding-window-counter', limit: 4, windowMs: 2000 },
      { algorithm: 'gcra', rate: 2, burst: 3 },
      { algorithm: 'leaky-bucket', rate: 2, capacity: 4 },
    ] as const;
    for (const headers of families) {
      for (const limit of limits) {
        const clock = new FakeClock(NOW);
        const s = await createMockServer({
          clock,
          routes: [{ path: '/', headers, limits: [limit] }],
        });
        try {
          const response = await fetch(s.url);
          const info = parseRateLimitHeaders(response.headers, { now: NOW });
          expect(info, `${headers} ${limit.algorithm}`).toMatchObject({ limit: 4, remaining: 3 });
          expect(info?.resetMs).toBeGreaterThan(0);
        } finally {
          await s.close();
        }
      }
    }
  });

  it('writes a limit past what a structured field can carry as its largest integer, not a 500', async () => {
    for (const headers of ['ietf', 'draft-7'] as const) {
      const s = await createMockServer({
        clock: new FakeClock(NOW),
        routes: [
          {
            path: '/',
            headers,
            limits: [
              {
                algorithm: 'fixed-window',
                limit: Number.MAX_SAFE_INTEGER,
                windowMs: 60_000,
                name: 'huge',
              },
            ],
          },
        ],
      });
      try {
        const response = await fetch(s.url);
        expect(response.status).toBe(200);
        const info = parseRateLimitHeaders(response.headers, { now: NOW });
        expect(info, headers).toMatchObject({ limit: 999_999_999_999_999 });
      } finally {
        await s.close();
      }
    }
  });
});
