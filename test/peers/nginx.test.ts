/**
 * LimitedClient against real nginx `limit_req` (10 r/s, burst 5, nodelay; no rate-limit headers,
 * no Retry-After), next to ky and a naive retry loop on their own nginx instances (issue 13, item
 * 5). Counts and bounds, never times.
 *
 * nginx comes from the Debian package (`.ci/run` installs it). On a machine where it cannot run,
 * this file says why and skips itself, except in CI (`CI` set), where it fails instead: there
 * nginx is installed by `.ci/run`, so its absence is a broken setup, not a reason to skip.
 */
import { describe, it } from 'vitest';
import { compare, expectNeverWorseThanNaive } from './compare.js';
import { nginxUnavailable, startNginx } from './nginx.js';

const REQUESTS = 60;
const unavailable = await nginxUnavailable();
if (unavailable) {
  const line = '!'.repeat(100);
  console.warn(
    `\n${line}\n!! nginx limit_req tests ${process.env.CI ? 'FAIL (CI)' : 'SKIPPED'}: ${unavailable}\n` +
      `!! Install it with: apt-get install nginx (Debian), then run npm test again.\n${line}\n`,
  );
}

describe.skipIf(unavailable !== undefined && !process.env.CI)(
  `nginx limit_req 10 r/s, burst 5 nodelay: ${REQUESTS} GETs at 10 in flight`,
  { timeout: 90_000 },
  () => {
    it('limit_req_status 429: completes every call ky completes, with a quarter of its 429s', async () => {
      const runs = await compare(() => startNginx({ status: 429 }), REQUESTS);
      expectNeverWorseThanNaive(runs, REQUESTS);
    });

    // Issue 13, item 2: a limiter's 503 is pushback, not an outage (it arrives while requests
    // still get through), so the client slows down instead of opening its breaker.
    it('default status 503, no Retry-After: completes every call ky completes, with a quarter of its 503s', async () => {
      const runs = await compare(() => startNginx({ status: 503 }), REQUESTS);
      expectNeverWorseThanNaive(runs, REQUESTS);
    });
  },
);
