/**
 * Several limits per request, costs, keys and routing, over real HTTP on loopback.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';
import {
  createMockServer,
  type MockServer,
  type MockServerConfig,
} from '../../../src/server/index.js';
import { FakeClock } from './helpers.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(config: Omit<MockServerConfig, 'clock'>) {
  server = await createMockServer({ clock: new FakeClock(), ...config });
  return server;
}

function remainingOf(response: Response, policy: string): number | undefined {
  return parseRateLimitHeaders(response.headers)?.policies.find((p) => p.name === policy)
    ?.remaining;
}

describe('several limits on one request', () => {
  it('admits only when every limit admits, and a rejected request spends nothing anywhere', async () => {
    const s = await start({
      routes: [
        {
          path: '/search',
          limits: [
            { algorithm: 'token-bucket', capacity: 5, refillPerSecond: 1, name: 'per-ip' },
            { algorithm: 'fixed-window', limit: 2, windowMs: 60_000, key: 'global', name: 'all' },
            { algorithm: 'sliding-log', limit: 4, windowMs: 60_000, name: 'log' },
          ],
        },
      ],
    });
    const statuses = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await fetch(`${s.url}/search`);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
    // Two admitted: 5 - 2 and 4 - 2, not 5 - 4 or 4 - 4: the rejections were refunded or never taken.
    expect(remainingOf(last as Response, 'per-ip')).toBe(3);
    expect(remainingOf(last as Response, 'log')).toBe(2);
    expect(await (last as Response).json()).toMatchObject({ policy: 'all', scope: 'global' });
    expect(s.stats().routes['* /search']).toMatchObject({ admitted: 2, rejected: 2 });
  });

  it('admits exactly as many of 50 simultaneous requests as the tightest limit allows', async () => {
    const s = await start({
      routes: [
        {
          path: '/burst',
          limits: [
            { algorithm: 'fixed-window', limit: 10, windowMs: 60_000, key: 'global', name: 'wide' },
            {
              algorithm: 'token-bucket',
              capacity: 5,
              refillPerSecond: 1,
              key: 'global',
              name: 'tight',
            },
          ],
        },
      ],
    });
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => fetch(`${s.url}/burst`).then((r) => r.status)),
    );
    expect(responses.filter((status) => status === 200)).toHaveLength(5);
    expect(responses.filter((status) => status === 429)).toHaveLength(45);
    // The requests the bucket turned away gave their window units back.
    expect(remainingOf(await fetch(`${s.url}/burst`), 'wide')).toBe(5);
  });

  it('weights requests by the route cost', async () => {
    const s = await start({
      routes: [
        {
          method: 'POST',
          path: '/report',
          cost: 3,
          limits: [{ algorithm: 'token-bucket', capacity: 10, refillPerSecond: 1, name: 'units' }],
        },
      ],
    });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await fetch(`${s.url}/report`, { method: 'POST' }));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(remainingOf(results[3] as Response, 'units')).toBe(1);
    expect(await (results[3] as Response).json()).toMatchObject({ cost: 3, retryAfterMs: 2000 });
  });

  it('applies the server-wide limits to every route, sharing their budget', async () => {
    const s = await start({
      limits: [{ algorithm: 'fixed-window', limit: 3, windowMs: 1000, name: 'edge' }],
      routes: [
        { path: '/a' },
        { path: '/b', limits: [{ algorithm: 'gcra', rate: 100, burst: 9 }] },
      ],
    });
    const statuses = [];
    for (const path of ['/a', '/b', '/a', '/b']) statuses.push((await fetch(s.url + path)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const b = await fetch(`${s.url}/b`);
    expect(parseRateLimitHeaders(b.headers)?.policies.map((p) => p.name)).toEqual([
      'edge',
      '* /b gcra',
    ]);
  });

  it("names a route's own limits after the route by default, so two routes are two policies", async () => {
    const s = await start({
      limits: [{ algorithm: 'token-bucket', capacity: 100, refillPerSecond: 100 }],
      routes: [
        {
          method: 'GET',
          path: '/search',
          limits: [
            { algorithm: 'fixed-window', limit: 2, windowMs: 10_000 },
            { algorithm: 'fixed-window', limit: 30, windowMs: 60_000 },
          ],
        },
        {
          method: 'GET',
          path: '/items',
          limits: [{ algorithm: 'fixed-window', limit: 1000, windowMs: 10_000 }],
        },
        {
          path: '/named',
          limits: [{ algorithm: 'fixed-window', limit: 5, windowMs: 1000, name: 'mine' }],
        },
      ],
    });
    const names = async (path: string) =>
      parseRateLimitHeaders((await fetch(s.url + path)).headers)
        ?.policies.map((p) => p.name)
        .sort();
    expect(await names('/search')).toEqual([
      'GET /search fixed-window',
      'GET /search fixed-window-2',
      'token-bucket',
    ]);
    expect(await names('/items')).toEqual(['GET /items fixed-window', 'token-bucket']);
    expect(await names('/named')).toEqual(['mine', 'token-bucket']);
  });
});

describe('keys', () => {
  const limited = (key: MockServerConfig['routes'][0]['limits']) => ({
    routes: [{ path: '/k', limits: key }],
  });

  it('an API-key header gives each key its own budget; requests without it share one', async () => {
    const s = await start(
      limited([
        { algorithm: 'fixed-window', limit: 1, windowMs: 1000, key: { header: 'X-Api-Key' } },
      ]),
    );
    const get = (key?: string) =>
      fetch(`${s.url}/k`, { headers: key ? { 'x-api-key': key } : {} }).then((r) => r.status);
    expect([await get('a'), await get('b'), await get('a')]).toEqual([200, 200, 429]);
    expect([await get(), await get()]).toEqual([200, 429]);
    expect(Object.keys(s.stats().routes['* /k']?.keys ?? {}).sort()).toEqual([
      'x-api-key:',
      'x-api-key:a',
      'x-api-key:b',
    ]);
  });

  it('a composite key limits each IP and API key pair', async () => {
    const s = await start(
      limited([
        {
          algorithm: 'fixed-window',
          limit: 1,
          windowMs: 1000,
          key: ['ip', { header: 'x-api-key' }],
        },
      ]),
    );
    const get = (key: string) => fetch(`${s.url}/k`, { headers: { 'x-api-key': key } });
    expect((await get('a')).status).toBe(200);
    expect((await get('b')).status).toBe(200);
    const rejected = await get('a');
    expect(rejected.status).toBe(429);
    expect(await rejected.json()).toMatchObject({ scope: 'ip+header:x-api-key' });
  });

  it('the error body names the scope but never the key itself', async () => {
    const s = await start(
      limited([
        { algorithm: 'sliding-log', limit: 1, windowMs: 1000, key: { header: 'x-api-key' } },
      ]),
    );
    const secret = 'sk_live_do_not_leak_123';
    await fetch(`${s.url}/k`, { headers: { 'x-api-key': secret } });
    const rejected = await fetch(`${s.url}/k`, { headers: { 'x-api-key': secret } });
    const text = await rejected.text();
    expect(text).toContain('header:x-api-key');
    expect(text).not.toContain(secret);
    expect([...rejected.headers.values()].join(' ')).not.toContain(secret);
  });

  it('ignores X-Forwarded-For unless trustProxy says otherwise', async () => {
    const route = limited([{ algorithm: 'fixed-window', limit: 1, windowMs: 1000 }]);
    const spoof = (ip: string) =>
      fetch(`${server?.url}/k`, { headers: { 'x-forwarded-for': ip } }).then((r) => r.status);

    await start(route);
    expect([await spoof('198.51.100.1'), await spoof('198.51.100.2')]).toEqual([200, 429]);
    await server?.close();

    await start({ ...route, trustProxy: 1 });
    expect([await spoof('198.51.100.1'), await spoof('198.51.100.2')]).toEqual([200, 200]);
    expect(await spoof('203.0.113.9, 198.51.100.1')).toBe(429);
    expect(Object.keys(server?.stats().routes['* /k']?.keys ?? {})).toContain('ip:198.51.100.1');
  });
});

describe('routing', () => {
  it('matches parameters and prefixes, and answers 404 and 405 with Allow', async () => {
    const s = await start({
      routes: [
        { method: 'GET', path: '/items/:id' },
        { method: 'DELETE', path: '/items/:id' },
        { path: '/files/*' },
      ],
    });
    const item = await fetch(`${s.url}/items/a%20b?x=1`);
    expect(await item.json()).toMatchObject({ params: { id: 'a b' }, query: { x: '1' } });
    expect((await fetch(`${s.url}/files/a/b/c`)).status).toBe(200);
    expect((await fetch(`${s.url}/nothing`)).status).toBe(404);
    const wrong = await fetch(`${s.url}/items/1`, { method: 'PUT' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, DELETE');
    expect((await fetch(`${s.url}/items/1`, { method: 'HEAD' })).status).toBe(200);
  });

  it('answers the configured response, and 413 to a body over 1 MiB', async () => {
    const s = await start({
      routes: [
        {
          method: 'POST',
          path: '/made',
          response: { status: 201, body: { id: 7 }, headers: { Location: '/made/7' } },
        },
      ],
    });
    const made = await fetch(`${s.url}/made`, { method: 'POST', body: '{}' });
    expect(made.status).toBe(201);
    expect(made.headers.get('location')).toBe('/made/7');
    expect(await made.json()).toEqual({ id: 7 });
    const big = await fetch(`${s.url}/made`, { method: 'POST', body: 'x'.repeat(1024 * 1024 + 1) });
    expect(big.status).toBe(413);
  });
});
