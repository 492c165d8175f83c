/**
 * The provider header families the in-repo mock server does not emit (GitHub, OpenAI, Anthropic,
 * Discord, Shopify, Azure), served by msw with each provider's documented headers over a quota
 * of 5 requests per 10 s window. A burst of 20 calls must stay under the quota.
 */
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { wrapFetch } from '../../src/index.js';
import { FakeClock } from './helpers.js';

const LIMIT = 5;
const WINDOW_MS = 10_000;

interface Quota {
  remaining: number;
  windowEnd: number;
  used: number;
}

type Format = (q: Quota, now: number) => Record<string, string>;

const formats: Record<string, { headers: Format; reset: boolean }> = {
  github: {
    reset: true,
    headers: (q) => ({
      'x-ratelimit-limit': String(LIMIT),
      'x-ratelimit-remaining': String(q.remaining),
      'x-ratelimit-used': String(q.used),
      'x-ratelimit-reset': String(Math.ceil(q.windowEnd / 1000)),
      'x-ratelimit-resource': 'core',
    }),
  },
  openai: {
    reset: true,
    headers: (q, now) => ({
      'x-ratelimit-limit-requests': String(LIMIT),
      'x-ratelimit-remaining-requests': String(q.remaining),
      'x-ratelimit-reset-requests': `${((q.windowEnd - now) / 1000).toFixed(3)}s`,
      'x-ratelimit-limit-tokens': '200000',
      'x-ratelimit-remaining-tokens': '199000',
      'x-ratelimit-reset-tokens': '6m0s',
    }),
  },
  anthropic: {
    reset: true,
    headers: (q) => ({
      'anthropic-ratelimit-requests-limit': String(LIMIT),
      'anthropic-ratelimit-requests-remaining': String(q.remaining),
      'anthropic-ratelimit-requests-reset': new Date(q.windowEnd)
        .toISOString()
        .replace(/\.\d+Z$/, 'Z'),
      'anthropic-ratelimit-tokens-limit': '80000',
      'anthropic-ratelimit-tokens-remaining': '79000',
      'anthropic-ratelimit-tokens-reset': new Date(q.windowEnd).toISOString(),
    }),
  },
  discord: {
    reset: true,
    headers: (q, now) => ({
      'x-ratelimit-limit': String(LIMIT),
      'x-ratelimit-remaining': String(q.remaining),
      'x-ratelimit-reset': (q.windowEnd / 1000).toFixed(3),
      'x-ratelimit-reset-after': ((q.windowEnd - now) / 1000).toFixed(3),
      'x-ratelimit-bucket': 'abcd1234',
    }),
  },
  azure: {
    reset: false,
    headers: (q) => ({ 'x-ms-ratelimit-remaining-subscription-reads': String(q.remaining) }),
  },
  shopify: {
    reset: false,
    headers: (q) => ({ 'x-shopify-shop-api-call-limit': `${q.used}/${LIMIT}` }),
  },
};

const clock = new FakeClock(1_767_225_600_000); // 2026-01-01T00:00:00Z, a window boundary
let quota: Quota = { remaining: LIMIT, used: 0, windowEnd: clock.now() + WINDOW_MS };
let rejected = 0;

function take(format: Format): Response {
  const now = clock.now();
  if (now >= quota.windowEnd) {
    const windowEnd = Math.floor(now / WINDOW_MS) * WINDOW_MS + WINDOW_MS;
    quota = { remaining: LIMIT, used: 0, windowEnd };
  }
  if (quota.remaining === 0) {
    rejected++;
    const wait = Math.ceil((quota.windowEnd - now) / 1000);
    return HttpResponse.json(
      { error: 'rate_limited' },
      { status: 429, headers: { ...format(quota, now), 'retry-after': String(wait) } },
    );
  }
  quota.remaining--;
  quota.used++;
  return HttpResponse.json({ ok: true }, { headers: format(quota, now) });
}

const server = setupServer(
  http.get('https://api.:provider.test/*', ({ params }) => {
    const f = formats[String(params.provider)];
    if (!f) return new HttpResponse(null, { status: 404 });
    return take(f.headers);
  }),
);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

describe.each(Object.keys(formats))('%s headers', (provider) => {
  it('a burst of 20 calls stays under a quota of 5 per 10 s window', async () => {
    const windowStart = Math.ceil(clock.now() / WINDOW_MS) * WINDOW_MS;
    await clock.advance(windowStart - clock.now());
    quota = { remaining: LIMIT, used: 0, windowEnd: windowStart + WINDOW_MS };
    rejected = 0;
    const fetch = wrapFetch(undefined, { clock });
    const started = clock.now();
    const calls = Array.from({ length: 20 }, (_, i) =>
      fetch(`https://api.${provider}.test/items/${i}`),
    );
    await clock.until(Promise.all(calls), 120_000, 250);
    const responses = await Promise.all(calls);
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const windows = Math.ceil((clock.now() - started) / WINDOW_MS);
    if (formats[provider]?.reset) {
      // The headers say when the quota comes back: no 429 at all.
      expect(rejected).toBe(0);
    } else {
      // No reset in the headers: at most one probe per window meets a 429.
      expect(rejected).toBeLessThanOrEqual(windows);
    }
    // 20 calls at 5 per window need four windows; the client should not take many more.
    expect(windows).toBeLessThanOrEqual(5);
    const host = fetch.stats().hosts[`https://api.${provider}.test`];
    // GitHub's and Discord's answers name their budget: it is learned as a scope of the host.
    expect(host?.scopes[0]?.mode ?? host?.mode).toBe('declared');
    await fetch.close();
  });
});
