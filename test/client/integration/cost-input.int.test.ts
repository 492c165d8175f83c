/**
 * What the `cost` and `partition` functions see, over loopback against the mock server: the call's
 * headers and its JSON body, the same view for both, the body parsed once per call however many
 * times and by however many functions it is read, retries included; the server charges from the
 * same body what the client estimated from it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type CostContext, LimitedClient, wrapFetch } from '../../../src/index.js';
import type { RouteConfig } from '../../../src/server/index.js';
import { closeAll, start } from './server.js';

afterAll(closeAll);

/** An OpenAI-style route: tokens charged from the JSON body's `max_tokens`, OpenAI's fields. */
function chatRoute(extra: Partial<RouteConfig> = {}): RouteConfig {
  return {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: 'openai',
    limits: [
      { algorithm: 'fixed-window', limit: 1000, windowMs: 60_000, name: 'requests' },
      {
        algorithm: 'fixed-window',
        limit: 100_000,
        windowMs: 60_000,
        name: 'tokens',
        unit: 'tokens',
        cost: { json: 'max_tokens', default: 1 },
      },
    ],
    ...extra,
  };
}

/** `max_tokens` of a view's JSON body, or `undefined`. */
function maxTokens(request: CostContext): number | undefined {
  const body = request.json() as { max_tokens?: unknown } | undefined;
  return typeof body?.max_tokens === 'number' ? body.max_tokens : undefined;
}

describe('the cost and partition functions see headers and body', () => {
  it('a cost read from the JSON body is what the server charges', async () => {
    const server = await start({ routes: [chatRoute()] });
    const seen: { model: string | null; tokens: number | undefined }[] = [];
    const client = new LimitedClient(server.url, {
      headers: { 'x-model': 'gpt-test' },
      cost: (request) => {
        const tokens = maxTokens(request);
        seen.push({ model: request.headers.get('x-model'), tokens });
        return { requests: 1, tokens: tokens ?? 1 };
      },
    });
    const remaining: number[] = [];
    for (const tokens of [10, 25, 40]) {
      const res = await client.post('/v1/chat/completions', { model: 'm', max_tokens: tokens });
      remaining.push(Number(res.headers.get('x-ratelimit-remaining-tokens')));
      await res.arrayBuffer();
    }
    expect(seen).toEqual([
      { model: 'gpt-test', tokens: 10 },
      { model: 'gpt-test', tokens: 25 },
      { model: 'gpt-test', tokens: 40 },
    ]);
    expect(remaining).toEqual([100_000 - 10, 100_000 - 35, 100_000 - 75]);
    // The host answers in OpenAI's dialect: its budgets are kept per model, in the model's scope.
    const host = client.stats().hosts[server.url];
    const model = host?.scopes.find((s) => s.name === 'model:m');
    expect(model?.policies.find((p) => p.name === 'tokens')?.remaining).toBe(100_000 - 75);
    await client.close();
  });

  it('partition and cost share one view: the body is parsed once per call, retries included', async () => {
    // The first request gets a plain 503: the call, a PUT, is retried after a short backoff.
    const server = await start({
      routes: [chatRoute({ method: 'PUT', faults: { unavailable: { times: 1 } } })],
    });
    const views = new Set<CostContext>();
    const parsed = new Set<unknown>();
    let partitionCalls = 0;
    let costCalls = 0;
    const fetch = wrapFetch(undefined, {
      partition: (request) => {
        partitionCalls++;
        views.add(request);
        parsed.add(request.json());
        parsed.add(request.json());
        return (request.json() as { model: string }).model;
      },
      cost: (request) => {
        costCalls++;
        views.add(request);
        parsed.add(request.json());
        return { requests: 1, tokens: maxTokens(request) ?? 1 };
      },
    });
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', max_tokens: 7 }),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(fetch.stats().totals).toMatchObject({ requests: 1, attempts: 2, retries: 1 });
    expect({ partitionCalls, costCalls, views: views.size, parsed: parsed.size }).toEqual({
      partitionCalls: 1,
      costCalls: 1,
      views: 1,
      parsed: 1,
    });
    expect(fetch.stats().hosts[`${server.url}#gpt-test`]).toBeDefined();
    await fetch.close();
  });

  it("a call's own cost wins: the function is not called, the body not read", async () => {
    const server = await start({ routes: [chatRoute()] });
    let called = 0;
    const fetch = wrapFetch(undefined, {
      cost: () => {
        called++;
        return 1;
      },
    });
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ max_tokens: 3 }),
      cost: { requests: 1, tokens: 3 },
    });
    await res.arrayBuffer();
    expect(called).toBe(0);
    expect(res.headers.get('x-ratelimit-remaining-tokens')).toBe(String(100_000 - 3));
    await fetch.close();
  });
});
