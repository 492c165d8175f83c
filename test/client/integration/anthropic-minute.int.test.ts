/**
 * Anthropic's limits at their real scale (issue 26): per minute, each a token bucket, resets in
 * whole seconds (RFC 3339), read by `wrapFetch()` with its defaults. Real HTTP on one fake clock,
 * started a quarter (and three quarters) of a second past a whole second, so every reset is
 * truncated up to a second early. Before 2026-12-07, two such answers made an output-token window
 * of 58.75 s (paced 2 % early: one refusal at .750), and the pace, restarted from a send after the
 * wait for the server's reset, took the refill of that wait for its own units come early and held
 * the last call past the refill the server then reported: a wait of 64 s, refused as longer than
 * `maxRetryAfterMs` (60 s).
 */
import { describe, expect, it } from 'vitest';
import { wrapFetch } from '../../../src/index.js';
import { ANTHROPIC, startAnthropic } from '../../peers/provider-shapes.js';
import { countingFetch, datedBy, FakeClock, runOnFakeTime } from './fake-time.js';

const MINUTE = { ...ANTHROPIC, windowMs: 60_000 };

describe("Anthropic's per-minute buckets with whole-second resets", () => {
  it.each([
    ['.250', 1_800_000_000_250],
    ['.750', 1_800_000_000_750],
  ])(
    '20 calls per model, 4 at a time, from %s: all answered, no refusal, haiku within 1.01x',
    async (_, at) => {
      const clock = new FakeClock(at);
      const server = await startAnthropic({ now: () => clock.now(), limits: MINUTE });
      const wire = countingFetch(async (input, init) => datedBy(clock, await fetch(input, init)));
      const limited = wrapFetch(wire.fetch, { clock });
      const start = clock.now();
      const finished = new Map<string, number>();
      const statuses: number[] = [];
      const work = Promise.all(
        [...MINUTE.models.keys()].map(async (model) => {
          let next = 0;
          await Promise.all(
            Array.from({ length: 4 }, async () => {
              while (next++ < 20) {
                const r = await limited(`${server.url}/v1/messages`, {
                  method: 'POST',
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify({
                    model,
                    max_tokens: 100,
                    messages: [{ role: 'user', content: 'x'.repeat(400) }],
                  }),
                });
                await r.text();
                statuses.push(r.status);
              }
            }),
          );
          finished.set(model, clock.now() - start);
        }),
      );
      try {
        await runOnFakeTime(clock, wire, work, { maxMs: 300_000 });
        await work;
        expect(statuses.filter((s) => s !== 200)).toEqual([]);
        expect(server.refusals()).toBe(0);
        // Haiku is bound by its output tokens, 1,000 a minute at 100 a call: 10 at once, 10 paced.
        expect(finished.get('claude-haiku-4-5')).toBeLessThanOrEqual(60_600);
        // Sonnet is bound by its requests (10 a minute), whose reset is when the bucket is full:
        // waited for, not paced (requests are not inferred as buckets: fill-window.ts).
        expect(finished.get('claude-sonnet-4-5')).toBeLessThanOrEqual(120_000);
      } finally {
        await limited.close();
        await server.close();
      }
    },
  );
});
