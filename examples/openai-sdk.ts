/**
 * The OpenAI SDK, unchanged but for its `fetch`: a `wrapFetch` whose `cost` function reads each
 * request's JSON body, so that every chat completion is charged its `max_tokens` against the
 * server's token policy before it is sent. No per-call code: the calls are the SDK's own.
 *
 * The server is the in-repo mock server with an OpenAI-style route: 10 requests and 300 tokens
 * per one-second window, answered in OpenAI's header fields, charging each request the
 * `max_tokens` of its JSON body (the real API also counts the prompt: add an estimate of it, see
 * docs/costs.md). 12 calls of 50 to 100 tokens (900 in all) need three windows. The same calls
 * with the default cost (one request, no tokens) bounce off the token policy, for comparison.
 *
 *   npx tsx examples/openai-sdk.ts
 */
import { pathToFileURL } from 'node:url';
import { type CostContext, type CostVector, wrapFetch } from 'limited-client';
import { createMockServer } from 'limited-client/server';
import OpenAI from 'openai';

/**
 * A chat completion's cost, read from its body: one request and its `max_tokens` (1 when the body
 * has none, as the server charges).
 */
export function chatCost(request: CostContext): CostVector {
  const body = request.json() as { max_tokens?: unknown } | undefined;
  const tokens = typeof body?.max_tokens === 'number' ? body.max_tokens : 1;
  return { requests: 1, tokens };
}

/** What one run did. */
export interface SdkRun {
  calls: number;
  ok: number;
  /** Rate-limited answers (429) the client received, retried or not. */
  rejected: number;
  attempts: number;
  /** Tokens the cost function charged, summed over the calls (0 without it). */
  tokens: number;
  elapsedMs: number;
}

/** Each call's `max_tokens`: 50 to 100, 75 on average. */
export const maxTokensOf = (i: number) => 50 + 10 * (i % 6);

/**
 * Sends `calls` chat completions at once through the SDK. `costFromBody: false` leaves the cost
 * at its default (one request, no tokens), for comparison.
 */
export async function runSdk(
  options: { calls?: number; costFromBody?: boolean } = {},
): Promise<SdkRun> {
  const { calls = 12, costFromBody = true } = options;
  const server = await createMockServer({
    routes: [
      {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: 'openai',
        limits: [
          { algorithm: 'fixed-window', limit: 10, windowMs: 1000, name: 'requests' },
          {
            algorithm: 'fixed-window',
            limit: 300,
            windowMs: 1000,
            name: 'tokens',
            unit: 'tokens',
            cost: { json: 'max_tokens', default: 1 },
          },
        ],
        response: { body: completion },
      },
    ],
  });
  let tokens = 0;
  const fetch = wrapFetch(undefined, {
    retry: { retries: 10 },
    ...(costFromBody && {
      cost: (request: CostContext) => {
        const cost = chatCost(request);
        tokens += cost.tokens ?? 0;
        return cost;
      },
    }),
  });
  // The client retries (and paces) itself: the SDK's own retries would come on top of its.
  const openai = new OpenAI({
    apiKey: 'sk-test',
    baseURL: `${server.url}/v1`,
    fetch,
    maxRetries: 0,
  });
  const started = performance.now();
  const answers = await Promise.allSettled(
    Array.from({ length: calls }, (_, i) =>
      openai.chat.completions.create({
        model: 'gpt-test',
        max_tokens: maxTokensOf(i),
        messages: [{ role: 'user', content: `Question ${i}: what limits this call?` }],
      }),
    ),
  );
  const elapsedMs = performance.now() - started;
  const { attempts, rateLimited: rejected } = fetch.stats().totals;
  await fetch.close();
  await server.close();
  const ok = answers.filter((a) => a.status === 'fulfilled').length;
  return { calls, ok, rejected, attempts, tokens, elapsedMs };
}

/** What the route answers: a chat completion as the SDK expects one. */
const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-test',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const show = (run: SdkRun) =>
    `${run.ok}/${run.calls} calls ok, ${run.rejected} x 429, ${run.attempts} attempts, ` +
    `${(run.elapsedMs / 1000).toFixed(1)} s`;
  const fromBody = await runSdk();
  console.log(`cost read from the body (${fromBody.tokens} tokens): ${show(fromBody)}`);
  const plain = await runSdk({ costFromBody: false });
  console.log(`default cost (one request, no tokens): ${show(plain)}`);
}
