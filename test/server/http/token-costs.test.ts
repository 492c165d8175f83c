/**
 * An OpenAI-style route over real HTTP on loopback: requests and tokens limited at once, the token
 * cost read from the request, answered in OpenAI's header fields and read back by the client's own
 * parser.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';
import {
  createMockServer,
  type HeaderFamily,
  type LimitConfig,
  type MockServer,
  type MockServerConfig,
} from '../../../src/server/index.js';
import { FakeClock } from './helpers.js';

// 12:00:03.250: the 1 s window ends in 750 ms, the 10 s window in 6750 ms.
const NOW = Date.UTC(2026, 10, 30, 12, 0, 3, 250);

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const REQUESTS: LimitConfig = {
  algorithm: 'fixed-window',
  limit: 10,
  windowMs: 1000,
  name: 'requests',
};
const TOKENS: LimitConfig = {
  algorithm: 'fixed-window',
  limit: 600,
  windowMs: 10_000,
  name: 'tokens',
  unit: 'tokens',
  cost: { header: 'x-token-estimate', json: 'max_tokens', default: 1 },
};

async function start(headers: HeaderFamily = 'openai', extra: Partial<MockServerConfig> = {}) {
  const clock = new FakeClock(NOW);
  server = await createMockServer({
    clock,
    routes: [
      {
        method: 'POST',
        path: '/v1/chat/completions',
        headers,
        limits: [REQUESTS, TOKENS],
      },
      { method: 'POST', path: '/echo' },
    ],
    ...extra,
  });
  const url = `${server.url}/v1/chat/completions`;
  const chat = (body: unknown, init: { headers?: Record<string, string> } = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...init.headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  return { server, clock, url, chat };
}

function openAi(response: Response): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const kind of ['limit', 'remaining', 'reset']) {
    for (const unit of ['requests', 'tokens']) {
      out[`${kind}-${unit}`] = response.headers.get(`x-ratelimit-${kind}-${unit}`);
    }
  }
  return out;
}

describe('an OpenAI-style route: requests and tokens per window, the cost from the request', () => {
  it('answers in the OpenAI shape, which parseRateLimitHeaders reads as two policies with units', async () => {
    const { chat } = await start();
    const response = await chat({ model: 'm', max_tokens: 50 });
    expect(response.status).toBe(200);
    expect(openAi(response)).toEqual({
      'limit-requests': '10',
      'limit-tokens': '600',
      'remaining-requests': '9',
      'remaining-tokens': '550',
      'reset-requests': '750ms',
      'reset-tokens': '6.75s',
    });
    // In OpenAI's order: every limit, then every remaining, then every reset.
    const names = [...response.headers.keys()].filter((n) => n.startsWith('x-ratelimit-'));
    expect(names).toEqual([
      'x-ratelimit-limit-requests',
      'x-ratelimit-limit-tokens',
      'x-ratelimit-remaining-requests',
      'x-ratelimit-remaining-tokens',
      'x-ratelimit-reset-requests',
      'x-ratelimit-reset-tokens',
    ]);
    expect(response.headers.get('ratelimit')).toBeNull();
    const info = parseRateLimitHeaders(response.headers, { now: NOW });
    expect(info?.source).toBe('openai');
    const policies = [...(info?.policies ?? [])].sort((a, b) =>
      (a.name ?? '') < (b.name ?? '') ? -1 : 1,
    );
    expect(policies).toEqual([
      { name: 'requests', unit: 'requests', limit: 10, remaining: 9, resetMs: 750 },
      { name: 'tokens', unit: 'tokens', limit: 600, remaining: 550, resetMs: 6750 },
    ]);
    // The echo is untouched by reading the cost from the body.
    expect(await response.json()).toMatchObject({ body: { model: 'm', max_tokens: 50 } });
  });

  it('takes the header before the body, and the default (1) when neither says', async () => {
    const { chat } = await start();
    const byHeader = await chat({ max_tokens: 50 }, { headers: { 'x-token-estimate': '100' } });
    expect(openAi(byHeader)['remaining-tokens']).toBe('500');
    const none = await chat({ model: 'm' });
    expect(openAi(none)['remaining-tokens']).toBe('499');
    const malformed = await chat('{"max_tokens": 50');
    expect(malformed.status).toBe(200);
    expect(openAi(malformed)['remaining-tokens']).toBe('498');
    const notJson = await fetch(`${server?.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{"max_tokens": 50}',
    });
    expect(openAi(notJson)['remaining-tokens']).toBe('497');
    const nested = await chat({ max_tokens: { value: 50 } });
    expect(nested.status).toBe(400);
  });

  it.each([
    [{ 'x-token-estimate': '-5' }, { max_tokens: 5 }, 'header x-token-estimate'],
    [{ 'x-token-estimate': 'abc' }, { max_tokens: 5 }, 'header x-token-estimate'],
    [{ 'x-token-estimate': '0' }, {}, 'header x-token-estimate'],
    [{}, { max_tokens: -1 }, 'json max_tokens'],
    [{}, { max_tokens: 2.5 }, 'json max_tokens'],
    [{}, { max_tokens: '50' }, 'json max_tokens'],
    [{}, { max_tokens: null }, 'json max_tokens'],
  ])('refuses a bad cost (%j, %j) with 400 and spends nothing', async (headers, body, source) => {
    const { chat } = await start();
    const bad = await chat(body, { headers });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid_cost', policy: 'tokens', source });
    const next = await chat({ max_tokens: 1 });
    expect(next.status).toBe(200);
    expect(openAi(next)).toMatchObject({ 'remaining-requests': '9', 'remaining-tokens': '599' });
    expect(server?.stats()).toMatchObject({ admitted: 1, rejected: 0, sideEffects: 1 });
  });

  it('refuses a cost above the whole limit with 413, not a 429 to retry, and spends nothing', async () => {
    const { chat } = await start();
    const tooBig = await chat({ max_tokens: 601 });
    expect(tooBig.status).toBe(413);
    expect(tooBig.headers.get('retry-after')).toBeNull();
    expect(await tooBig.json()).toMatchObject({
      error: 'cost_exceeds_limit',
      policy: 'tokens',
      unit: 'tokens',
      limit: 600,
      cost: 601,
    });
    const whole = await chat({ max_tokens: 600 });
    expect(whole.status).toBe(200);
    expect(openAi(whole)).toMatchObject({ 'remaining-requests': '9', 'remaining-tokens': '0' });
  });

  it('a refusal by the tokens limit spends no request, and says so with Retry-After', async () => {
    const { chat, clock } = await start();
    expect((await chat({ max_tokens: 550 })).status).toBe(200);
    const refused = await chat({ max_tokens: 100 });
    expect(refused.status).toBe(429);
    expect(openAi(refused)).toEqual({
      'limit-requests': '10',
      'limit-tokens': '600',
      'remaining-requests': '9',
      'remaining-tokens': '50',
      'reset-requests': '750ms',
      'reset-tokens': '6.75s',
    });
    expect(refused.headers.get('retry-after')).toBe('7');
    expect(await refused.json()).toMatchObject({
      error: 'rate_limited',
      policy: 'tokens',
      unit: 'tokens',
      cost: 100,
      remaining: 50,
      retryAfterMs: 6750,
    });
    const info = parseRateLimitHeaders(refused.headers, { now: NOW });
    expect(info).toMatchObject({ source: 'openai', retryAfterMs: 7000 });
    // A smaller call still fits: the refused one took nothing from either limit.
    const fits = await chat({ max_tokens: 50 });
    expect(openAi(fits)).toMatchObject({ 'remaining-requests': '8', 'remaining-tokens': '0' });
    clock.advance(6750);
    const later = await chat({ max_tokens: 100 });
    expect(later.status).toBe(200);
    expect(openAi(later)).toMatchObject({ 'remaining-tokens': '500', 'reset-tokens': '10s' });
  });

  it('a refusal by the requests limit spends no tokens', async () => {
    const { chat } = await start();
    for (let i = 0; i < 10; i++) expect((await chat({ max_tokens: 10 })).status).toBe(200);
    const refused = await chat({ max_tokens: 100 });
    expect(refused.status).toBe(429);
    expect(openAi(refused)).toMatchObject({ 'remaining-requests': '0', 'remaining-tokens': '500' });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ policy: 'requests', unit: 'requests', cost: 1 });
    expect(server?.stats()).toMatchObject({ admitted: 10, rejected: 1 });
  });

  it('the IETF family declares the token unit as qu="tokens"', async () => {
    const { chat } = await start('ietf');
    const response = await chat({ max_tokens: 50 });
    expect(response.headers.get('ratelimit-policy')).toBe(
      '"requests";q=10;w=1, "tokens";q=600;w=10;qu="tokens"',
    );
    expect(response.headers.get('ratelimit')).toBe('"requests";r=9;t=1, "tokens";r=550;t=7');
    const info = parseRateLimitHeaders(response.headers, { now: NOW });
    expect(info?.policies).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'tokens', unit: 'tokens', limit: 600, remaining: 550 }),
        expect.objectContaining({ name: 'requests', limit: 10, remaining: 9 }),
      ]),
    );
    expect(info?.policies.find((p) => p.name === 'requests')?.unit).toBeUndefined();
  });

  it('an Idempotency-Key replay of a priced request replays its echo, and is charged like any request', async () => {
    const { chat } = await start();
    const headers = { 'idempotency-key': 'k1' };
    const first = await chat({ max_tokens: 40 }, { headers });
    const again = await chat({ max_tokens: 40 }, { headers });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(await first.text());
    expect(openAi(again)).toMatchObject({ 'remaining-requests': '8', 'remaining-tokens': '520' });
    const reused = await chat({ max_tokens: 41 }, { headers });
    expect(reused.status).toBe(422);
    expect(server?.stats()).toMatchObject({ sideEffects: 1 });
    expect(server?.stats().routes['POST /v1/chat/completions']).toMatchObject({ replays: 1 });
  });

  it('another route, with no cost read from the request, is not touched', async () => {
    const { server: s } = await start();
    const response = await fetch(`${s.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-token-estimate': 'nonsense' },
      body: '{"max_tokens": -1}',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ body: { max_tokens: -1 } });
  });

  it('a body of 1 MiB nested a million deep is bounded: the cost falls back, nothing crashes', async () => {
    const { chat } = await start();
    const depth = 512 * 1024;
    const response = await chat(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    expect(response.status).toBe(200);
    expect(openAi(response)['remaining-tokens']).toBe('599');
    // The echo could not be serialised as JSON that deep: it carries the body as text.
    expect(((await response.json()) as { body: string }).body).toHaveLength(2 * depth);
    const over = await chat(`{"max_tokens": 5, "pad": "${'x'.repeat(1024 * 1024)}"}`);
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ error: 'payload_too_large' });
  });

  it('a server-wide tokens limit reads each route its cost, and the openai family keeps the tightest of a unit', async () => {
    const clock = new FakeClock(NOW);
    server = await createMockServer({
      clock,
      limits: [{ ...TOKENS, name: 'org-tokens', limit: 1000, key: 'global' }],
      routes: [
        { method: 'POST', path: '/a', headers: 'openai', limits: [REQUESTS, TOKENS] },
        { method: 'POST', path: '/b', headers: 'openai' },
      ],
    });
    const post = (path: string, maxTokens: number) =>
      fetch(`${server?.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ max_tokens: maxTokens }),
      });
    const a = await post('/a', 500);
    // The route's own 600 is tighter (100 left of 600) than the server's (500 left of 1000).
    expect(openAi(a)).toMatchObject({ 'limit-tokens': '600', 'remaining-tokens': '100' });
    const b = await post('/b', 300);
    expect(openAi(b)).toMatchObject({
      'limit-requests': null,
      'limit-tokens': '1000',
      'remaining-tokens': '200',
    });
    const refused = await post('/b', 300);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ policy: 'org-tokens', cost: 300 });
  });
});

describe('the same route on sliding logs (a minimum that does not depend on the start time)', () => {
  it('admits 600 tokens in any 10 s, wherever the window starts', async () => {
    const clock = new FakeClock(NOW);
    const slide = (limit: LimitConfig): LimitConfig =>
      limit.algorithm === 'fixed-window' ? { ...limit, algorithm: 'sliding-log' } : limit;
    server = await createMockServer({
      clock,
      routes: [
        {
          method: 'POST',
          path: '/v1/chat/completions',
          headers: 'openai',
          limits: [slide(REQUESTS), slide(TOKENS)],
        },
      ],
    });
    const chat = () =>
      fetch(`${server?.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"max_tokens": 50}',
      });
    const first = await Promise.all(Array.from({ length: 10 }, chat));
    expect(first.map((r) => r.status)).toEqual(Array(10).fill(200));
    clock.advance(1000);
    expect((await chat()).status).toBe(200);
    const last = await chat();
    expect(openAi(last)).toMatchObject({ 'remaining-tokens': '0', 'reset-tokens': '9s' });
    const refused = await chat();
    expect(refused.status).toBe(429);
    expect(openAi(refused)).toMatchObject({ 'reset-tokens': '9s' });
    clock.advance(8999);
    expect((await chat()).status).toBe(429);
    clock.advance(1);
    const again = await Promise.all(Array.from({ length: 10 }, chat));
    expect(again.map((r) => r.status)).toEqual(Array(10).fill(200));
    // The two calls made at +1 s still hold 100 tokens: the ten new ones leave 450 down to 0.
    const left = again.map((r) => Number(openAi(r)['remaining-tokens'])).sort((a, b) => a - b);
    expect(left).toEqual([0, 50, 100, 150, 200, 250, 300, 350, 400, 450]);
  });
});

describe('docs/mock-server-costs.md', () => {
  const doc = readFileSync(new URL('../../../docs/mock-server-costs.md', import.meta.url), 'utf8');

  it('its configuration starts, and answers the fields it shows, byte for byte', async () => {
    const json = /```json\n([\s\S]*?)```/.exec(doc)?.[1] as string;
    const shown = /```\n(x-ratelimit-[\s\S]*?)```/.exec(doc)?.[1] as string;
    const config = JSON.parse(json) as MockServerConfig;
    server = await createMockServer({ ...config, clock: new FakeClock(NOW) });
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', max_tokens: 50 }),
    });
    expect(response.status).toBe(200);
    const sent = [...response.headers]
      .filter(([name]) => name.startsWith('x-ratelimit-'))
      .map(([name, value]) => `${name}: ${value}\n`)
      .join('');
    expect(sent).toBe(shown);
  });
});
