/**
 * The mock server's dashboard (`dashboard: true`) over real HTTP, on a fake clock: its JSON
 * matches `stats()` and places traffic in the second it came; the chart keeps five minutes per
 * route whatever runs (the bound); the page comes with its policy; the paths are the routes'
 * without the option; the CLI's `--dashboard` serves it. The page itself, in Chromium:
 * dashboard.chromium.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type CliIo, runCli } from '../../../src/server/cli.js';
import type { DashboardData } from '../../../src/server/dashboard/data.js';
import { DASHBOARD_BUCKETS, Timeline } from '../../../src/server/dashboard/timeline.js';
import { createMockServer, type MockServer } from '../../../src/server/index.js';
import { FakeClock, until } from './helpers.js';

const servers: MockServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function start(config: Parameters<typeof createMockServer>[0]): Promise<MockServer> {
  const server = await createMockServer(config);
  servers.push(server);
  return server;
}

async function data(server: MockServer): Promise<DashboardData> {
  const response = await fetch(`${server.url}/__dashboard/data`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json');
  return (await response.json()) as DashboardData;
}

async function hit(server: MockServer, path: string, n: number, init: RequestInit = {}) {
  for (let i = 0; i < n; i++) await (await fetch(`${server.url}${path}`, init)).arrayBuffer();
}

/** Lets the dashboard's sampler run after the fake clock moved. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('the dashboard data', () => {
  it('matches stats(), and puts each second of traffic in its own bucket', async () => {
    const clock = new FakeClock();
    const server = await start({
      clock,
      dashboard: true,
      routes: [
        {
          path: '/a',
          limits: [{ algorithm: 'fixed-window', limit: 3, windowMs: 60_000, name: 'three' }],
        },
        { path: '/b' },
      ],
    });
    await hit(server, '/a', 5);
    clock.advance(1000);
    await turn();
    await hit(server, '/b', 2);
    clock.advance(2000);
    await turn();
    await hit(server, '/a', 1);
    const d = await data(server);
    const stats = server.stats();

    expect(d.totals).toMatchObject({ admitted: stats.admitted, rejected: stats.rejected });
    expect(d.routes.map((r) => [r.route, r.admitted, r.rejected])).toEqual(
      Object.entries(stats.routes).map(([route, r]) => [route, r.admitted, r.rejected]),
    );
    expect(d.routes[0]?.limits).toEqual([
      {
        name: 'three',
        description: '3 per 60 s, fixed-window',
        unit: 'requests',
        rejected: 3,
        nearlySpent: 1,
      },
    ]);
    // Four buckets: the first second (5 on /a: 3 admitted, 2 rejected), the next (2 on /b), an
    // empty one, and the current one (1 rejected on /a).
    expect(d.timeline.routes).toEqual([
      { route: '* /a', admitted: [3, 0, 0, 0], rejected: [2, 0, 0, 1] },
      { route: '* /b', admitted: [0, 2, 0, 0], rejected: [0, 0, 0, 0] },
    ]);
    expect(d.timeline.end).toBe(clock.now() + 1000);
    expect(d.retryAfter.map((h) => [h.route, h.count])).toEqual([['* /a', 3]]);
    expect(d.topKeys.requests).toEqual([{ key: 'ip:127.0.0.1', count: 8, error: 0 }]);
    expect(d.held.limiterKeys).toBeGreaterThan(0);
  });

  it('keeps five minutes of buckets per route, however long it runs (the bound)', async () => {
    const clock = new FakeClock();
    const server = await start({ clock, dashboard: true, routes: [{ path: '/a' }] });
    for (let s = 0; s < DASHBOARD_BUCKETS + 50; s++) {
      if (s % 100 === 0) await hit(server, '/a', 1);
      clock.advance(1000);
      await turn();
    }
    const d = await data(server);
    const series = d.timeline.routes[0];
    expect(series?.admitted).toHaveLength(DASHBOARD_BUCKETS);
    expect(series?.rejected).toHaveLength(DASHBOARD_BUCKETS);
    // The request of second 0 fell out; those of 100, 200 and 300 are 250, 150 and 50 back.
    expect(series?.admitted.reduce((a, b) => a + b, 0)).toBe(3);
    expect(series?.admitted[DASHBOARD_BUCKETS - 1 - 250]).toBe(1);
  });

  it('a route named __proto__ is a route like any other', async () => {
    const server = await start({
      dashboard: true,
      routes: [
        {
          name: '__proto__',
          path: '/p',
          limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 60_000, name: 'constructor' }],
        },
      ],
    });
    await hit(server, '/p', 3);
    const d = await data(server);
    expect(d.routes).toMatchObject([
      {
        route: '__proto__',
        admitted: 1,
        rejected: 2,
        limits: [{ name: 'constructor', rejected: 2 }],
      },
    ]);
    expect(d.timeline.routes).toEqual([{ route: '__proto__', admitted: [1], rejected: [2] }]);
    expect(Object.prototype).not.toHaveProperty('admitted');
  });

  it('cuts a top key at 256 characters', async () => {
    // Three header values of 128 characters (the longest kept as they are) make a key of ~400.
    const key = [{ header: 'x-a' }, { header: 'x-b' }, { header: 'x-c' }];
    const server = await start({
      dashboard: true,
      routes: [
        { path: '/k', limits: [{ algorithm: 'fixed-window', limit: 9, windowMs: 1000, key }] },
      ],
    });
    const v = 'v'.repeat(128);
    await hit(server, '/k', 2, { headers: { 'x-a': v, 'x-b': v, 'x-c': v } });
    expect(Object.keys(server.stats().routes['* /k']?.keys ?? {})[0]?.length).toBeGreaterThan(256);
    const [top] = (await data(server)).topKeys.requests;
    expect(top?.key).toHaveLength(256);
    expect(top?.count).toBe(2);
  });

  it('stops sampling when the server closes', async () => {
    const clock = new FakeClock();
    const server = await createMockServer({ clock, dashboard: true, routes: [{ path: '/a' }] });
    expect(clock.pending).toEqual([1000]);
    await server.close();
    expect(clock.pending).toEqual([]);
  });
});

describe('the dashboard page and its paths', () => {
  it('serves the page with a policy that allows only its own script, style and origin', async () => {
    const server = await start({ dashboard: true, routes: [{ path: '/a' }] });
    const response = await fetch(`${server.url}/__dashboard`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+='(;|$)/);
    expect(csp).toMatch(/connect-src 'self'/);
    const html = await response.text();
    // Nothing from elsewhere: the only URL in it is SVG's namespace, a name, never fetched.
    expect(html.match(/https?:\/\/[^'"\s]*/g)).toEqual(['http://www.w3.org/2000/svg']);
    // Counted in no route; /__metrics is on with it.
    expect(server.stats().admitted).toBe(0);
    expect((await fetch(`${server.url}/__metrics`)).status).toBe(200);
  });

  it('without dashboard: true, its paths are paths like any other', async () => {
    const server = await start({ routes: [{ path: '/a' }] });
    expect((await fetch(`${server.url}/__dashboard`)).status).toBe(404);
    expect((await fetch(`${server.url}/__dashboard/data`)).status).toBe(404);
    const catchAll = await start({ routes: [{ path: '*' }] });
    expect((await fetch(`${catchAll.url}/__dashboard`)).status).toBe(200);
    expect(catchAll.stats().admitted).toBe(1);
  });

  it('answers GET only; another method goes to the routes', async () => {
    const server = await start({ dashboard: true, routes: [{ path: '*' }] });
    const response = await fetch(`${server.url}/__dashboard`, { method: 'POST' });
    expect(response.headers.get('content-security-policy')).toBeNull();
    expect(server.stats().admitted).toBe(1);
  });

  it('refuses a dashboard option that is not a boolean, naming it', async () => {
    await expect(
      createMockServer({ dashboard: 'yes' as unknown as boolean, routes: [{ path: '/a' }] }),
    ).rejects.toThrow(/dashboard: must be true or false/);
  });
});

describe('Timeline', () => {
  it('a counter reset counts what the counter holds as new; a clock that steps back adds to now', () => {
    const t = new Timeline(1000, 5);
    t.sample([{ route: 'r', admitted: 4, rejected: 1 }], 10_000);
    t.sample([{ route: 'r', admitted: 1, rejected: 0 }], 11_000); // reset, then 1 more
    t.sample([{ route: 'r', admitted: 3, rejected: 0 }], 9_000); // the clock went back
    expect(t.view().routes).toEqual([{ route: 'r', admitted: [4, 3], rejected: [1, 0] }]);
  });

  it('a route that appears later gets the same number of buckets; a long gap keeps at most the cap', () => {
    const t = new Timeline(1000, 3);
    t.sample([{ route: 'a', admitted: 1, rejected: 0 }], 0);
    t.sample(
      [
        { route: 'a', admitted: 1, rejected: 0 },
        { route: 'b', admitted: 2, rejected: 0 },
      ],
      1000,
    );
    expect(t.view().routes.map((r) => r.admitted)).toEqual([
      [1, 0],
      [0, 2],
    ]);
    t.sample([], 1e12);
    expect(t.view().routes.map((r) => r.admitted)).toEqual([
      [0, 0, 0],
      [0, 0, 0],
    ]);
  });
});

describe('the CLI with --dashboard', () => {
  it('prints where the dashboard is and serves it', async () => {
    const out: string[] = [];
    let stop: (() => void) | undefined;
    const io: CliIo = {
      stdout: (line) => out.push(line),
      stderr: (line) => out.push(line),
      onStop(fn) {
        stop = fn;
        return () => {
          stop = undefined;
        };
      },
    };
    const running = runCli(['--dashboard', '-q', '-l', 'fixed-window:limit=1,windowMs=60000'], io);
    await until(() => out.some((l) => l.includes('/__dashboard')), 'the dashboard line');
    const url = /dashboard at (\S+)\/__dashboard/.exec(out.join('\n'))?.[1] as string;
    await fetch(`${url}/x`);
    await fetch(`${url}/x`);
    const d = (await (await fetch(`${url}/__dashboard/data`)).json()) as DashboardData;
    expect(d.totals).toMatchObject({ admitted: 1, rejected: 1 });
    expect((await fetch(`${url}/__dashboard`)).status).toBe(200);
    stop?.();
    expect(await running).toBe(0);
  });
});
