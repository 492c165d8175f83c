/**
 * Issue 11, item 9: a host that answers 429 to everything, forever. Calls waiting in line for it
 * must learn that it refuses within the time the caller allows a server to hold it
 * (`maxRetryAfterMs`), not each wait for every retry of those before it (100 calls took about
 * 400 s before). Since issue 23 §3 the host is taken as refusing after `maxRetryAfterMs` of
 * refusals (it was 10 s, which failed every queued call against a limiter that counts its refusals
 * and locks a client out for longer): the bound here follows it. Fake time: the bound is on the
 * clock the client runs on.
 */
import { describe, expect, it } from 'vitest';
import { isRateLimitError, LimitedClient } from '../../src/index.js';
import { FakeClock, respond, scriptedFetch } from '../client/helpers.js';

describe.each([
  ['with Retry-After: 1', { 'retry-after': '1' }],
  ['without timing', {}],
  ['with Retry-After: 0', { 'retry-after': '0' }],
])('a host that answers 429 forever, %s', (_name, headers: Record<string, string>) => {
  it.each([
    [10_000, 20_000],
    [60_000, 70_000],
  ])(
    'maxRetryAfterMs %i: ends 100 waiting calls within %i ms, with the 429 or RateLimitError',
    async (maxRetryAfterMs, bound) => {
      const clock = new FakeClock();
      const fetch = scriptedFetch(clock, () => respond(429, headers));
      const client = new LimitedClient('https://api.example.com', {
        fetch,
        clock,
        maxRetryAfterMs,
      });
      const outcomes: (number | string)[] = [];
      const calls = Array.from({ length: 100 }, (_, i) =>
        client.get(`/x/${i}`).then(
          (r) => outcomes.push(r.status),
          (e: unknown) => outcomes.push(isRateLimitError(e) ? 'RateLimitError' : String(e)),
        ),
      );
      const took = await clock.until(Promise.all(calls), 600_000, 50);
      expect(outcomes).toHaveLength(100);
      expect(outcomes.every((o) => o === 429 || o === 'RateLimitError')).toBe(true);
      // Refusing is decided after maxRetryAfterMs and 5 refusals in a row; then everyone waiting
      // is told.
      expect(took).toBeLessThanOrEqual(bound);
      // The host is probed, not hammered: about one attempt a second at most (what Retry-After:
      // 1 asks for), fewer than the calls.
      expect(fetch.calls.length).toBeLessThanOrEqual(10 + took / 1000);
      expect(fetch.calls.length).toBeLessThan(100);
      // New calls are told at once while a probe is out, or go as the probe.
      const late = client.get('/late').catch((e: unknown) => e);
      await clock.until(late, 60_000, 50);
      const answer = await late;
      expect(answer instanceof Response ? answer.status : isRateLimitError(answer)).toBeTruthy();
      await client.close();
    },
  );
});
