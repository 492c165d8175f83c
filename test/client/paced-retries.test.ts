/**
 * Retries that wait for the host's pace (after a bare 429) are bounded by time, not by `retries`
 * (`src/client/retry/paced-retries.ts`): a call its host refuses for good, alone on it, ends
 * `maxRetryAfterMs` after its first refusal with its last response. The refusing-host rule no
 * longer ends it (one call's refusals are that call's), so this bound is what ends it.
 */
import { describe, expect, it } from 'vitest';
import { LONGEST_PROBE_GAP_MS } from '../../src/client/rules/pace-curve.js';
import { LimitedClient } from '../../src/index.js';
import { FakeClock, respond, scriptedFetch } from './helpers.js';

async function refusedForGood(options: { maxRetryAfterMs?: number; retries?: number }) {
  const clock = new FakeClock();
  const fetch = scriptedFetch(clock, async () => {
    await clock.sleep(2);
    return respond(429, {}, 'Too Many Requests');
  });
  const { retries, ...rest } = options;
  const client = new LimitedClient('https://api.example.com', {
    fetch,
    clock,
    ...rest,
    ...(retries === undefined ? {} : { retry: { retries } }),
  });
  const gaveUp: { reason: string; attempts: number }[] = [];
  client.on('give-up', (e) => gaveUp.push({ reason: e.reason, attempts: e.attempts }));
  const call = client.get('/stuck');
  const took = await clock.until(call, 600_000, 50);
  const response = await call;
  await client.close();
  return { status: response.status, took, gaveUp, sent: fetch.calls.length };
}

describe('paced retries after bare 429s', () => {
  it('go on past `retries`, and end maxRetryAfterMs after the first (hold-too-long)', async () => {
    const run = await refusedForGood({ maxRetryAfterMs: 20_000 });
    expect(run.status).toBe(429);
    expect(run.gaveUp).toEqual([{ reason: 'hold-too-long', attempts: run.sent }]);
    // More attempts than the default three retries allow, spaced by the lockout's probes.
    expect(run.sent).toBeGreaterThan(4);
    expect(run.took).toBeGreaterThanOrEqual(20_000);
    expect(run.took).toBeLessThanOrEqual(20_000 + LONGEST_PROBE_GAP_MS);
  });

  it('with the default maxRetryAfterMs (60 s): ended within it and one probe gap', async () => {
    const run = await refusedForGood({});
    expect(run.gaveUp.map((g) => g.reason)).toEqual(['hold-too-long']);
    expect(run.took).toBeGreaterThanOrEqual(60_000);
    expect(run.took).toBeLessThanOrEqual(60_000 + LONGEST_PROBE_GAP_MS);
  });

  it('`retries: 0` still means no retry at all', async () => {
    const run = await refusedForGood({ retries: 0 });
    expect(run.status).toBe(429);
    expect(run.sent).toBe(1);
  });
});
