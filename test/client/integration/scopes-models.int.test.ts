/**
 * Issue 26's per-model check: an OpenAI-style route of the mock server limits each model apart,
 * the model named in the JSON body, which answers cannot show. With default options the client
 * reads the model on a host that answers in OpenAI's or Anthropic's dialect (and on their own
 * origins from the first call), and each model runs in a scope of its own, at its own limit,
 * whatever the other does; a `partition` reading the model does the same. (Before, without a
 * partition, the two shared what the client learned and bounced off each other's numbers.) Real
 * HTTP, on one fake clock for the client and the server (`fake-time.ts`).
 */
import { describe, expect, it } from 'vitest';
import { LimitedClient, wrapFetch } from '../../../src/index.js';
import { createMockServer } from '../../../src/server/index.js';
import {
  ANTHROPIC,
  OPENAI,
  shapeScenarios,
  startAnthropic,
  startOpenAI,
} from '../../peers/provider-shapes.js';
import { countingFetch, FakeClock, runOnFakeTime } from './fake-time.js';

/** Requests per model per window, and the window. */
const LIMIT = 5;
const WINDOW_MS = 1000;

/** The mock server's OpenAI-style route, limited per model (examples/mock-server-openai.json). */
function perModel() {
  return {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: 'openai' as const,
    limits: [
      {
        algorithm: 'fixed-window' as const,
        limit: LIMIT,
        windowMs: WINDOW_MS,
        key: { json: 'model' },
        name: 'requests',
      },
    ],
  };
}

async function run(byModel: boolean, calls: Record<string, number>) {
  const clock = new FakeClock();
  const wire = countingFetch();
  const server = await createMockServer({ clock, routes: [perModel()] });
  const client = new LimitedClient(server.url, {
    clock,
    fetch: wire.fetch,
    ...(byModel && {
      partition: ({ json }) => (json() as { model?: string } | undefined)?.model,
    }),
  });
  const finished = new Map<string, number>();
  const start = clock.now();
  const work = Promise.all(
    Object.entries(calls).flatMap(([model, n]) =>
      Array.from({ length: n }, async () => {
        const r = await client.post('/v1/chat/completions', { model, messages: [] });
        await r.arrayBuffer();
        expect(r.status).toBe(200);
        finished.set(model, Math.max(finished.get(model) ?? 0, clock.now() - start));
      }),
    ),
  );
  await runOnFakeTime(clock, wire, work, { maxMs: 120_000 });
  await work;
  const stats = server.stats();
  const scopes = client.stats().hosts[server.url]?.scopes.map((s) => s.name) ?? [];
  await client.close();
  await server.close();
  return { rejected: stats.rejected, admitted: stats.admitted, finished, scopes };
}

describe('per-model limits, the model in the body', () => {
  it('with a partition by model: 0 x 429, and each model at its own limit', async () => {
    const both = await run(true, { 'gpt-4o': 20, 'gpt-4o-mini': 20 });
    expect(both.rejected).toBe(0);
    expect(both.admitted).toBe(40);
    const alone = await run(true, { 'gpt-4o': 20 });
    expect(alone.rejected).toBe(0);
    console.log(
      'per model, fake ms:',
      Object.fromEntries(both.finished),
      'alone:',
      alone.finished.get('gpt-4o'),
    );
    // 20 calls at 5 a window need 4 windows (the last starts at 3 s): each model as fast beside
    // the other as alone, within one window.
    for (const model of ['gpt-4o', 'gpt-4o-mini']) {
      expect(both.finished.get(model)).toBeLessThanOrEqual(
        (alone.finished.get('gpt-4o') ?? 0) + WINDOW_MS,
      );
      expect(both.finished.get(model)).toBeLessThan(4 * WINDOW_MS * 1.1);
    }
  }, 60_000);

  it('with default options, the model in the body is the scope: each model at its own limit', async () => {
    const both = await run(false, { 'gpt-4o': 20, 'gpt-4o-mini': 20 });
    const alone = await run(false, { 'gpt-4o': 20 });
    expect(both.admitted).toBe(40);
    console.log(
      'default options, fake ms:',
      Object.fromEntries(both.finished),
      'refused:',
      both.rejected,
      'alone:',
      alone.finished.get('gpt-4o'),
    );
    // The first call learns the dialect in the host's lane; at most a refusal or two after it.
    expect(both.rejected).toBeLessThanOrEqual(2);
    for (const model of ['gpt-4o', 'gpt-4o-mini']) {
      expect(both.finished.get(model)).toBeLessThanOrEqual(
        (alone.finished.get('gpt-4o') ?? 0) + WINDOW_MS,
      );
      expect(both.finished.get(model)).toBeLessThan(4 * WINDOW_MS * 1.1);
    }
    expect(both.scopes).toEqual(['model:gpt-4o', 'model:gpt-4o-mini']);
  }, 60_000);

  it('on api.openai.com, each model has its lane from the first call', async () => {
    const clock = new FakeClock();
    const wire = countingFetch();
    const server = await createMockServer({ clock, routes: [perModel()] });
    // api.openai.com, reached on the mock server: the URL is rewritten under the client.
    const toServer: typeof fetch = (input, init) =>
      wire.fetch(String(input).replace('https://api.openai.com', server.url), init);
    const fetchLimited = wrapFetch(toServer, { clock });
    const call = (model: string) =>
      fetchLimited('https://api.openai.com/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [] }),
      });
    const first = [call('gpt-4o'), call('gpt-4o-mini')];
    // Before any answer: one lane per model (another host would run both in its own lane).
    const origin = 'https://api.openai.com';
    expect(fetchLimited.stats().hosts[origin]?.scopes.map((s) => s.name)).toEqual([
      'model:gpt-4o',
      'model:gpt-4o-mini',
    ]);
    const work = Promise.all(first);
    await runOnFakeTime(clock, wire, work, { maxMs: 60_000 });
    expect((await work).map((r) => r.status)).toEqual([200, 200]);
    await fetchLimited.close();
    await server.close();
  }, 60_000);

  it("a body the client does not read (a stream) goes with the host's own rules", async () => {
    const clock = new FakeClock();
    const wire = countingFetch();
    const server = await createMockServer({ clock, routes: [perModel()] });
    const client = new LimitedClient(server.url, { clock, fetch: wire.fetch });
    const work = (async () => {
      // The first answer teaches the dialect; then a stream body names no model.
      await (await client.post('/v1/chat/completions', { model: 'gpt-4o', messages: [] })).text();
      const bytes = new TextEncoder().encode('{"model":"gpt-4o-mini","messages":[]}');
      const body = new ReadableStream({
        start(c) {
          c.enqueue(bytes);
          c.close();
        },
      });
      const r = await client.request('/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await r.text();
      return r.status;
    })();
    await runOnFakeTime(clock, wire, work, { maxMs: 60_000 });
    expect(await work).toBe(200);
    expect(client.stats().hosts[server.url]?.scopes.map((s) => s.name)).toEqual(['model:gpt-4o']);
    await client.close();
    await server.close();
  }, 60_000);
});

describe('the OpenAI and Anthropic simulations (test/peers/provider-shapes.ts), default options', () => {
  // Requests bind here (tokens plenty): the client is not told what a call costs in tokens, and a
  // policy counting tokens is not charged for a call that does not name them (docs/costs.md).
  const requestsOnly = {
    openai: {
      windowMs: OPENAI.windowMs,
      models: new Map([
        ['gpt-4o', { requests: 10, tokens: 1_000_000 }],
        ['gpt-4o-mini', { requests: 20, tokens: 1_000_000 }],
      ]),
    },
    anthropic: {
      windowMs: ANTHROPIC.windowMs,
      models: new Map([
        ['claude-sonnet-4-5', { requests: 10, inputTokens: 1e6, outputTokens: 1e6 }],
        ['claude-haiku-4-5', { requests: 20, inputTokens: 1e6, outputTokens: 1e6 }],
      ]),
    },
  };

  for (const [id, path] of [
    ['openai', '/v1/chat/completions'],
    ['anthropic', '/v1/messages'],
  ] as const) {
    it(`${id}: two models, each at its own limit, at most 2 refusals`, async () => {
      // The simulations date their resets by the clock; the Date field is the machine's.
      const clock = new FakeClock(Math.ceil(Date.now() / 1000) * 1000);
      const wire = countingFetch();
      const server =
        id === 'openai'
          ? await startOpenAI({ now: () => clock.now(), limits: requestsOnly.openai })
          : await startAnthropic({ now: () => clock.now(), limits: requestsOnly.anthropic });
      const fetchLimited = wrapFetch(wire.fetch, { clock });
      const models = [...requestsOnly[id].models.keys()];
      const start = clock.now();
      const finished = new Map<string, number>();
      const work = Promise.all(
        models.map(async (model) => {
          let next = 0;
          await Promise.all(
            Array.from({ length: 4 }, async () => {
              while (next++ < 20) {
                const r = await fetchLimited(`${server.url}${path}`, {
                  method: 'POST',
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify({ model, max_tokens: 100, messages: [] }),
                });
                await r.text();
                expect(r.status).toBe(200);
              }
            }),
          );
          finished.set(model, clock.now() - start);
        }),
      );
      await runOnFakeTime(clock, wire, work, { maxMs: 120_000 });
      await work;
      console.log(`${id}, fake ms:`, Object.fromEntries(finished), 'refusals:', server.refusals());
      expect(server.refusals()).toBeLessThanOrEqual(2);
      // 20 calls of a bucket of 10 (20) refilled over 2 s: 2 s (0 s) at least.
      expect(finished.get(models[0] as string)).toBeLessThanOrEqual(2000 * 1.2);
      expect(finished.get(models[1] as string)).toBeLessThanOrEqual(500);
      await fetchLimited.close();
      await server.close();
    }, 120_000);
  }
});

describe('token budgets: a model call that names no cost is charged its estimate (issue 26)', () => {
  // The shapes' own limits, where tokens bind (gpt-4o-mini, Claude's output tokens): charged
  // nothing, the first calls overran them (3 refusals each); waiting for OpenAI's reset ("full
  // again") took a continuous refill for a window (1.8 times the least time).
  for (const id of ['openai', 'anthropic'] as const) {
    it(`${id}: within 1.2 times the least time, at most 2 refusals`, async () => {
      const scenario = shapeScenarios().find((s) => s.id === id);
      if (scenario === undefined) throw new Error(`no shape ${id}`);
      const clock = new FakeClock(Math.ceil(Date.now() / 1000) * 1000);
      const wire = countingFetch();
      const server = await scenario.start({ now: () => clock.now() });
      const fetchLimited = wrapFetch(wire.fetch, { clock });
      const start = clock.now();
      const finished = new Map<string, number>();
      const work = Promise.all(
        scenario.workers.map(async (worker) => {
          let next = 0;
          await Promise.all(
            Array.from({ length: worker.concurrency }, async () => {
              while (next < worker.calls) {
                const call = worker.call(next++);
                const r = await fetchLimited(`${server.url}${call.path}`, {
                  method: call.method,
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify(call.body),
                });
                await r.text();
                expect(r.status).toBe(200);
              }
            }),
          );
          finished.set(worker.name, clock.now() - start);
        }),
      );
      await runOnFakeTime(clock, wire, work, { maxMs: 120_000, stepMs: 1 });
      await work;
      console.log(`${id} tokens, fake ms:`, Object.fromEntries(finished), server.refusals());
      expect(server.refusals()).toBeLessThanOrEqual(2);
      for (const worker of scenario.workers) {
        expect(finished.get(worker.name)).toBeLessThanOrEqual(worker.leastMs * 1.2);
      }
      await fetchLimited.close();
      await server.close();
    }, 120_000);
  }

  it('a cost of its own wins: charged no tokens, as before', async () => {
    const scenario = shapeScenarios().find((s) => s.id === 'openai');
    if (scenario === undefined) throw new Error('no openai shape');
    const clock = new FakeClock(Math.ceil(Date.now() / 1000) * 1000);
    const wire = countingFetch();
    const server = await scenario.start({ now: () => clock.now() });
    const fetchLimited = wrapFetch(wire.fetch, { clock });
    const body = JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 600, messages: [] });
    const send = () =>
      fetchLimited(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        cost: 1,
        retry: false,
      });
    const work = (async () => {
      // The first answer teaches the dialect; then four calls of 600 tokens, 2,000 a window:
      // charged none, all four go at once and the fourth is refused.
      await (await send()).text();
      const r = await Promise.all([send(), send(), send()]);
      return r.map((x) => x.status);
    })();
    await runOnFakeTime(clock, wire, work, { maxMs: 60_000, stepMs: 1 });
    expect((await work).filter((status) => status === 429)).toHaveLength(1);
    await fetchLimited.close();
    await server.close();
  }, 60_000);
});
