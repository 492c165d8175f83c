/**
 * Issue 26's per-model check: an OpenAI-style route of the mock server limits each model apart,
 * the model named in the JSON body, which answers cannot show. With a `partition` reading the
 * model, each model runs at its own limit with no 429, whatever the other does; without one, the
 * two share what the client learned and the calls bounce off each other's numbers. Real HTTP, on
 * one fake clock for the client and the server (`fake-time.ts`).
 */
import { describe, expect, it } from 'vitest';
import { LimitedClient } from '../../../src/index.js';
import { createMockServer } from '../../../src/server/index.js';
import { countingFetch, FakeClock, runOnFakeTime } from './fake-time.js';

/** Requests per model per window, and the window. */
const LIMIT = 5;
const WINDOW_MS = 1000;

async function run(byModel: boolean, calls: Record<string, number>) {
  const clock = new FakeClock();
  const wire = countingFetch();
  const server = await createMockServer({
    clock,
    routes: [
      {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: 'openai',
        limits: [
          {
            algorithm: 'fixed-window',
            limit: LIMIT,
            windowMs: WINDOW_MS,
            key: { json: 'model' },
            name: 'requests',
          },
        ],
      },
    ],
  });
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
  await client.close();
  await server.close();
  return { rejected: stats.rejected, admitted: stats.admitted, finished };
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

  it('without one, the models share what the client learned, and bounce off each other', async () => {
    const shared = await run(false, { 'gpt-4o': 20, 'gpt-4o-mini': 20 });
    expect(shared.admitted).toBe(40);
    console.log(
      'shared, fake ms:',
      Object.fromEntries(shared.finished),
      'refused:',
      shared.rejected,
    );
    // One learned budget for two real ones: held to one model's rate, or refused; either way
    // slower than each model at its own limit.
    expect(
      shared.rejected > 0 || Math.max(...shared.finished.values()) >= 4 * WINDOW_MS * 1.5,
    ).toBe(true);
  }, 60_000);
});
