/**
 * Issue 26 §6, an OpenAI-style route limited per model over real HTTP on fake time: the key is the
 * JSON body's `model` (`{ json: 'model' }`), so each model has its own requests and tokens budgets,
 * answered with OpenAI's `x-ratelimit-*-requests` / `-tokens` fields (resets as Go durations).
 * What they declare is true. The model is data: bounded, never a key of a plain object.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';
import { createMockServer, type MockServer } from '../../../src/server/index.js';
import { all, call, pacedStatuses, postJson } from './budgets.js';
import { FakeClock } from './helpers.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const LABEL = 'POST /v1/chat/completions';

/** 3 requests and 600 tokens (`max_tokens`) per 10 s, per model. */
async function openai(clock: FakeClock): Promise<string> {
  const perModel = { json: 'model' } as const;
  server = await createMockServer({
    clock,
    routes: [
      {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: 'openai',
        limits: [
          { algorithm: 'fixed-window', limit: 3, windowMs: 10_000, key: perModel },
          {
            algorithm: 'fixed-window',
            limit: 600,
            windowMs: 10_000,
            key: perModel,
            unit: 'tokens',
            cost: { json: 'max_tokens', default: 1 },
          },
        ],
      },
    ],
  });
  return `${server.url}/v1/chat/completions`;
}

const ask = (model: unknown, maxTokens = 10) => postJson({ model, max_tokens: maxTokens });

describe('the mock server limiting per model, from the JSON body', () => {
  it("each model its own requests budget, in OpenAI's fields", async () => {
    const clock = new FakeClock();
    const url = await openai(clock);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await call(url, ask('model-a')));
    expect(answers.map((a) => a.headers.get('x-ratelimit-remaining-requests'))).toEqual([
      '2',
      '1',
      '0',
    ]);
    const first = answers[0]?.headers as Headers;
    expect(first.get('x-ratelimit-limit-requests')).toBe('3');
    expect(first.get('x-ratelimit-reset-requests')).toBe('10s');
    expect(first.get('x-ratelimit-limit-tokens')).toBe('600');
    expect(first.get('x-ratelimit-remaining-tokens')).toBe('590');
    const refused = await call(url, ask('model-a'));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ scope: 'json:model' });
    expect(JSON.stringify(refused.body)).not.toContain('model-a');
    // Model b has its whole budget while model a is spent.
    const b = await call(url, ask('model-b'));
    expect(b.status).toBe(200);
    expect(b.headers.get('x-ratelimit-remaining-requests')).toBe('2');
    expect(parseRateLimitHeaders(b.headers, { now: clock.now() })).toMatchObject({
      source: 'openai',
    });
  });

  it("each model its own tokens budget: one model's large asks leave the other's whole", async () => {
    const clock = new FakeClock();
    const url = await openai(clock);
    expect((await call(url, ask('a', 500))).status).toBe(200);
    const refused = await call(url, ask('a', 200));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-remaining-tokens')).toBe('100');
    const other = await call(url, ask('b', 500));
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining-tokens')).toBe('100');
  });

  it('declares the truth: paced at the limit per reset, never refused; one more is', async () => {
    const clock = new FakeClock();
    const url = await openai(clock);
    const first = await call(url, ask('a'));
    const info = parseRateLimitHeaders(first.headers, { now: clock.now() });
    const requests = info?.policies.find((p) => p.name === 'requests');
    const limit = requests?.limit as number;
    const windowMs = requests?.resetMs as number;
    expect([limit, windowMs]).toEqual([3, 10_000]);
    clock.advance(windowMs);
    // Two models, each paced at the declaration at once.
    const both = async () => {
      const a = await call(url, ask('a'));
      const b = await call(url, ask('b'));
      return a.status !== 200 ? a : b;
    };
    expect(await pacedStatuses(clock, limit, windowMs, 3, both)).toEqual(all(200, 9));
    clock.advance(windowMs - (clock.now() % windowMs));
    const send = () => call(url, ask('a'));
    expect(await pacedStatuses(clock, limit + 1, windowMs, 1, send)).toEqual([200, 200, 200, 429]);
  });

  it('the model is data: bounded at 128 characters, __proto__ a model like any other', async () => {
    const clock = new FakeClock();
    const url = await openai(clock);
    const long = 'm'.repeat(128);
    for (const model of ['__proto__', 'constructor', long, `${long}x`, 7, null]) {
      expect((await call(url, ask(model))).status).toBe(200);
    }
    // A body that is not JSON by its type has no model: those requests share one budget.
    await call(url, { method: 'POST', body: '{"model":"x"}' });
    const keys = server?.stats().routes[LABEL]?.keys ?? {};
    expect(Object.getPrototypeOf(keys)).toBe(null);
    const names = Object.keys(keys);
    expect(names).toContain('json model:__proto__');
    expect(names).toContain('json model:constructor');
    expect(names).toContain(`json model:${long}`);
    expect(names).toContain('json model:7');
    // 129 characters are keyed by their SHA-256; null and the non-JSON body by nothing.
    expect(names.filter((n) => n.startsWith('json model:sha256:'))).toHaveLength(1);
    expect(names.some((n) => n.includes(`${long}x`))).toBe(false);
    expect(keys['json model:']?.admitted).toBe(2);
  });
});
