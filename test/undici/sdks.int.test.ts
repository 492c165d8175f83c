/**
 * The SDKs people call APIs with, unchanged, pointed at the mock server: the `openai` SDK at an
 * OpenAI-style route (`POST /v1/chat/completions`) and `@octokit/core` at a GitHub-style one
 * (`GET /repos/{owner}/{repo}`), both declaring a limit in `X-RateLimit-*` headers. Each SDK runs
 * once through the interceptor (a composed dispatcher in its fetch options, or Node's global fetch
 * with `setGlobalDispatcher`) and once with `wrapFetch` as its fetch; with their own retries off,
 * every call must succeed with 0 x 429. The same calls with plain fetch get 429s. Through the
 * interceptor, a `cost` function reads `max_tokens` from the body the SDK sends (undici's fetch
 * hands it over as a stream of known length, which the interceptor reads first), and the server
 * charges what it estimated.
 */
import { Octokit } from '@octokit/core';
import OpenAI from 'openai';
import { Agent, type Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { wrapFetch } from '../../src/index.js';
import type { MockServer } from '../../src/server/index.js';
import { limited } from '../../src/undici/index.js';
import { closeMockServers, start } from './servers.js';
import { forLegacyHandlers } from './undici-major.js';

const CALLS = 20;
const limit = {
  algorithm: 'token-bucket' as const,
  capacity: 4,
  refillPerSecond: 20,
  key: 'global' as const,
  name: 'api',
};

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-test',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
};

function openAiServer(): Promise<MockServer> {
  return start({
    routes: [
      {
        method: 'POST',
        path: '/v1/chat/completions',
        limits: [limit],
        headers: 'x-ratelimit',
        response: { body: completion },
      },
    ],
  });
}

function gitHubServer(): Promise<MockServer> {
  return start({
    routes: [
      {
        method: 'GET',
        path: '/repos/:owner/:repo',
        limits: [limit],
        headers: 'x-ratelimit',
        response: { body: { id: 1, full_name: 'nodejs/undici' } },
      },
    ],
  });
}

const agents: Dispatcher[] = [];
afterAll(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await closeMockServers();
});

function composed() {
  const interceptor = limited();
  const agent = new Agent();
  agents.push(agent);
  return { interceptor, dispatcher: agent.compose(interceptor) };
}

/** {@link CALLS} chat completions at once: the answers' contents. */
function chat(openai: OpenAI): Promise<string>[] {
  return Array.from({ length: CALLS }, async (_, i) => {
    const c = await openai.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: `Say hello ${i}` }],
    });
    return c.choices[0]?.message.content ?? '';
  });
}

/** {@link CALLS} repository lookups at once: the repositories' full names. */
function repos(octokit: Octokit): Promise<string>[] {
  return Array.from({ length: CALLS }, async () => {
    const r = await octokit.request('GET /repos/{owner}/{repo}', {
      owner: 'nodejs',
      repo: 'undici',
    });
    return (r.data as { full_name: string }).full_name;
  });
}

describe('the openai SDK', () => {
  it('through the interceptor (a composed dispatcher in fetchOptions): 0 x 429', async () => {
    const server = await openAiServer();
    const { interceptor, dispatcher } = composed();
    const openai = new OpenAI({
      apiKey: 'sk-test',
      baseURL: `${server.url}/v1`,
      maxRetries: 0,
      // The SDK calls Node's built-in fetch, whose handlers are of undici's legacy API: an undici
      // 8 dispatcher takes them through Dispatcher1Wrapper (undici 7's compose() converts them).
      fetchOptions: { dispatcher: forLegacyHandlers(dispatcher) },
    });
    expect(await Promise.all(chat(openai))).toEqual(Array(CALLS).fill('Hello.'));
    expect(server.stats().rejected).toBe(0);
    expect(interceptor.stats().hosts[server.url]).toMatchObject({
      requests: CALLS,
      mode: 'declared',
    });
  });

  it('with wrapFetch as its fetch: 0 x 429', async () => {
    const server = await openAiServer();
    const fetch = wrapFetch();
    const openai = new OpenAI({
      apiKey: 'sk-test',
      baseURL: `${server.url}/v1`,
      maxRetries: 0,
      fetch,
    });
    expect(await Promise.all(chat(openai))).toEqual(Array(CALLS).fill('Hello.'));
    expect(server.stats().rejected).toBe(0);
    expect(fetch.stats().totals.requests).toBe(CALLS);
    await fetch.close();
  });

  it('through the interceptor, a cost function reads max_tokens from the body the SDK sends', async () => {
    // Tokens charged from the JSON body on both sides, in a window that does not end meanwhile.
    const server = await start({
      routes: [
        {
          method: 'POST',
          path: '/v1/chat/completions',
          headers: 'openai',
          limits: [
            {
              algorithm: 'fixed-window',
              limit: 100_000,
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
    const estimates: number[] = [];
    const interceptor = limited({
      cost: (request) => {
        const body = request.json() as { max_tokens?: number } | undefined;
        estimates.push(body?.max_tokens ?? -1);
        return { requests: 1, tokens: body?.max_tokens ?? 1 };
      },
    });
    const agent = new Agent();
    agents.push(agent);
    const openai = new OpenAI({
      apiKey: 'sk-test',
      baseURL: `${server.url}/v1`,
      maxRetries: 0,
      // Node's built-in fetch hands over legacy handlers (see the first test above).
      fetchOptions: { dispatcher: forLegacyHandlers(agent.compose(interceptor)) },
    });
    const sent = [12, 300, 45];
    for (const maxTokens of sent) {
      await openai.chat.completions.create({
        model: 'gpt-test',
        max_tokens: maxTokens,
        messages: [],
      });
    }
    expect(estimates).toEqual(sent);
    // The host answers in OpenAI's dialect: its budgets are kept per model, in the model's scope.
    const model = interceptor
      .stats()
      .hosts[server.url]?.scopes.find((s) => s.name === 'model:gpt-test');
    const tokens = model?.policies.find((p) => p.name === 'tokens');
    // What the server reported left after the last call: the client's estimates, to the token.
    expect(tokens?.remaining).toBe(100_000 - 357);
  });

  it('with plain fetch, the same calls get 429s', async () => {
    const server = await openAiServer();
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, maxRetries: 0 });
    const outcomes = await Promise.allSettled(chat(openai));
    expect(outcomes.some((o) => o.status === 'rejected')).toBe(true);
    expect(server.stats().rejected).toBeGreaterThan(0);
  });
});

describe('@octokit/core', () => {
  it("through the interceptor installed as Node's global dispatcher: 0 x 429", async () => {
    const server = await gitHubServer();
    const { interceptor, dispatcher } = composed();
    const previous = getGlobalDispatcher();
    setGlobalDispatcher(dispatcher);
    try {
      const octokit = new Octokit({ baseUrl: server.url });
      expect(await Promise.all(repos(octokit))).toEqual(Array(CALLS).fill('nodejs/undici'));
    } finally {
      setGlobalDispatcher(previous);
    }
    expect(server.stats().rejected).toBe(0);
    expect(interceptor.stats().hosts[server.url]).toMatchObject({
      requests: CALLS,
      mode: 'declared',
    });
  });

  it('with wrapFetch as its fetch: 0 x 429', async () => {
    const server = await gitHubServer();
    const fetch = wrapFetch();
    const octokit = new Octokit({ baseUrl: server.url, request: { fetch } });
    expect(await Promise.all(repos(octokit))).toEqual(Array(CALLS).fill('nodejs/undici'));
    expect(server.stats().rejected).toBe(0);
    expect(fetch.stats().totals.requests).toBe(CALLS);
    await fetch.close();
  });

  it('with plain fetch, the same calls get 429s', async () => {
    const server = await gitHubServer();
    const octokit = new Octokit({ baseUrl: server.url });
    const outcomes = await Promise.allSettled(repos(octokit));
    expect(outcomes.some((o) => o.status === 'rejected')).toBe(true);
    expect(server.stats().rejected).toBeGreaterThan(0);
  });
});
