/**
 * Issue 28 §5 end to end: the `openai` SDK, unchanged but for its `fetch` (a `wrapFetch` whose
 * `cost` function reads `max_tokens` from each request's JSON body), against the mock server's
 * OpenAI-style route, which charges the same field: every call ok with 0 x 429, and the tokens the
 * server counted are the tokens the client estimated. Per-call options reach the client through
 * the SDK's `fetchOptions` with `limitedInit`, with no cast. The undici interceptor's path:
 * test/undici/sdks.int.test.ts.
 */
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { chatCost, runSdk } from '../../../examples/openai-sdk.js';
import { type CostContext, type CostVector, limitedInit, wrapFetch } from '../../../src/index.js';
import type { MockServer } from '../../../src/server/index.js';
import { closeAll, start } from './server.js';

afterAll(closeAll);

const TOKENS = 100_000;

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-test',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
};

/** An OpenAI-style route whose windows do not end during a test: every token charged stays. */
function wideServer(): Promise<MockServer> {
  return start({
    routes: [
      {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: 'openai',
        limits: [
          { algorithm: 'fixed-window', limit: 1000, windowMs: 3_600_000, name: 'requests' },
          {
            algorithm: 'fixed-window',
            limit: TOKENS,
            windowMs: 3_600_000,
            name: 'tokens',
            unit: 'tokens',
            cost: { json: 'max_tokens', default: 1 },
          },
        ],
        response: { body: completion },
      },
    ],
  });
}

/**
 * A wrapFetch with `cost`, behind a fetch that records the server's remaining tokens on each
 * answer (what the SDK is given as its `fetch`).
 */
function recordingFetch(cost: (request: CostContext) => CostVector) {
  const wrapped = wrapFetch(undefined, { cost });
  const remaining: number[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await wrapped(input, init);
    remaining.push(Number(res.headers.get('x-ratelimit-remaining-tokens')));
    return res;
  }) as typeof globalThis.fetch;
  return { wrapped, fetch, remaining };
}

describe('the OpenAI SDK with wrapFetch and a cost read from the body', () => {
  it('examples/openai-sdk.ts: every call ok, 0 x 429, the tokens of every body charged', async () => {
    const run = await runSdk();
    expect(run).toMatchObject({ calls: 12, ok: 12, rejected: 0, attempts: 12, tokens: 900 });
  }, 30_000);

  it('the same calls with the default cost bounce off the token policy', async () => {
    const run = await runSdk({ costFromBody: false });
    expect(run.ok).toBe(12);
    expect(run.rejected).toBeGreaterThan(0);
    expect(run.attempts).toBeGreaterThan(12);
  }, 30_000);

  it("the server's token count is the client's estimate, call by call and in stats", async () => {
    const server = await wideServer();
    const estimates: number[] = [];
    const { wrapped, fetch, remaining } = recordingFetch((request) => {
      const cost = chatCost(request);
      estimates.push(cost.tokens ?? 0);
      return { requests: 1, tokens: cost.tokens ?? 0 };
    });
    const openai = new OpenAI({
      apiKey: 'sk-test',
      baseURL: `${server.url}/v1`,
      fetch,
      maxRetries: 0,
    });
    const sent = [17, 230, 4, 96, 1000, 58, 333, 1];
    await Promise.all(
      sent.map((maxTokens, i) =>
        openai.chat.completions.create({
          model: 'gpt-test',
          max_tokens: maxTokens,
          messages: [{ role: 'user', content: `Question ${i}` }],
        }),
      ),
    );
    expect([...estimates].sort((a, b) => a - b)).toEqual([...sent].sort((a, b) => a - b));
    const total = sent.reduce((a, b) => a + b, 0);
    // The last answer counts every call: the server charged exactly what the client estimated.
    expect(Math.min(...remaining)).toBe(TOKENS - total);
    // The host answers in OpenAI's dialect: its budgets are kept per model, in the model's scope.
    const model = wrapped
      .stats()
      .hosts[server.url]?.scopes.find((s) => s.name === 'model:gpt-test');
    const tokens = model?.policies.find((p) => p.name === 'tokens');
    expect(tokens?.remaining).toBe(TOKENS - total);
    expect(server.stats().rejected).toBe(0);
    await wrapped.close();
  });

  it('a call without max_tokens costs the default on both sides', async () => {
    const server = await wideServer();
    const { wrapped, fetch, remaining } = recordingFetch(chatCost);
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, fetch });
    await openai.chat.completions.create({ model: 'gpt-test', messages: [] });
    expect(remaining).toEqual([TOKENS - 1]);
    await wrapped.close();
  });
});

describe("per-call options through the SDK's fetchOptions (limitedInit)", () => {
  it('per request: its own cost wins over the function, its partition is used', async () => {
    const server = await wideServer();
    let costCalls = 0;
    const fetch = wrapFetch(undefined, {
      cost: (request) => {
        costCalls++;
        return chatCost(request);
      },
    });
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, fetch });
    await openai.chat.completions.create(
      { model: 'gpt-test', max_tokens: 40, messages: [] },
      { fetchOptions: limitedInit({ cost: { requests: 1, tokens: 40 }, partition: 'gpt-test' }) },
    );
    await openai.chat.completions.create({ model: 'gpt-test', max_tokens: 2, messages: [] });
    expect(costCalls).toBe(1);
    const hosts = fetch.stats().hosts;
    expect(Object.keys(hosts).sort()).toEqual([server.url, `${server.url}#gpt-test`]);
    expect(hosts[`${server.url}#gpt-test`]?.requests).toBe(1);
    await fetch.close();
  });

  it('per client: every call carries them', async () => {
    const server = await wideServer();
    const fetch = wrapFetch();
    const openai = new OpenAI({
      apiKey: 'sk-test',
      baseURL: `${server.url}/v1`,
      fetch,
      fetchOptions: limitedInit({ partition: 'team-a', retry: false }),
    });
    for (let i = 0; i < 3; i++) {
      await openai.chat.completions.create({ model: 'gpt-test', max_tokens: 5, messages: [] });
    }
    expect(Object.keys(fetch.stats().hosts)).toEqual([`${server.url}#team-a`]);
    expect(fetch.stats().hosts[`${server.url}#team-a`]?.requests).toBe(3);
    await fetch.close();
  });
});
