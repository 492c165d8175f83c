/**
 * Issue 26 §6, GitHub's dialect over real HTTP on fake time: each resource (`core`, `search`) is
 * its own budget, declared with `x-ratelimit-limit`, `-remaining`, `-used`, `-reset` (Unix
 * seconds) and `-resource`; what it declares is true (a client paced at it is never refused, one
 * request more per window is), and a spent resource refuses only its own routes, with 429 or, as
 * GitHub does, 403.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';
import { createMockServer, type MockServer, type RouteConfig } from '../../../src/server/index.js';
import { all, call, pacedStatuses } from './budgets.js';
import { FakeClock } from './helpers.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** GitHub's shape, small: `search` 3 per 6 s on /search/*, `core` 10 per 10 s everywhere else. */
async function github(clock: FakeClock, extra: Partial<RouteConfig> = {}): Promise<string> {
  server = await createMockServer({
    clock,
    routes: [
      {
        method: 'GET',
        path: '/search/*',
        headers: 'github',
        ...extra,
        limits: [{ algorithm: 'fixed-window', limit: 3, windowMs: 6000, resource: 'search' }],
      },
      {
        path: '*',
        headers: 'github',
        ...extra,
        limits: [{ algorithm: 'fixed-window', limit: 10, windowMs: 10_000, resource: 'core' }],
      },
    ],
  });
  return server.url;
}

describe("the mock server in GitHub's dialect", () => {
  it('names each resource in its fields, and the client parses them as GitHub', async () => {
    const clock = new FakeClock();
    const url = await github(clock);
    const search = await call(`${url}/search/code?q=x`);
    expect(search.status).toBe(200);
    const nowSeconds = clock.now() / 1000;
    expect(search.headers.get('x-ratelimit-limit')).toBe('3');
    expect(search.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(search.headers.get('x-ratelimit-used')).toBe('1');
    expect(search.headers.get('x-ratelimit-reset')).toBe(String(nowSeconds + 6));
    expect(search.headers.get('x-ratelimit-resource')).toBe('search');
    expect(parseRateLimitHeaders(search.headers, { now: clock.now() })).toMatchObject({
      source: 'github',
      policy: 'search',
      limit: 3,
      remaining: 2,
      resetMs: 6000,
    });
    // The search spent nothing of core.
    const core = await call(`${url}/repos/a/b`);
    expect(core.headers.get('x-ratelimit-resource')).toBe('core');
    expect(core.headers.get('x-ratelimit-remaining')).toBe('9');
    expect(core.headers.get('x-ratelimit-used')).toBe('1');
  });

  it('a spent resource refuses its own routes only, with remaining 0 and the reset', async () => {
    const clock = new FakeClock();
    const url = await github(clock);
    for (let i = 0; i < 3; i++) expect((await call(`${url}/search/code`)).status).toBe(200);
    const refused = await call(`${url}/search/issues`);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-used')).toBe('3');
    expect(refused.headers.get('x-ratelimit-resource')).toBe('search');
    expect(refused.headers.get('x-ratelimit-reset')).toBe(String(clock.now() / 1000 + 6));
    expect(refused.headers.get('retry-after')).toBe('6');
    // Core has its whole budget while search is spent.
    const core = await call(`${url}/users/octocat`);
    expect(core.status).toBe(200);
    expect(core.headers.get('x-ratelimit-remaining')).toBe('9');
    clock.advance(6000);
    expect((await call(`${url}/search/code`)).status).toBe(200);
  });

  it('answers a spent primary limit 403, as GitHub does, with rejectStatus: 403', async () => {
    const clock = new FakeClock();
    const url = await github(clock, { rejectStatus: 403, retryAfter: 'none' });
    for (let i = 0; i < 3; i++) await call(`${url}/search/code`);
    const refused = await call(`${url}/search/code`);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.has('retry-after')).toBe(false);
    expect(refused.body).toMatchObject({ error: 'rate_limited' });
  });

  it('declares the truth: paced at x-ratelimit-limit per window, never refused; one more is', async () => {
    const clock = new FakeClock();
    const url = await github(clock);
    const first = await call(`${url}/search/code`);
    const limit = Number(first.headers.get('x-ratelimit-limit'));
    const windowMs = Number(first.headers.get('x-ratelimit-reset')) * 1000 - clock.now();
    expect([limit, windowMs]).toEqual([3, 6000]);
    clock.advance(windowMs);
    const search = () => call(`${url}/search/code`);
    expect(await pacedStatuses(clock, limit, windowMs, 4, search)).toEqual(all(200, 12));
    clock.advance(windowMs - (clock.now() % windowMs));
    const over = await pacedStatuses(clock, limit + 1, windowMs, 1, search);
    expect(over).toEqual([200, 200, 200, 429]);
  });

  it('each resource paced at its own declaration, interleaved: never refused', async () => {
    const clock = new FakeClock();
    const url = await github(clock);
    // Both windows (6 s and 10 s) start together every 30 s: a request every second on core
    // (10 per 10 s) and every 2 s on search (3 per 6 s) are each exactly their declared rate.
    const statuses: number[] = [];
    for (let t = 0; t < 30_000; t += 1000) {
      statuses.push((await call(`${url}/repos/a/b`)).status);
      if (t % 2000 === 0) statuses.push((await call(`${url}/search/code`)).status);
      clock.advance(1000);
    }
    expect(statuses).toHaveLength(45);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(server?.stats().rejected).toBe(0);
  });
});
