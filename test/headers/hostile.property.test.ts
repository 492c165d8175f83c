import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseResetMs } from '../../src/headers/values.js';
import {
  MAX_DELAY_MS,
  parseRateLimitHeaders,
  parseRetryAfter,
  type RateLimitInfo,
} from '../../src/index.js';

const NAMES = [
  'retry-after',
  'retry-after-ms',
  'x-ms-retry-after-ms',
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-used',
  'x-ratelimit-resource',
  'x-ratelimit-reset-after',
  'x-ratelimit-bucket',
  'x-ratelimit-global',
  'x-ratelimit-scope',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
  'anthropic-ratelimit-requests-limit',
  'anthropic-ratelimit-requests-remaining',
  'anthropic-ratelimit-requests-reset',
  'x-shopify-shop-api-call-limit',
  'x-ms-ratelimit-remaining-subscription-reads',
  'x-rate-limit',
  'x-rate-limit-limit',
  'x-rate-limit-remaining',
  'x-rate-limit-reset',
  'x-hubspot-ratelimit-daily',
  'x-hubspot-ratelimit-daily-remaining',
  'x-hubspot-ratelimit-interval-milliseconds',
  'x-hubspot-ratelimit-max',
  'x-hubspot-ratelimit-remaining',
  'x-hubspot-ratelimit-secondly',
  'x-hubspot-ratelimit-secondly-remaining',
  'sforce-limit-info',
  'x-ratelimit-remaining-__proto__',
  'anthropic-ratelimit-constructor-limit',
  '__proto__',
  'constructor',
  'date',
];

/** Values shaped like what the fields carry, mangled: numbers of every sign and size, dates, lists. */
const value = fc.oneof(
  fc.string(),
  fc.integer().map(String),
  fc.double().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e999', '-0', '0x1f', '', ' ', '9'.repeat(400)),
  fc.date({ noInvalidDate: true }).map((d) => d.toUTCString()),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.tuple(fc.integer(), fc.integer()).map(([a, b]) => `${a}/${b}`),
  fc
    .tuple(fc.string({ maxLength: 8 }), fc.integer(), fc.integer())
    .map(([name, r, t]) => `"${name.replace(/["\\]/g, '')}";r=${r};t=${t}`),
  fc.tuple(fc.integer(), fc.integer()).map(([q, w]) => `"p";q=${q};w=${w}, ${q};w=${w}`),
  fc
    .tuple(fc.integer(), fc.integer(), fc.integer())
    .map(([l, r, t]) => `limit=${l}, remaining=${r}, reset=${t}`),
  fc.tuple(fc.nat(), fc.constantFrom('h', 'm', 's', 'ms', 'us', 'x')).map(([n, u]) => `${n}${u}`),
  // Decimal counts (Reddit's `597.0`), signed or not, and windowed items (Docker Hub's `76;w=21600`).
  fc
    .tuple(fc.integer(), fc.nat(), fc.constantFrom('', '0', '00', '5'))
    .map(([a, b, c]) => `${a}.${b}${c}`),
  fc.tuple(fc.integer(), fc.integer()).map(([n, w]) => `${n};w=${w}`),
  // ISO 8601 resets, with and without seconds or zone (Mastodon, Jira).
  fc
    .date({ noInvalidDate: true })
    .map((d) => d.toISOString())
    .chain((iso) =>
      fc.constantFrom(iso, `${iso.slice(0, 16)}Z`, iso.slice(0, 16), iso.slice(0, 10)),
    ),
  // Salesforce members, well-formed or not, hostile names included.
  fc
    .array(
      fc
        .tuple(
          fc.constantFrom('api-usage', 'api-bursts', '__proto__', 'constructor', ''),
          fc.integer(),
          fc.integer(),
        )
        .map(([n, u, l]) => `${n}=${u}/${l}(appName=x)`),
      { maxLength: 20 },
    )
    .map((members) => members.join('; ')),
);

const headerMap = fc.dictionary(
  fc.oneof(fc.constantFrom(...NAMES), fc.string()),
  fc.oneof(value, fc.array(value)),
  {
    maxKeys: 12,
  },
);

function assertValidDelay(ms: number | undefined): void {
  if (ms === undefined) return;
  expect(Number.isFinite(ms)).toBe(true);
  expect(ms).toBeGreaterThanOrEqual(0);
  expect(ms).toBeLessThanOrEqual(MAX_DELAY_MS);
}

function assertValidCount(n: number | undefined): void {
  if (n === undefined) return;
  expect(Number.isSafeInteger(n)).toBe(true);
  expect(n).toBeGreaterThanOrEqual(0);
}

function assertValidInfo(info: RateLimitInfo | undefined): void {
  // Whatever the names were, nothing reached Object.prototype.
  for (const field of ['name', 'limit', 'remaining', 'resetMs', 'windowMs']) {
    expect(Object.hasOwn(Object.prototype, field)).toBe(false);
  }
  if (!info) return;
  assertValidDelay(info.resetMs);
  assertValidDelay(info.retryAfterMs);
  assertValidDelay(info.windowMs);
  assertValidCount(info.limit);
  assertValidCount(info.remaining);
  for (const p of info.policies) {
    expect(p.name === undefined || typeof p.name === 'string').toBe(true);
    assertValidDelay(p.resetMs);
    assertValidDelay(p.windowMs);
    assertValidCount(p.limit);
    assertValidCount(p.remaining);
    if (p.limit !== undefined && p.remaining !== undefined)
      expect(p.remaining).toBeLessThanOrEqual(p.limit);
  }
  expect(info.policies.length === 0 || info.policies[0]?.remaining === info.remaining).toBe(true);
}

describe('hostile input never throws and never yields an invalid number', () => {
  it('parseRateLimitHeaders on arbitrary header maps', () => {
    fc.assert(
      fc.property(headerMap, fc.integer({ min: -8.64e15, max: 8.64e15 }), (headers, now) => {
        assertValidInfo(parseRateLimitHeaders(headers, { now }));
      }),
      { numRuns: 2000 },
    );
  });

  it('parseRateLimitHeaders on arbitrary Headers objects', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...NAMES), value), { maxLength: 10 }),
        (pairs) => {
          const headers = new Headers();
          for (const [name, v] of pairs) {
            try {
              headers.append(name, v);
            } catch {
              // Headers itself rejects some byte sequences; that is not the parser's concern.
            }
          }
          assertValidInfo(parseRateLimitHeaders(headers, { now: Date.UTC(2026, 0, 1) }));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('parseRetryAfter and parseResetMs on arbitrary strings and clocks', () => {
    fc.assert(
      fc.property(value, fc.integer({ min: -8.64e15, max: 8.64e15 }), (v, now) => {
        assertValidDelay(parseRetryAfter(v, { now }));
        assertValidDelay(parseResetMs(v, now));
      }),
      { numRuns: 3000 },
    );
  });

  it('survives inputs that are not header maps at all', () => {
    const odd: unknown[] = [
      null,
      undefined,
      42,
      'x',
      [],
      [['retry-after', '5']],
      { 'retry-after': { a: 1 } },
      { 'retry-after': Symbol('s') },
      Object.create(null),
    ];
    for (const input of odd) {
      expect(() => parseRateLimitHeaders(input as never)).not.toThrow();
    }
    expect(parseRateLimitHeaders({ 'retry-after': 5 })).toMatchObject({ retryAfterMs: 5000 });
    expect(parseRateLimitHeaders({ 'retry-after': '5' }, { now: Number.NaN })).toMatchObject({
      retryAfterMs: 5000,
    });
  });
});
