/**
 * Which calls get the look at their answer's body, and what each route is charged in points
 * (`src/client/body/route-costs.ts`); over loopback, that a call not looked at is handed its
 * answer at once whatever the body says.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouteCosts, routeOf, wantsLook } from '../../../src/client/body/route-costs.js';
import { ONE_REQUEST } from '../../../src/client/call/cost.js';
import type { PreparedRequest } from '../../../src/client/call/request.js';
import { wrapFetch } from '../../../src/index.js';

const req = (url: string, method = 'POST', body?: unknown): PreparedRequest => ({
  method,
  url,
  input: url,
  init: body === undefined ? undefined : { body: body as BodyInit },
  replayable: true,
  hasKey: false,
  key: undefined,
  view: undefined,
});

describe('wantsLook', () => {
  it.each([
    ['https://shop.myshopify.com/admin/api/2025-01/graphql.json', true],
    ['https://api.github.com/graphql', true],
    ['https://api.example.com/v2/graphql/?x=1', true],
    ['https://api.example.com/GraphQL', false],
    ['https://api.example.com/graphql/schema', false],
    ['https://graphql.example.com/items', false],
    ['https://api.example.com/items?next=/graphql', false],
    ['https://api.example.com/items', false],
  ])('by its path: %s → %s', (url, looked) => {
    expect(wantsLook(req(url, 'GET'), undefined)).toBe(looked);
  });

  it('by its body: a JSON object string with a "query" member', () => {
    const url = 'https://api.example.com/api';
    expect(wantsLook(req(url, 'POST', ' {"query":"{ a }"}'), undefined)).toBe(true);
    expect(wantsLook(req(url, 'POST', '{"variables":{},"query":"{ a }"}'), undefined)).toBe(true);
    expect(wantsLook(req(url, 'POST', '["query"]'), undefined)).toBe(false);
    expect(wantsLook(req(url, 'POST', 'query=1'), undefined)).toBe(false);
    expect(wantsLook(req(url, 'POST', '{"q":1}'), undefined)).toBe(false);
    expect(wantsLook(req(url, 'POST', new TextEncoder().encode('{"query":""}')), undefined)).toBe(
      false,
    );
  });

  it('the bodyLimits option forces it either way', () => {
    expect(wantsLook(req('https://api.example.com/items', 'GET'), true)).toBe(true);
    expect(wantsLook(req('https://api.example.com/graphql'), false)).toBe(false);
  });
});

describe('RouteCosts', () => {
  it('routes are method and URL without query or fragment', () => {
    expect(routeOf(req('https://a.example/graphql?x=1#f'))).toBe('POST https://a.example/graphql');
    expect(routeOf(req('https://a.example/g#f?x', 'GET'))).toBe('GET https://a.example/g');
  });

  it("a call is charged its route's last cost in points, read when admitted", () => {
    const costs = new RouteCosts();
    const cost = costs.charge(ONE_REQUEST, 'POST /graphql');
    expect(cost.requests).toBe(1);
    expect(cost.units).toBeUndefined();
    costs.set('POST /graphql', 52);
    expect(cost.units).toEqual([['points', 52]]);
    costs.set('POST /graphql', 12);
    expect(cost.units).toEqual([['points', 12]]);
  });

  it("the caller's own points win; its other units are kept", () => {
    const costs = new RouteCosts();
    costs.set('r', 52);
    const own = { requests: 1, units: [['points', 3]] as [string, number][] };
    expect(costs.charge(own, 'r')).toBe(own);
    const tokens = { requests: 2, units: [['tokens', 9]] as [string, number][] };
    expect(costs.charge(tokens, 'r')).toMatchObject({
      requests: 2,
      units: [
        ['tokens', 9],
        ['points', 52],
      ],
    });
  });
});

describe('a call not looked at, over loopback', () => {
  const THROTTLED = '{"errors":[{"extensions":{"code":"THROTTLED"}}]}';
  let received = 0;
  const server = createServer((request, res) => {
    received++;
    request.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(THROTTLED);
  });
  let base = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function attempts(path: string, options: Parameters<typeof wrapFetch>[1]) {
    const send = wrapFetch(fetch, { retry: { retries: 1 }, maxRetryAfterMs: 1, ...options });
    const before = received;
    const r = await send(`${base}${path}`);
    expect(await r.text()).toBe(THROTTLED);
    await send.close();
    return received - before;
  }

  it('is handed its answer at once, whatever the body says', async () => {
    expect(await attempts('/v1/items', {})).toBe(1);
    expect(await attempts('/graphql', { bodyLimits: false })).toBe(1);
  });

  it('one looked at is retried (the bodyLimits option on a path that is not GraphQL)', async () => {
    // A THROTTLED with no cost is a bare refusal: its retries wait for the pace and are bounded
    // by time (maxRetryAfterMs), not by `retries` (docs/how-it-works.md): at least one, a few.
    for (const [path, options] of [
      ['/v1/items', { bodyLimits: true }],
      ['/graphql', {}],
    ] as const) {
      const n = await attempts(path, options);
      expect(n).toBeGreaterThanOrEqual(2);
      expect(n).toBeLessThanOrEqual(4);
    }
  });
});
