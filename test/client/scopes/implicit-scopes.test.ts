/**
 * Scopes no answer names (issue 26): the model in an LLM request's body, and a route of a host
 * whose unnamed limits differ per route. Units over parsed headers; the behaviour over real HTTP
 * is in test/client/integration/scopes-models.int.test.ts and scopes-routes.int.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { PreparedRequest } from '../../../src/client/call/request.js';
import { ImplicitScopes } from '../../../src/client/scopes/implicit-scopes.js';
import { modelScopeOf } from '../../../src/client/scopes/model-scope.js';
import { MAX_ROUTES, MAX_SCOPE_NAMES } from '../../../src/client/scopes/route-scopes.js';
import { RESET_SLACK_MS, RouteSplit } from '../../../src/client/scopes/route-split.js';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';

const API = 'https://api.example.com';
const T0 = 1_800_000_000_000;

function req(body: unknown, headers: Record<string, string> = {}, url = `${API}/v1/chat`) {
  return {
    method: 'POST',
    url,
    input: url,
    init: { method: 'POST', body: body as BodyInit, headers },
    replayable: true,
    hasKey: false,
    key: undefined,
    view: undefined,
  } as PreparedRequest;
}

const get = (path: string) => ({ method: 'GET', url: `${API}${path}` });

/** X's fields: limit, remaining, reset in epoch seconds. */
function x(limit: number, remaining: number, resetAt: number, at: number) {
  return parseRateLimitHeaders(
    {
      'x-rate-limit-limit': String(limit),
      'x-rate-limit-remaining': String(remaining),
      'x-rate-limit-reset': String(Math.ceil(resetAt / 1000)),
    },
    { now: at },
  ) as NonNullable<ReturnType<typeof parseRateLimitHeaders>>;
}

const openai = parseRateLimitHeaders({
  'x-ratelimit-limit-requests': '10',
  'x-ratelimit-remaining-requests': '9',
  'x-ratelimit-reset-requests': '1s',
}) as NonNullable<ReturnType<typeof parseRateLimitHeaders>>;

describe('the model a request body names', () => {
  it('is read from a JSON text body, as the scope model:<name>', () => {
    expect(modelScopeOf(req(JSON.stringify({ model: 'gpt-4o', messages: [] })))).toBe(
      'model:gpt-4o',
    );
    const bytes = new TextEncoder().encode('{"model":"claude-haiku-4-5"}');
    expect(modelScopeOf(req(bytes, { 'content-type': 'application/json' }))).toBe(
      'model:claude-haiku-4-5',
    );
  });

  it('is none for a stream, bytes not labelled as text, no model, or an unusable name', () => {
    const stream = new ReadableStream({ start: (c) => c.close() });
    expect(modelScopeOf(req(stream))).toBeUndefined();
    expect(modelScopeOf(req(new TextEncoder().encode('{"model":"a"}')))).toBeUndefined();
    expect(modelScopeOf(req(undefined))).toBeUndefined();
    expect(modelScopeOf(req('{"messages":[]}'))).toBeUndefined();
    expect(modelScopeOf(req('["model"]'))).toBeUndefined();
    expect(modelScopeOf(req('{"model": 4}'))).toBeUndefined();
    expect(modelScopeOf(req('{"model": "a\\u0000b"}'))).toBeUndefined();
    expect(modelScopeOf(req(JSON.stringify({ model: 'm'.repeat(129) })))).toBeUndefined();
    expect(modelScopeOf(req(JSON.stringify({ model: 'm'.repeat(128) })))).toBe(
      `model:${'m'.repeat(128)}`,
    );
    // Over the 1 MiB a body is read to: no model, the host's own lane.
    const big = JSON.stringify({ model: 'gpt-4o', pad: 'x'.repeat(1024 * 1024) });
    expect(modelScopeOf(req(big))).toBeUndefined();
  });

  it('is read once per call', () => {
    const r = req('{"model":"gpt-4o"}');
    expect(modelScopeOf(r)).toBe('model:gpt-4o');
    (r.init as { body: string }).body = '{"model":"other"}';
    expect(modelScopeOf(r)).toBe('model:gpt-4o');
  });
});

describe('inferred scopes of a host', () => {
  it('read the model only once the host answered in an LLM dialect, or on a known origin', () => {
    const call = req('{"model":"gpt-4o"}');
    const plain = new ImplicitScopes(API, true);
    expect(plain.active).toBe(false);
    expect(plain.answered(call, openai, T0)).toBe(true);
    expect(plain.scopeOf(call)).toBe('model:gpt-4o');
    const known = new ImplicitScopes('https://api.openai.com', true);
    expect(known.scopeOf(req('{"model":"gpt-4o"}'))).toBe('model:gpt-4o');
    // Learning off: nothing inferred, not even on a known origin.
    const off = new ImplicitScopes('https://api.anthropic.com', false);
    expect(off.scopeOf(req('{"model":"x"}'))).toBeUndefined();
    expect(off.answered(call, openai, T0)).toBe(false);
  });

  it(`count at most ${MAX_SCOPE_NAMES} names, then infer none`, () => {
    const scopes = new ImplicitScopes('https://api.openai.com', true);
    for (let i = 0; i < MAX_SCOPE_NAMES; i++) {
      expect(scopes.scopeOf(req(`{"model":"m${i}"}`))).toBe(`model:m${i}`);
    }
    expect(scopes.scopeOf(req('{"model":"m0"}'))).toBe('model:m0');
    expect(scopes.scopeOf(req(`{"model":"m${MAX_SCOPE_NAMES}"}`))).toBeUndefined();
    expect(scopes.active).toBe(false);
    expect(scopes.scopeOf(req('{"model":"m0"}'))).toBeUndefined();
  });

  it('give a split host a scope per route', () => {
    const scopes = new ImplicitScopes(API, true);
    const at = T0;
    const a = { ...req(undefined, {}, `${API}/2/tweets/search/recent?q=1`), method: 'GET' };
    const b = { ...req(undefined, {}, `${API}/2/users/7/tweets`), method: 'GET' };
    expect(scopes.answered(a, x(5, 4, at + 3000, at), at)).toBe(false);
    expect(scopes.answered(b, x(10, 9, at + 3000, at), at)).toBe(false);
    expect(scopes.answered(a, x(5, 3, at + 3000, at), at)).toBe(true);
    expect(scopes.scopeOf(a)).toBe('route:GET /:id/tweets/search/recent');
    expect(scopes.scopeOf(b)).toBe('route:GET /:id/users/:id/tweets');
  });
});

describe('a host split per route', () => {
  it('is split when two routes keep reporting different limits', () => {
    const split = new RouteSplit();
    const at = T0;
    const a = get('/2/tweets/search/recent?query=a');
    const b = get('/2/users/1/tweets');
    expect(split.observe(a.method, a.url, x(5, 4, at + 3000, at), at)).toBe(false);
    expect(split.observe(b.method, b.url, x(10, 9, at + 3000, at), at)).toBe(false);
    // A again with its own limit, after B said another: two budgets at once.
    expect(split.observe(a.method, a.url, x(5, 3, at + 3000, at), at)).toBe(true);
    expect(split.split).toBe(true);
  });

  it('is not split when every route reports one budget (same limit, same window end)', () => {
    const split = new RouteSplit();
    const end = T0 + 60_000;
    for (let i = 0; i < 300; i++) {
      const r = get(`/r${i % 7}/${i}`);
      expect(split.observe(r.method, r.url, x(100, 99 - (i % 100), end, T0 + i), T0 + i)).toBe(
        false,
      );
    }
  });

  it('is never split once a route reported limits other than its own earlier ones', () => {
    // A server that writes whichever of its policies is nearest (per second, per hour).
    const split = new RouteSplit();
    const at = T0;
    const a = get('/a');
    const b = get('/b');
    expect(split.observe(a.method, a.url, x(10, 5, at + 1000, at), at)).toBe(false);
    expect(split.observe(a.method, a.url, x(1000, 3, at + 3_600_000, at), at)).toBe(false);
    expect(split.observe(b.method, b.url, x(10, 5, at + 1000, at), at)).toBe(false);
    expect(split.observe(a.method, a.url, x(1000, 2, at + 3_600_000, at), at)).toBe(false);
    expect(split.observe(b.method, b.url, x(10, 4, at + 1000, at), at)).toBe(false);
    expect(split.split).toBe(false);
  });

  it('is split when the same limits come from steady windows that end apart', () => {
    const split = new RouteSplit();
    const at = T0;
    const a = get('/a');
    const b = get('/b');
    const endA = at + 10_000;
    const endB = at + 10_000 + 3 * RESET_SLACK_MS;
    let t = at;
    // Each route twice in a row (a steady reset), then alternating.
    for (const [r, end] of [
      [a, endA],
      [a, endA],
      [b, endB],
      [b, endB],
      [a, endA],
      [b, endB],
    ] as const) {
      t += 10;
      split.observe(r.method, r.url, x(15, 10, end, t), t);
    }
    expect(split.split).toBe(true);
  });

  it('is not split by windows one slack apart, nor by a stale answer', () => {
    const split = new RouteSplit();
    const a = get('/a');
    const b = get('/b');
    let t = T0;
    const steps: [typeof a, number][] = [
      [a, T0 + 5000],
      [a, T0 + 5000],
      [b, T0 + 5000 + RESET_SLACK_MS],
      [b, T0 + 5000 + RESET_SLACK_MS],
      [a, T0 + 5000],
      [b, T0 + 5000],
      [a, T0 + 5000],
    ];
    for (const [r, end] of steps) {
      t += 10;
      split.observe(r.method, r.url, x(15, 10, end, t), t);
    }
    expect(split.split).toBe(false);
    // A window that ended (an answer overtaken by the next window's) says nothing.
    t = T0 + 6000;
    for (const [r, end] of [
      [b, T0 + 9000],
      [b, T0 + 9000],
      [a, T0 + 5000],
      [b, T0 + 9000],
      [a, T0 + 5000],
      [b, T0 + 9000],
    ] as const) {
      t += 10;
      split.observe(r.method, r.url, x(15, 10, end, t), t);
    }
    expect(split.split).toBe(false);
  });

  it(`remembers at most ${MAX_ROUTES} routes, the least recently answered forgotten`, () => {
    const split = new RouteSplit();
    for (let i = 0; i < MAX_ROUTES * 2; i++) {
      const r = get(`/r${i}`);
      split.observe(r.method, r.url, x(100, 50, T0 + 60_000, T0), T0);
    }
    expect(split.size).toBe(MAX_ROUTES);
    // /r0 was forgotten: its limits changing now is news of a new route, not of a mixed host.
    const a = get('/r0');
    split.observe(a.method, a.url, x(7, 5, T0 + 60_000, T0), T0);
    expect(split.size).toBe(MAX_ROUTES);
    const b = get(`/r${MAX_ROUTES * 2 - 1}`);
    split.observe(b.method, b.url, x(100, 49, T0 + 60_000, T0), T0);
    split.observe(a.method, a.url, x(7, 4, T0 + 60_000, T0), T0);
    expect(split.split).toBe(true);
  });

  it('reads only the families that name no budget', () => {
    const split = new RouteSplit();
    const a = get('/v1/a');
    const b = get('/v1/b');
    const named = (limit: number) =>
      parseRateLimitHeaders({
        'x-ratelimit-limit': String(limit),
        'x-ratelimit-remaining': '1',
        'x-ratelimit-reset': String(Math.ceil((T0 + 60_000) / 1000)),
        'x-ratelimit-resource': 'core',
      }) as NonNullable<ReturnType<typeof parseRateLimitHeaders>>;
    split.observe(a.method, a.url, named(5), T0);
    split.observe(b.method, b.url, named(10), T0);
    split.observe(a.method, a.url, named(5), T0);
    split.observe(b.method, b.url, openai, T0);
    expect(split.split).toBe(false);
  });
});
