/**
 * Issue 14's end-to-end check for costs per unit: examples/openai-tokens.ts against the mock
 * server's OpenAI-style route (10 requests/s and 600 tokens per 10 s, the cost in tokens read from
 * the request, OpenAI's header fields). Every call succeeds with no 429, in at most 1.1x the least
 * time the tighter policy allows, counted on a fake clock that the server and the client share (the
 * HTTP is real; time moves only while nothing is on the wire, see `fake-time.ts`), so a loaded
 * machine cannot make it fail. What the wire leaves to chance, the order in which answers to
 * requests sent together come back, is forced both ways: in order, and last sent first. The same
 * calls with a single number as their cost (the old meaning) get 429s: what the closing note of
 * the issue compares.
 */
import { describe, expect, it } from 'vitest';
import { runTokens } from '../../../examples/openai-tokens.js';
import { flush } from '../helpers.js';
import { countingFetch, FakeClock, runOnFakeTime } from './fake-time.js';

/** 24 calls of 50 tokens under 600 tokens per sliding 10 s and 10 requests per second. */
const MINIMUM_MS = 11_000;

/**
 * `fetch`, with the answers to the requests in flight together held until the server has answered
 * every one, then handed back in send order or last sent first: over several connections their
 * order is the machine's, so a test that leaves it to chance depends on the load. `sentAt`: when
 * each request was sent, in milliseconds of `clock` from the start.
 */
function orderedAnswers(order: 'sent' | 'last-sent-first', clock: FakeClock) {
  const start = clock.now();
  const sentAt: number[] = [];
  let out = 0;
  let held: { id: number; release: () => void }[] = [];
  const releaseAll = async () => {
    const batch = held.sort((a, b) => (order === 'sent' ? a.id - b.id : b.id - a.id));
    held = [];
    for (const { release } of batch) {
      out--;
      release();
      // Each answer taken in (and what it lets go sent) before the next.
      await flush();
    }
  };
  const fetchInOrder = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const id = sentAt.push(clock.now() - start) - 1;
    out++;
    const response = await fetch(input, init);
    const body = await response.arrayBuffer();
    await new Promise<void>((release) => {
      held.push({ id, release });
      if (held.length === out) void releaseAll();
    });
    return new Response(body, { status: response.status, headers: response.headers });
  }) as typeof fetch;
  return { fetch: fetchInOrder, sentAt };
}

describe('costs per unit against an OpenAI-style route', () => {
  for (const order of ['sent', 'last-sent-first'] as const) {
    it(`honours both policies: every call ok, 0 x 429, within 1.1x of the minimum (answers in ${order} order)`, async () => {
      const clock = new FakeClock();
      const answers = orderedAnswers(order, clock);
      const wire = countingFetch(answers.fetch);
      const running = runTokens({ algorithm: 'sliding-log', cost: 'vector', clock, ...wire });
      const tookMs = await runOnFakeTime(clock, wire, running, { maxMs: 10 * MINIMUM_MS });
      const run = await running;
      expect(run).toMatchObject({ calls: 24, ok: 24, rejected: 0, attempts: 24 });
      // As many at once as the requests policy allows (10 per second), whatever the order.
      expect(answers.sentAt.filter((ms) => ms === 0)).toHaveLength(10);
      expect(run.elapsedMs).toBeLessThanOrEqual(tookMs);
      expect(run.elapsedMs).toBeGreaterThanOrEqual(MINIMUM_MS);
      expect(run.elapsedMs).toBeLessThanOrEqual(MINIMUM_MS * 1.1);
    }, 30_000);
  }

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
