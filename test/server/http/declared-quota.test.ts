/**
 * Issue 23, section 2, over real HTTP: the mock server declares each limit's true rate in whole
 * seconds (see `declared-quota.property.test.ts` for the property behind it), in the IETF fields
 * and in the drafts' (whose `limit` is the same declared quota). Before, every window was rounded
 * up to a second with its quota left as it was: `gcra:rate=10,burst=5` said `q=6;w=1` while
 * admitting 10 a second.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';
import {
  createMockServer,
  type HeaderFamily,
  type LimitConfig,
  type MockServer,
} from '../../../src/server/index.js';
import { FakeClock } from './helpers.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function firstAnswer(limit: LimitConfig, headers: HeaderFamily = 'ietf') {
  server = await createMockServer({
    clock: new FakeClock(),
    routes: [{ path: '/x', limits: [{ ...limit, name: 'p' }], headers }],
  });
  const response = await fetch(`${server.url}/x`);
  await response.arrayBuffer();
  return response.headers;
}

describe('the declared quota over HTTP', () => {
  it('gcra rate=10, burst=5 (the README command): 10 per 1 s, six at once in r', async () => {
    const headers = await firstAnswer({ algorithm: 'gcra', rate: 10, burst: 5 });
    expect(headers.get('ratelimit-policy')).toBe('"p";q=10;w=1');
    expect(headers.get('ratelimit')).toBe('"p";r=5;t=1');
  });

  it('a token bucket of 10 at 50/s (the demo with --rate 50 --burst 10): 50 per 1 s', async () => {
    const headers = await firstAnswer({
      algorithm: 'token-bucket',
      capacity: 10,
      refillPerSecond: 50,
    });
    expect(headers.get('ratelimit-policy')).toBe('"p";q=50;w=1');
  });

  it('a fixed window of 10 per 500 ms: 20 per 1 s', async () => {
    const headers = await firstAnswer({ algorithm: 'fixed-window', limit: 10, windowMs: 500 });
    expect(headers.get('ratelimit-policy')).toBe('"p";q=20;w=1');
  });

  it('a leaky bucket at 0.5/s: 1 per 2 s', async () => {
    const headers = await firstAnswer({ algorithm: 'leaky-bucket', rate: 0.5, capacity: 1 });
    expect(headers.get('ratelimit-policy')).toBe('"p";q=1;w=2');
  });

  for (const family of ['draft-7', 'draft-6'] as const) {
    it(`${family}: the limit and the policy are the declared quota`, async () => {
      const headers = await firstAnswer({ algorithm: 'gcra', rate: 10, burst: 5 }, family);
      const info = parseRateLimitHeaders(headers);
      expect(info).toMatchObject({ limit: 10, remaining: 5, windowMs: 1000 });
      expect(info?.policies).toHaveLength(1);
    });
  }

  it('a sliding-window counter of 1 per 5 ms (200/s, burst 1) admits a client paced at what it declares', async () => {
    // Issue 23: the trailing window counted the previous window's first millisecond, so a
    // request on a window's first millisecond after a full window was refused: 72 x 429 at
    // 200/s. The clock starts on a window's first millisecond and moves 5 ms per request.
    const clock = new FakeClock();
    server = await createMockServer({
      clock,
      routes: [
        {
          path: '/x',
          limits: [{ algorithm: 'sliding-window-counter', limit: 1, windowMs: 5, name: 'p' }],
        },
      ],
    });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`${server.url}/x`);
      await response.arrayBuffer();
      statuses.push(response.status);
      expect(response.headers.get('ratelimit-policy')).toBe('"p";q=200;w=1');
      // One more within the same 5 ms is more than declared: refused.
      const extra = await fetch(`${server.url}/x`);
      await extra.arrayBuffer();
      expect(extra.status).toBe(429);
      clock.advance(5);
    }
    expect(statuses).toEqual(Array.from({ length: 20 }, () => 200));
  });
});
