/**
 * Issue 14's end-to-end check for costs per unit: examples/openai-tokens.ts against the mock
 * server's OpenAI-style route (10 requests/s and 600 tokens per 10 s, the cost in tokens read from
 * the request, OpenAI's header fields). Every call succeeds with no 429, in at most 1.1x the least
 * time the tighter policy allows, counted on a fake clock that the server and the client share (the
 * HTTP is real; time moves only while nothing is on the wire, see `fake-time.ts`), so a loaded
 * machine cannot make it fail. The same calls with a single number as their cost (the old
 * meaning) get 429s: what the closing note of the issue compares.
 */
import { describe, expect, it } from 'vitest';
import { runTokens } from '../../../examples/openai-tokens.js';
import { countingFetch, FakeClock, runOnFakeTime } from './fake-time.js';

/** 24 calls of 50 tokens under 600 tokens per sliding 10 s and 10 requests per second. */
const MINIMUM_MS = 11_000;

describe('costs per unit against an OpenAI-style route', () => {
  it('honours both policies: every call ok, 0 x 429, within 1.1x of the minimum', async () => {
    const clock = new FakeClock();
    const wire = countingFetch();
    const running = runTokens({ algorithm: 'sliding-log', cost: 'vector', clock, ...wire });
    const tookMs = await runOnFakeTime(clock, wire, running, { maxMs: 10 * MINIMUM_MS });
    const run = await running;
    expect(run).toMatchObject({ calls: 24, ok: 24, rejected: 0, attempts: 24 });
    expect(run.elapsedMs).toBeLessThanOrEqual(tookMs);
    expect(run.elapsedMs).toBeGreaterThanOrEqual(MINIMUM_MS);
    expect(run.elapsedMs).toBeLessThanOrEqual(MINIMUM_MS * 1.1);
  }, 30_000);

  it('with fixed windows too: 0 x 429', async () => {
    const run = await runTokens({ algorithm: 'fixed-window', cost: 'vector' });
    expect(run).toMatchObject({ calls: 24, ok: 24, rejected: 0, attempts: 24 });
  }, 30_000);

  it('a single number as the cost charges no tokens: the calls bounce off the token policy', async () => {
    const run = await runTokens({ algorithm: 'fixed-window', cost: 'scalar' });
    expect(run.ok).toBe(24);
    expect(run.rejected).toBeGreaterThan(0);
    expect(run.attempts).toBeGreaterThan(24);
  }, 30_000);
});
