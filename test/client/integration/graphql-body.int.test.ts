/**
 * Issue 26 §7, limits reported in the body: the client against test/peers/provider-shapes.ts's
 * Shopify GraphQL simulation (a leaky bucket of cost points, reported only in `extensions.cost`,
 * `THROTTLED` answered with HTTP 200), over real HTTP on loopback, on one fake clock shared by the
 * client and the server (`fake-time.ts`), so the bounds on time hold on a loaded machine.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapFetch } from '../../../src/index.js';
import {
  isThrottled,
  leastMs,
  SHOPIFY,
  SHOPIFY_QUERY_COST,
  type ShapeServer,
  shapeScenarios,
  startShopify,
} from '../../peers/provider-shapes.js';
import { countingFetch, FakeClock, runOnFakeTime } from './fake-time.js';

const servers: Pick<ShapeServer, 'close'>[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const QUERY = JSON.stringify({ query: '{ shop { name } }' });
const PATH = '/admin/api/2025-01/graphql.json';

/** `calls` queries, `concurrency` at a time, through `send`; each answer's status and body. */
async function queries(
  send: typeof fetch,
  url: string,
  calls: number,
  concurrency: number,
  init: RequestInit = {},
): Promise<{ status: number; body: string }[]> {
  const out: { status: number; body: string }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < calls) {
        const r = await send(`${url}${PATH}`, {
          method: 'POST',
          body: QUERY,
          headers: { 'content-type': 'application/json' },
          ...init,
        });
        out.push({ status: r.status, body: await r.text() });
      }
    }),
  );
  return out;
}

async function shopify(clock: FakeClock) {
  const server = await startShopify({ now: () => clock.now() });
  servers.push(server);
  return server;
}

describe('GraphQL limits in the body (Shopify simulation, fake time)', () => {
  it("the issue's workload: every call a real answer, refusals bounded, near the least time", async () => {
    const scenario = shapeScenarios().find((s) => s.id === 'shopify');
    const least = leastMs(scenario as NonNullable<typeof scenario>);
    const clock = new FakeClock();
    const wire = countingFetch();
    const server = await shopify(clock);
    const send = wrapFetch(wire.fetch, { clock });
    const running = queries(send, server.url, 30, 4);
    const tookMs = await runOnFakeTime(clock, wire, running, { maxMs: 20 * least });
    const answers = await running;
    await send.close();
    expect(answers).toHaveLength(30);
    expect(answers.filter((a) => a.status !== 200 || isThrottled(a.body))).toEqual([]);
    expect(server.refusals()).toBeLessThanOrEqual(2);
    expect(tookMs).toBeGreaterThanOrEqual(least);
    expect(tookMs).toBeLessThanOrEqual(least * 1.2);
  }, 60_000);
});

describe('THROTTLED over real HTTP (Shopify simulation, fake time)', () => {
  it('is retried like a 429, after the deficit over the restore rate, and ends with real data', async () => {
    const clock = new FakeClock();
    const wire = countingFetch();
    const server = await shopify(clock);
    // Another app spends the whole bucket first: the client knows nothing yet.
    for (let i = 0; i < SHOPIFY.maximumAvailable / SHOPIFY_QUERY_COST; i++) {
      await (await fetch(`${server.url}${PATH}`, { method: 'POST', body: QUERY })).text();
    }
    const send = wrapFetch(wire.fetch, { clock });
    const retries: { delayMs: number; delaySource: string; status?: number }[] = [];
    send.on('retry', (e) => retries.push(e));
    const running = queries(send, server.url, 1, 1);
    await runOnFakeTime(clock, wire, running, { stepMs: 1 });
    const [answer] = await running;
    await send.close();
    expect(answer?.status).toBe(200);
    expect(isThrottled(answer?.body ?? '')).toBe(false);
    expect(JSON.parse(answer?.body ?? '{}').data).toBeDefined();
    // (10 - 0) points at 50 a second: 200 ms, plus the hold's jitter (5 % at most).
    expect(retries).toEqual([{ ...retries[0], status: 200, delaySource: 'retry-after' }]);
    expect(retries[0]?.delayMs).toBeGreaterThanOrEqual(200);
    expect(retries[0]?.delayMs).toBeLessThanOrEqual(210);
    expect(server.refusals()).toBe(1);
  }, 30_000);

  it('once the retries are spent, the caller gets the last answer unchanged', async () => {
    const clock = new FakeClock();
    const wire = countingFetch();
    // A bucket smaller than the query: every answer is THROTTLED.
    const server = await startShopify({
      now: () => clock.now(),
      limits: { maximumAvailable: 5, restoreRate: 50 },
    });
    servers.push(server);
    const raw = await fetch(`${server.url}${PATH}`, { method: 'POST', body: QUERY });
    const rawBody = await raw.text();
    const send = wrapFetch(wire.fetch, { clock, retry: { retries: 2 } });
    let response: Response | undefined;
    const running = send(`${server.url}${PATH}`, { method: 'POST', body: QUERY }).then((r) => {
      response = r;
    });
    await runOnFakeTime(clock, wire, running, { maxMs: 60_000 });
    await send.close();
    expect(server.attempts()).toBe(1 + 3);
    expect(response?.status).toBe(200);
    expect(response?.headers.get('content-type')).toBe(raw.headers.get('content-type'));
    expect(await response?.text()).toBe(rawBody);
    expect(isThrottled(rawBody)).toBe(true);
  }, 30_000);

  it('the caller reads the same bytes and headers as plain fetch gets', async () => {
    const clock = new FakeClock();
    const server = await shopify(clock);
    const send = wrapFetch(fetch, { clock });
    const looked = await send(`${server.url}${PATH}`, { method: 'POST', body: QUERY });
    const plain = await fetch(`${server.url}${PATH}`, { method: 'POST', body: QUERY });
    await send.close();
    expect(looked.bodyUsed).toBe(false);
    const headers = (r: Response) => [...r.headers].filter(([name]) => name !== 'date');
    expect(headers(looked)).toEqual(headers(plain));
    const [a, b] = [JSON.parse(await looked.text()), JSON.parse(await plain.text())];
    // The same answer but for the bucket, one query lower for the second.
    expect(a.extensions.cost.throttleStatus.currentlyAvailable).toBe(90);
    expect(b.extensions.cost.throttleStatus.currentlyAvailable).toBe(80);
    expect({ ...a, extensions: undefined }).toEqual({ ...b, extensions: undefined });
  });
});

/**
 * A GitHub GraphQL-style server (docs.github.com, "Rate limits and query limits for the GraphQL
 * API"), scaled: `limit` points per window of `windowMs` (aligned on multiples of it), each query
 * `cost` points, reported in `data.rateLimit` when the query asks for it and, as GitHub does on
 * every answer, in `x-ratelimit-*` with `x-ratelimit-resource: graphql` (whole-second reset); a
 * query that does not fit is answered HTTP 200 with `errors: [{ type: 'RATE_LIMITED' }]`, no data.
 */
async function startGitHubGraphql(now: () => number, limit = 10, windowMs = 1000, cost = 2) {
  let start = Number.NEGATIVE_INFINITY;
  let used = 0;
  let refusals = 0;
  const server = createServer((req, res) => {
    req.resume();
    const t = now();
    if (t >= start + windowMs) {
      start = t - (t % windowMs);
      used = 0;
    }
    const fits = used + cost <= limit;
    if (fits) used += cost;
    else refusals++;
    const rateLimit = {
      limit,
      cost,
      remaining: limit - used,
      resetAt: new Date(start + windowMs).toISOString(),
    };
    const body = fits
      ? { data: { viewer: { login: 'octocat' }, rateLimit } }
      : { data: null, errors: [{ type: 'RATE_LIMITED', message: 'API rate limit exceeded' }] };
    res.writeHead(200, {
      'content-type': 'application/json',
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(limit - used),
      'x-ratelimit-used': String(used),
      'x-ratelimit-reset': String(Math.ceil((start + windowMs) / 1000)),
      'x-ratelimit-resource': 'graphql',
      // The server's clock is the test's (the client reads the reset against this Date).
      date: new Date(t).toUTCString(),
    });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const handle = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refusals: () => refusals,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(handle);
  return handle;
}

describe('GitHub GraphQL rateLimit in the body (fake time)', () => {
  it('paces on the points it reports, charging each query the cost it reported: no RATE_LIMITED', async () => {
    const clock = new FakeClock();
    const wire = countingFetch();
    const server = await startGitHubGraphql(() => clock.now());
    const send = wrapFetch(wire.fetch, { clock });
    const out: { status: number; body: string }[] = [];
    let next = 0;
    const running = Promise.all(
      Array.from({ length: 2 }, async () => {
        while (next++ < 20) {
          const r = await send(`${server.url}/graphql`, {
            method: 'POST',
            body: JSON.stringify({
              query: '{ viewer { login } rateLimit { limit remaining resetAt cost } }',
            }),
          });
          out.push({ status: r.status, body: await r.text() });
        }
      }),
    );
    // 20 queries of 2 points, 10 points a window: 4 windows, the least time 3 windows.
    const tookMs = await runOnFakeTime(clock, wire, running, { maxMs: 60_000 });
    await send.close();
    expect(out).toHaveLength(20);
    expect(out.filter((o) => o.body.includes('RATE_LIMITED'))).toEqual([]);
    expect(server.refusals()).toBe(0);
    expect(tookMs).toBeGreaterThanOrEqual(3000);
    expect(tookMs).toBeLessThanOrEqual(3000 * 1.2);
  }, 30_000);
});
