/**
 * LimitedClient against real Flask-Limiter (10 per 2 seconds, its default fixed window; headers
 * on: `X-RateLimit-*` with a reset announced up to a second late, `Retry-After` truncated), next
 * to ky and a naive retry loop on their own instances (issue 23, section 3). Counts and bounds,
 * never times: the time is measured in the wild bench (docs/benchmarks.md).
 *
 * Flask-Limiter comes from the Debian package `python3-flask-limiter`. On a machine where it cannot
 * run, this file says why and skips itself, except in CI (`CI` set), where it fails instead.
 */
import { describe, it } from 'vitest';
import { compare, expectNeverWorseThanNaive } from './compare.js';
import { flaskLimiterUnavailable, startFlaskLimiter } from './flask-limiter.js';

const REQUESTS = 40;
const unavailable = await flaskLimiterUnavailable();
if (unavailable) {
  const line = '!'.repeat(100);
  console.warn(
    `\n${line}\n!! Flask-Limiter tests ${process.env.CI ? 'FAIL (CI)' : 'SKIPPED'}: ${unavailable}\n` +
      `!! Install it with: apt-get install python3-flask-limiter (Debian), then run npm test again.\n${line}\n`,
  );
}

describe.skipIf(unavailable !== undefined && !process.env.CI)(
  `Flask-Limiter 10 per 2 seconds: ${REQUESTS} GETs at 10 in flight`,
  { timeout: 90_000 },
  () => {
    it('completes every call ky completes, with a quarter of its 429s', async () => {
      const runs = await compare(() => startFlaskLimiter(), REQUESTS);
      expectNeverWorseThanNaive(runs, REQUESTS);
    });
  },
);
