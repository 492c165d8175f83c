/**
 * LimitedClient against real HAProxy with a stick-table rate limit that counts the requests it
 * refuses and answers a bare 429 (no rate-limit header, no Retry-After), next to ky and a naive
 * retry loop on their own HAProxy instances (issue 23 §3: LimitedClient completed 20 of 60 calls
 * with a 10 s period, 42-50 with a 4 s period, where ky completed 60). Counts and bounds, never
 * times: the time ratio is the benchmark's (`npm run bench -- --only wild`, docs/benchmarks.md).
 *
 * HAProxy comes from the Debian package (`.ci/run` installs it). On a machine where it cannot run,
 * this file says why and skips itself, except in CI (`CI` set), where it fails instead: there
 * HAProxy is installed by `.ci/run`, so its absence is a broken setup, not a reason to skip.
 */
import { describe, expect, it } from 'vitest';
import { compare, expectNeverWorseThanNaive } from './compare.js';
import { haproxyUnavailable, startHaproxy } from './haproxy.js';

const REQUESTS = 60;
const LIMIT = 20;
const unavailable = await haproxyUnavailable();
if (unavailable) {
  const line = '!'.repeat(100);
  console.warn(
    `\n${line}\n!! HAProxy stick-table tests ${process.env.CI ? 'FAIL (CI)' : 'SKIPPED'}: ${unavailable}\n` +
      `!! Install it with: apt-get install haproxy (Debian), then run npm test again.\n${line}\n`,
  );
}

describe.skipIf(unavailable !== undefined && !process.env.CI)(
  `HAProxy stick table, deny 429 past ${LIMIT} per period, refused requests counted`,
  () => {
    // The harness measures what it means to: a refused request counts in HAProxy's table too.
    it('counts the requests it refuses', { timeout: 20_000 }, async () => {
      const server = await startHaproxy({ periodMs: 10_000, limit: LIMIT });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < LIMIT + 5; i++) {
          const response = await fetch(`${server.url}/items/${i}`);
          await response.arrayBuffer();
          statuses.push(response.status);
          expect(response.headers.get('retry-after')).toBeNull();
        }
        expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT);
        expect(statuses.filter((s) => s === 429)).toHaveLength(5);
        expect(await server.trackedRate()).toBe(LIMIT + 5);
      } finally {
        await server.close();
      }
    });

    // Both periods at once, each contender on its own instance: ky's backoff makes this the
    // longest of the peer tests (ky needs about a minute for the 10 s period).
    it(`10 s and 4 s periods, ${REQUESTS} GETs at 10 in flight: completes every call ky completes, with a quarter of its 429s`, {
      timeout: 240_000,
    }, async () => {
      const [ten, four] = await Promise.all([
        compare(() => startHaproxy({ periodMs: 10_000, limit: LIMIT }), REQUESTS),
        compare(() => startHaproxy({ periodMs: 4000, limit: LIMIT }), REQUESTS),
      ]);
      expectNeverWorseThanNaive(ten, REQUESTS);
      expectNeverWorseThanNaive(four, REQUESTS);
      // Every call completes (ky completes them all).
      expect(ten.limited.result.ok).toBe(REQUESTS);
      expect(four.limited.result.ok).toBe(REQUESTS);
    });
  },
);
