/**
 * The GraphQL body reader (`src/client/body/parse.ts`): Shopify's `extensions.cost` and
 * `THROTTLED`, GitHub's `data.rateLimit` and `RATE_LIMITED`, merged with the headers' info.
 */
import { describe, expect, it } from 'vitest';
import { mergeInfo, parseBodyLimits } from '../../../src/client/body/parse.js';
import { parseRateLimitHeaders } from '../../../src/headers/parse.js';

const NOW = 1_700_000_000_000;

const shopify = (available: number, extra: object = {}) => ({
  data: { shop: { name: 'x' } },
  extensions: {
    cost: {
      requestedQueryCost: 52,
      actualQueryCost: 12,
      throttleStatus: { maximumAvailable: 1000, currentlyAvailable: available, restoreRate: 50 },
    },
  },
  ...extra,
});

const throttled = (available: number) => ({
  errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }],
  extensions: {
    cost: {
      requestedQueryCost: 52,
      actualQueryCost: null,
      throttleStatus: { maximumAvailable: 1000, currentlyAvailable: available, restoreRate: 50 },
    },
  },
});

describe('parseBodyLimits: Shopify', () => {
  it('the bucket as a policy in points; the requested cost is what the next call is charged', () => {
    const read = parseBodyLimits(shopify(948));
    expect(read).toEqual({
      throttled: false,
      cost: 52,
      info: {
        source: 'graphql',
        limit: 1000,
        remaining: 948,
        resetMs: 0,
        policy: 'graphql-cost',
        policies: [
          { name: 'graphql-cost', unit: 'points', limit: 1000, remaining: 948, resetMs: 0 },
        ],
      },
    });
  });

  it('a bucket short of the requested cost resets when the deficit is restored', () => {
    // 52 - 30 = 22 points at 50 a second: 440 ms.
    expect(parseBodyLimits(shopify(30))?.info?.resetMs).toBe(440);
    expect(parseBodyLimits(shopify(30.7))?.info?.remaining).toBe(30);
  });

  it('THROTTLED: a refusal, retried after the deficit over the restore rate', () => {
    const read = parseBodyLimits(throttled(10));
    expect(read?.throttled).toBe(true);
    expect(read?.cost).toBe(52);
    // (52 - 10) / 50 s
    expect(read?.info?.retryAfterMs).toBe(840);
    // A refusal with the points back already still waits one point's time (20 ms at 50/s).
    expect(parseBodyLimits(throttled(60))?.info?.retryAfterMs).toBe(20);
  });

  it('the wait is at most the whole bucket: a requested cost above it is no reason for more', () => {
    const body = throttled(0);
    body.extensions.cost.requestedQueryCost = 1e9;
    expect(parseBodyLimits(body)?.info?.retryAfterMs).toBe(20_000);
  });

  it('actualQueryCost when no requested cost is given', () => {
    const body = shopify(900);
    (body.extensions.cost as { requestedQueryCost?: number }).requestedQueryCost = undefined;
    expect(parseBodyLimits(body)?.cost).toBe(12);
  });

  it('THROTTLED without a cost block: a refusal without timing', () => {
    expect(parseBodyLimits({ errors: [{ extensions: { code: 'THROTTLED' } }] })).toEqual({
      throttled: true,
      cost: undefined,
      info: undefined,
    });
  });
});

describe('parseBodyLimits: GitHub GraphQL', () => {
  it('data.rateLimit: limit and remaining points (the reset comes in the headers); its cost charged next', () => {
    const body = {
      data: {
        viewer: { login: 'octocat' },
        rateLimit: {
          limit: 5000,
          remaining: 4990,
          cost: 1,
          resetAt: new Date(NOW + 1_800_000).toISOString(),
        },
      },
    };
    expect(parseBodyLimits(body)).toEqual({
      throttled: false,
      cost: 1,
      info: {
        source: 'graphql',
        limit: 5000,
        remaining: 4990,
        policy: 'graphql',
        policies: [{ name: 'graphql', unit: 'points', limit: 5000, remaining: 4990 }],
      },
    });
  });

  it('RATE_LIMITED is a refusal', () => {
    const body = { errors: [{ type: 'RATE_LIMITED', message: 'API rate limit exceeded' }] };
    expect(parseBodyLimits(body)?.throttled).toBe(true);
  });

  it('a remaining above its limit is dropped; a rateLimit without counts is no policy', () => {
    const policies = (rateLimit: object) =>
      parseBodyLimits({ data: { rateLimit } })?.info?.policies;
    expect(policies({ limit: 10, remaining: 11 })).toEqual([
      { name: 'graphql', unit: 'points', limit: 10 },
    ]);
    expect(policies({ resetAt: new Date(NOW).toISOString() })).toBeUndefined();
    expect(parseBodyLimits({ data: { rateLimit: { cost: 3 } } })).toEqual({
      throttled: false,
      cost: 3,
      info: undefined,
    });
  });
});

describe('parseBodyLimits: what says nothing', () => {
  it.each([
    ['null', null],
    ['an array', [1, 2]],
    ['a number', 42],
    ['a plain answer', { data: { shop: { name: 'x' } } }],
    ['other errors', { errors: [{ message: 'syntax', extensions: { code: 'PARSE_ERROR' } }] }],
  ])('%s: undefined', (_, body) => {
    expect(parseBodyLimits(body)).toBeUndefined();
  });

  it('only the first 16 errors are looked at', () => {
    const errors = Array.from({ length: 16 }, () => ({ message: 'x' }));
    expect(
      parseBodyLimits({ errors: [...errors, { extensions: { code: 'THROTTLED' } }] }),
    ).toBeUndefined();
    expect(
      parseBodyLimits({ errors: [...errors.slice(1), { extensions: { code: 'THROTTLED' } }] })
        ?.throttled,
    ).toBe(true);
  });

  it('numbers out of range are ignored, as if absent', () => {
    for (const bad of [-1, 1e10, Number.NaN, Number.POSITIVE_INFINITY, '10', null, true]) {
      const body = {
        extensions: {
          cost: {
            requestedQueryCost: bad,
            throttleStatus: { maximumAvailable: bad, currentlyAvailable: bad, restoreRate: bad },
          },
        },
      };
      expect(parseBodyLimits(body)).toBeUndefined();
    }
    // A count above its own maximum: the remaining is dropped, the limit kept.
    const over = shopify(2000);
    expect(parseBodyLimits(over)?.info?.policies).toEqual([
      { name: 'graphql-cost', unit: 'points', limit: 1000, resetMs: 0 },
    ]);
    // A restore rate of 0 restores nothing: no policy (no wait could be computed).
    const still = shopify(10);
    still.extensions.cost.throttleStatus.restoreRate = 0;
    expect(parseBodyLimits(still)?.info).toBeUndefined();
  });

  it('runs no getter and reads no inherited field', () => {
    let ran = false;
    const cost = Object.create({
      throttleStatus: { maximumAvailable: 10, currentlyAvailable: 1, restoreRate: 1 },
    });
    Object.defineProperty(cost, 'requestedQueryCost', {
      enumerable: true,
      get() {
        ran = true;
        return 5;
      },
    });
    expect(parseBodyLimits({ extensions: { cost } })).toBeUndefined();
    expect(ran).toBe(false);
  });
});

describe('mergeInfo', () => {
  it('the body only, the headers only', () => {
    const headers = parseRateLimitHeaders({ 'retry-after': '3' }, { now: NOW });
    expect(mergeInfo(headers, undefined)).toBe(headers);
    const body = parseBodyLimits(shopify(948))?.info;
    expect(mergeInfo(undefined, body)).toBe(body);
  });

  it("both: one list, a body policy filled from the headers' of its name, the longer wait", () => {
    const headers = parseRateLimitHeaders(
      {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '3',
        'x-ratelimit-reset': String(Math.ceil((NOW + 60_000) / 1000)),
        'x-ratelimit-resource': 'graphql',
        'retry-after': '1',
      },
      { now: NOW },
    );
    const body = parseBodyLimits({
      data: { rateLimit: { limit: 5000, remaining: 2, cost: 1 } },
    })?.info;
    const merged = mergeInfo(headers, body);
    expect(merged?.source).toBe('github');
    // The body's remaining and unit, the headers' reset.
    expect(merged?.policies).toEqual([
      { name: 'graphql', unit: 'points', limit: 5000, remaining: 2, resetMs: 60_000 },
    ]);
    expect(merged).toMatchObject({ remaining: 2, policy: 'graphql', retryAfterMs: 1000 });
    const shop = parseBodyLimits(throttled(0))?.info;
    const both = mergeInfo(headers, shop);
    expect(both?.policies.map((p) => p.name).sort()).toEqual(['graphql', 'graphql-cost']);
    expect(both?.retryAfterMs).toBe(1040);
  });
});
