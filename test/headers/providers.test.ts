import { describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../src/index.js';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);

describe('GitHub (docs.github.com, "Rate limits for the REST API")', () => {
  it('reads the documented primary-limit headers, converting the Unix reset against Date', () => {
    // The documentation's own example response (Date is 1247 s before the reset).
    const info = parseRateLimitHeaders(
      {
        Date: 'Mon, 01 Jul 2013 17:27:06 GMT',
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': '56',
        'x-ratelimit-used': '4',
        'x-ratelimit-reset': '1372700873',
        'x-ratelimit-resource': 'core',
      },
      { now: NOW },
    );
    expect(info).toEqual({
      source: 'github',
      policy: 'core',
      limit: 60,
      remaining: 56,
      resetMs: 1_247_000,
      policies: [{ name: 'core', limit: 60, remaining: 56, resetMs: 1_247_000 }],
    });
  });

  it('derives remaining from limit - used when remaining is missing', () => {
    const info = parseRateLimitHeaders(
      { 'x-ratelimit-limit': '30', 'x-ratelimit-used': '30', 'x-ratelimit-resource': 'search' },
      { now: NOW },
    );
    expect(info).toMatchObject({ policy: 'search', remaining: 0 });
  });

  it('reads a secondary limit: retry-after on a 403 or 429', () => {
    const info = parseRateLimitHeaders(
      {
        'retry-after': '60',
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '4000',
        'x-ratelimit-used': '1000',
        'x-ratelimit-reset': String(NOW / 1000 + 600),
        'x-ratelimit-resource': 'core',
      },
      { now: NOW },
    );
    expect(info).toMatchObject({ source: 'github', retryAfterMs: 60_000, resetMs: 600_000 });
  });
});

describe('GitHub pushback (docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit)', () => {
  // "If you exceed your primary rate limit, you will receive a 403 or 429 response, and the
  // x-ratelimit-remaining header will be 0." The status is the client's; these are the headers.
  const reset = String(NOW / 1000 + 1200);

  it('a spent primary limit: remaining 0 and the reset, the hold the client needs', () => {
    const info = parseRateLimitHeaders(
      {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-used': '5000',
        'x-ratelimit-reset': reset,
        'x-ratelimit-resource': 'core',
      },
      { now: NOW },
    );
    expect(info).toEqual({
      source: 'github',
      policy: 'core',
      limit: 5000,
      remaining: 0,
      resetMs: 1_200_000,
      policies: [{ name: 'core', limit: 5000, remaining: 0, resetMs: 1_200_000 }],
    });
  });

  it('a secondary limit with retry-after: retryAfterMs, while the primary quota is not spent', () => {
    const info = parseRateLimitHeaders(
      {
        'retry-after': '60',
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '4321',
        'x-ratelimit-used': '679',
        'x-ratelimit-reset': reset,
        'x-ratelimit-resource': 'core',
      },
      { now: NOW },
    );
    expect(info).toMatchObject({ source: 'github', retryAfterMs: 60_000, remaining: 4321 });
  });

  it('a secondary limit without retry-after: remaining 0 and the reset, as for a primary one', () => {
    const info = parseRateLimitHeaders(
      {
        'x-ratelimit-limit': '30',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-used': '30',
        'x-ratelimit-reset': String(NOW / 1000 + 45),
        'x-ratelimit-resource': 'search',
      },
      { now: NOW },
    );
    expect(info).toMatchObject({ policy: 'search', remaining: 0, resetMs: 45_000 });
    expect(info?.retryAfterMs).toBeUndefined();
  });

  it('the same spent limit without x-ratelimit-resource still reads as spent', () => {
    const info = parseRateLimitHeaders(
      { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset },
      { now: NOW },
    );
    expect(info).toMatchObject({ source: 'x-ratelimit', remaining: 0, resetMs: 1_200_000 });
  });

  it('a 403 that is not about rate limits: quota left and no retry hint, nothing to hold', () => {
    const info = parseRateLimitHeaders(
      {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '4999',
        'x-ratelimit-used': '1',
        'x-ratelimit-reset': reset,
        'x-ratelimit-resource': 'core',
      },
      { now: NOW },
    );
    expect(info?.remaining).toBe(4999);
    expect(info?.retryAfterMs).toBeUndefined();
  });
});

describe('OpenAI (platform.openai.com/docs/guides/rate-limits, "Rate limits in headers")', () => {
  it('reads the documented headers as two policies, requests and tokens', () => {
    const info = parseRateLimitHeaders(
      {
        'x-ratelimit-limit-requests': '60',
        'x-ratelimit-limit-tokens': '150000',
        'x-ratelimit-remaining-requests': '59',
        'x-ratelimit-remaining-tokens': '149984',
        'x-ratelimit-reset-requests': '1s',
        'x-ratelimit-reset-tokens': '6m0s',
      },
      { now: NOW },
    );
    expect(info?.source).toBe('openai');
    expect(info?.policies).toEqual([
      { name: 'requests', unit: 'requests', limit: 60, remaining: 59, resetMs: 1000 },
      { name: 'tokens', unit: 'tokens', limit: 150000, remaining: 149984, resetMs: 360_000 },
    ]);
    expect(info).toMatchObject({ policy: 'requests', remaining: 59, resetMs: 1000 });
  });

  it('reads sub-second and fractional durations', () => {
    const info = parseRateLimitHeaders(
      {
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': '20ms',
        'x-ratelimit-remaining-tokens': '10',
        'x-ratelimit-reset-tokens': '1m30.5s',
      },
      { now: NOW },
    );
    expect(info?.policies.map((p) => p.resetMs)).toEqual([20, 90_500]);
  });
});

describe('Anthropic (docs.anthropic.com/en/api/rate-limits, "Response headers")', () => {
  it('reads each dimension as a policy with RFC 3339 resets', () => {
    const info = parseRateLimitHeaders(
      {
        'anthropic-ratelimit-requests-limit': '50',
        'anthropic-ratelimit-requests-remaining': '49',
        'anthropic-ratelimit-requests-reset': '2026-11-30T12:00:01Z',
        'anthropic-ratelimit-input-tokens-limit': '40000',
        'anthropic-ratelimit-input-tokens-remaining': '0',
        'anthropic-ratelimit-input-tokens-reset': '2026-11-30T12:00:30.5Z',
        'anthropic-ratelimit-output-tokens-limit': '8000',
        'anthropic-ratelimit-output-tokens-remaining': '8000',
        'anthropic-ratelimit-output-tokens-reset': '2026-11-30T13:00:00+01:00',
        'retry-after': '31',
      },
      { now: NOW },
    );
    expect(info).toMatchObject({
      source: 'anthropic',
      policy: 'input-tokens',
      remaining: 0,
      resetMs: 30_500,
      retryAfterMs: 31_000,
    });
    expect(info?.policies.find((p) => p.name === 'output-tokens')).toMatchObject({
      resetMs: 0,
      unit: 'tokens',
    });
    expect(info?.policies.find((p) => p.name === 'requests')).toMatchObject({
      resetMs: 1000,
      unit: 'requests',
    });
  });

  it('drops a reset without a zone offset rather than guessing one', () => {
    const info = parseRateLimitHeaders(
      {
        'anthropic-ratelimit-requests-remaining': '3',
        'anthropic-ratelimit-requests-reset': '2026-11-30T12:00:01',
      },
      { now: NOW },
    );
    expect(info?.policies).toEqual([{ name: 'requests', unit: 'requests', remaining: 3 }]);
  });
});

describe('Discord (discord.com/developers/docs/topics/rate-limits, "Header Format")', () => {
  it('reads the documented 429 example, preferring Reset-After over the Unix Reset', () => {
    const info = parseRateLimitHeaders(
      {
        'Retry-After': '65',
        'X-RateLimit-Limit': '10',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '1470173023.123',
        'X-RateLimit-Reset-After': '64.57',
        'X-RateLimit-Bucket': 'abcd1234',
        'X-RateLimit-Scope': 'user',
      },
      { now: NOW },
    );
    expect(info).toEqual({
      source: 'discord',
      policy: 'abcd1234',
      limit: 10,
      remaining: 0,
      resetMs: 64_570,
      retryAfterMs: 65_000,
      policies: [{ name: 'abcd1234', limit: 10, remaining: 0, resetMs: 64_570, scope: 'user' }],
    });
  });

  it('flags a global limit', () => {
    const info = parseRateLimitHeaders(
      { 'Retry-After': '1', 'X-RateLimit-Global': 'true', 'X-RateLimit-Scope': 'global' },
      { now: NOW },
    );
    expect(info).toMatchObject({ source: 'discord', global: true, retryAfterMs: 1000 });
  });

  it('falls back to the Unix Reset (with a fraction) when Reset-After is missing', () => {
    const info = parseRateLimitHeaders(
      {
        'X-RateLimit-Bucket': 'b',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(NOW / 1000 + 2.25),
      },
      { now: NOW },
    );
    expect(info?.resetMs).toBe(2250);
  });
});

describe('Azure (learn.microsoft.com: Azure OpenAI quotas; "Understand how Azure Resource Manager throttles requests")', () => {
  it('reads retry-after-ms before Retry-After', () => {
    expect(
      parseRateLimitHeaders({ 'retry-after-ms': '1500', 'Retry-After': '2' }, { now: NOW }),
    ).toEqual({
      source: 'retry-after',
      retryAfterMs: 1500,
      policies: [],
    });
  });

  it('reads x-ms-retry-after-ms', () => {
    expect(
      parseRateLimitHeaders({ 'x-ms-retry-after-ms': '250' }, { now: NOW })?.retryAfterMs,
    ).toBe(250);
  });

  it('reads Azure OpenAI quota headers, which follow the OpenAI shape', () => {
    const info = parseRateLimitHeaders(
      {
        'x-ratelimit-remaining-requests': '4',
        'x-ratelimit-remaining-tokens': '2000',
        'retry-after-ms': '800',
      },
      { now: NOW },
    );
    expect(info).toMatchObject({ source: 'openai', retryAfterMs: 800 });
  });

  it('reads Resource Manager remaining counts as policies', () => {
    const info = parseRateLimitHeaders(
      {
        'x-ms-ratelimit-remaining-subscription-reads': '11999',
        'x-ms-ratelimit-remaining-subscription-writes': '1199',
      },
      { now: NOW },
    );
    expect(info).toMatchObject({ source: 'azure', policy: 'subscription-writes', remaining: 1199 });
  });
});

describe('Shopify (shopify.dev/docs/api/usage/rate-limits, "REST Admin API rate limits")', () => {
  it('reads X-Shopify-Shop-Api-Call-Limit as used/size, and a decimal Retry-After', () => {
    expect(
      parseRateLimitHeaders(
        { 'X-Shopify-Shop-Api-Call-Limit': '32/40', 'Retry-After': '2.0' },
        { now: NOW },
      ),
    ).toEqual({
      source: 'shopify',
      policy: 'api-call-limit',
      limit: 40,
      remaining: 8,
      retryAfterMs: 2000,
      policies: [{ name: 'api-call-limit', limit: 40, remaining: 8 }],
    });
  });

  it('drops a used count above the bucket size', () => {
    expect(
      parseRateLimitHeaders({ 'X-Shopify-Shop-Api-Call-Limit': '41/40' }, { now: NOW })?.remaining,
    ).toBeUndefined();
    expect(
      parseRateLimitHeaders({ 'X-Shopify-Shop-Api-Call-Limit': '1/x' }, { now: NOW }),
    ).toBeUndefined();
  });
});

describe('Salesforce (developer.salesforce.com, "Limit Info Header"): bad input', () => {
  const read = (value: string) =>
    parseRateLimitHeaders({ 'Sforce-Limit-Info': value }, { now: NOW })?.policies;

  it('reads a usage past the limit as nothing left', () => {
    expect(read('api-usage=100010/100000')).toEqual([
      { name: 'api-usage', limit: 100000, remaining: 0 },
    ]);
  });

  it('skips malformed members and drops a member repeated with other numbers', () => {
    expect(
      read('api-usage=1/x; =3/4; api-bursts=-1/750; api-usage=9/10; api-bursts=2/750'),
    ).toEqual([
      { name: 'api-usage', limit: 10, remaining: 1 },
      { name: 'api-bursts', limit: 750, remaining: 748 },
    ]);
    expect(read('api-usage=9/10, api-usage=9/10; api-bursts=2/750, api-bursts=3/750')).toEqual([
      { name: 'api-usage', limit: 10, remaining: 1 },
    ]);
    expect(read('garbage')).toBeUndefined();
  });

  it(`reads at most ${16} members`, () => {
    const members = Array.from({ length: 20 }, (_, i) => `quota-${i}=1/10`).join('; ');
    expect(read(members)).toHaveLength(16);
  });
});

describe('HubSpot (developers.hubspot.com/docs/api/usage-details): partial headers', () => {
  it('reads an OAuth app, which has no daily limit, as the interval policy alone', () => {
    expect(
      parseRateLimitHeaders(
        {
          'X-HubSpot-RateLimit-Max': '110',
          'X-HubSpot-RateLimit-Remaining': '109',
          'X-HubSpot-RateLimit-Interval-Milliseconds': '10000',
        },
        { now: NOW },
      ),
    ).toEqual({
      source: 'hubspot',
      policy: 'interval',
      limit: 110,
      remaining: 109,
      windowMs: 10_000,
      policies: [{ name: 'interval', limit: 110, remaining: 109, windowMs: 10_000 }],
    });
  });

  it('ignores an interval of zero or garbage, and fields that say nothing', () => {
    expect(
      parseRateLimitHeaders(
        { 'X-HubSpot-RateLimit-Max': '10', 'X-HubSpot-RateLimit-Interval-Milliseconds': '0' },
        { now: NOW },
      )?.policies,
    ).toEqual([{ name: 'interval', limit: 10 }]);
    expect(
      parseRateLimitHeaders({ 'X-HubSpot-RateLimit-Interval-Milliseconds': '10000' }, { now: NOW }),
    ).toBeUndefined();
  });
});

describe('x-rate-limit (X, Okta, Zendesk): the bare X-Rate-Limit', () => {
  it('prefers X-Rate-Limit-Limit over the bare X-Rate-Limit', () => {
    expect(
      parseRateLimitHeaders(
        { 'X-Rate-Limit': '700', 'X-Rate-Limit-Limit': '900', 'X-Rate-Limit-Remaining': '1' },
        { now: NOW },
      )?.limit,
    ).toBe(900);
  });

  it('yields to X-RateLimit-* when a response carries both spellings', () => {
    expect(
      parseRateLimitHeaders(
        { 'X-RateLimit-Remaining': '3', 'X-Rate-Limit-Remaining': '4' },
        { now: NOW },
      ),
    ).toMatchObject({ source: 'x-ratelimit', remaining: 3 });
  });
});
