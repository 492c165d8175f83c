/**
 * An LLM API limits requests per second and tokens per window at once (OpenAI, Anthropic, Azure
 * OpenAI, Gemini). Each call says what it costs in both units, `{ requests: 1, tokens }`, from a
 * token estimate of its prompt; the client charges each of the server's policies its own unit and
 * waits for room in both, so that no call bounces off a 429.
 *
 * The server is the in-repo mock server with an OpenAI-style route: 10 requests per second and 600
 * tokens per 10 s, answered in OpenAI's header fields. It charges a request the tokens named in its
 * `x-token-estimate` header (standing in for the real API's own tokenizer), else its `max_tokens`.
 *
 *   npx tsx examples/openai-tokens.ts
 */
import { pathToFileURL } from 'node:url';
import { type Clock, LimitedClient } from 'limited-client';
import { createMockServer, type LimitConfig } from 'limited-client/server';

/** What one run did. */
export interface TokensRun {
  calls: number;
  ok: number;
  /** Rate-limited answers (429) the client received, retried or not. */
  rejected: number;
  attempts: number;
  elapsedMs: number;
}

/** A rough token estimate, as callers make one before sending: about 4 characters a token. */
export function estimateTokens(prompt: string, maxTokens: number): number {
  return Math.ceil(prompt.length / 4) + maxTokens;
}

/**
 * Sends `calls` chat completions at once, each of about `tokensPerCall` tokens, and counts what
 * happened. `cost: 'vector'` names both units (the point of this example); `'scalar'` gives the
 * old single number, for comparison.
 */
export async function runTokens(
  options: {
    calls?: number;
    tokensPerCall?: number;
    algorithm?: 'sliding-log' | 'fixed-window';
    cost?: 'vector' | 'scalar';
    /** The time of the server and the client, and `elapsedMs` (a test passes a fake one). */
    clock?: Clock;
    /** The client's fetch (a test passes one that counts what is on the wire). */
    fetch?: typeof fetch;
  } = {},
): Promise<TokensRun> {
  const { calls = 24, tokensPerCall = 50, algorithm = 'sliding-log', cost = 'vector' } = options;
  const clock = options.clock ?? { now: () => performance.now() };
  const limits: LimitConfig[] = [
    { algorithm, limit: 10, windowMs: 1000, name: 'requests' },
    {
      algorithm,
      limit: 600,
      windowMs: 10_000,
      name: 'tokens',
      unit: 'tokens',
      cost: { header: 'x-token-estimate', json: 'max_tokens', default: 1 },
    },
  ];
  const server = await createMockServer({
    routes: [{ method: 'POST', path: '/v1/chat/completions', headers: 'openai', limits }],
    ...(options.clock && { clock: options.clock }),
  });
  const client = new LimitedClient(server.url, {
    retry: { retries: 10 },
    ...(options.clock && { clock: options.clock }),
    ...(options.fetch && { fetch: options.fetch }),
  });
  const started = clock.now();
  const statuses = await Promise.all(
    Array.from({ length: calls }, async (_, i) => {
      const prompt = `Question ${i}: what limits this call?`.padEnd(80, '.');
      const maxTokens = tokensPerCall - Math.ceil(prompt.length / 4);
      const tokens = estimateTokens(prompt, maxTokens);
      const res = await client.post(
        '/v1/chat/completions',
        { model: 'm', max_tokens: maxTokens, messages: [{ role: 'user', content: prompt }] },
        {
          headers: { 'x-token-estimate': String(tokens) },
          cost: cost === 'vector' ? { requests: 1, tokens } : 1,
        },
      );
      await res.arrayBuffer();
      return res.status;
    }),
  );
  const elapsedMs = clock.now() - started;
  const { attempts, rateLimited: rejected } = client.stats().totals;
  await client.close();
  await server.close();
  return { calls, ok: statuses.filter((s) => s === 200).length, rejected, attempts, elapsedMs };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // 24 calls of 50 tokens: the token policy is the tighter one (600 per 10 s, so 12 calls per
  // window), and the least time they can take is 11 s (10 at 0 s, 2 at 1 s, 10 at 10 s, 2 at 11 s).
  const run = await runTokens();
  console.log(
    `${run.ok}/${run.calls} calls ok, ${run.rejected} x 429, ${run.attempts} attempts, ` +
      `${(run.elapsedMs / 1000).toFixed(1)} s (the limits allow no less than 11 s)`,
  );
}
