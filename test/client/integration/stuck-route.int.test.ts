/**
 * One route of a host that refuses for good beside routes it accepts, default options, over real
 * HTTP on fake time (client and mock server on one clock). Before, the stuck call's retry went
 * first in line at every turn of the pace: the `/ok` calls waiting behind it got no slot, the
 * pace read the refusals as a lockout (nothing accepted), the stuck call probed alone for ~72 s
 * and the refusing-host rule then ended the waiting `/ok` calls with `RateLimitError`, though the
 * host would have taken each of them at once (a naive retry loop completes them).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LimitedClient } from '../../../src/index.js';
import { countingFetch, FakeClock, runOnFakeTime } from './fake-time.js';
import { closeAll, start } from './server.js';

afterAll(closeAll);

/** A host with `/stuck` (a bare 429 on every request, no header) and `/ok` (200). */
async function stuckBesideOk(clock: FakeClock) {
  return start({
    clock,
    routes: [
      { path: '/stuck', headers: 'none', retryAfter: 'none', response: { status: 429 } },
      { path: '/ok', headers: 'none' },
    ],
  });
}

describe('a route that always refuses beside one that accepts, one host', () => {
  it('the accepted route completes while the stuck call retries', async () => {
    const clock = new FakeClock();
    const server = await stuckBesideOk(clock);
    const wire = countingFetch();
    const client = new LimitedClient(server.url, { clock, fetch: wire.fetch });
    const gaveUp: string[] = [];
    client.on('give-up', (e) => gaveUp.push(`${e.reason} ${new URL(e.url).pathname}`));
    const okAt: number[] = [];
    const okStatuses: unknown[] = [];
    const started = clock.now();
    const stuck = client.get('/stuck').then(async (r) => {
      await r.arrayBuffer();
      return r.status;
    });
    // Callers that come while the stuck call waits for its retry: a few at once, then a worker.
    const ok = async (delayMs: number) => {
      await clock.sleep(delayMs);
      try {
        const r = await client.get('/ok');
        await r.arrayBuffer();
        okStatuses.push(r.status);
        okAt.push(clock.now() - started);
      } catch (error) {
        okStatuses.push((error as Error).name);
      }
    };
    const worker = async () => {
      for (let i = 0; i < 10; i++) await ok(500);
    };
    const work = Promise.all([stuck, ok(20), ok(20), ok(20), ok(100), worker()]);
    let stuckAttempts = 1;
    client.on('retry', (e) => {
      if (new URL(e.url).pathname === '/stuck') stuckAttempts++;
    });
    const took = await runOnFakeTime(clock, wire, work, { stepMs: 5, maxMs: 600_000 });
    // Every call to the route the host accepts completes (a naive retry loop would)...
    expect(okStatuses).toEqual(Array(14).fill(200));
    // ...without waiting out the stuck call. The worker alone sleeps 5 s between its calls; the
    // first few wait for the host's pace, cut to its floor by the stuck call's first refusals
    // (nothing accepted yet: the client cannot tell a route from a host), then the stuck call's
    // own refusals no longer slow the host down (it took 16.3 s; the stuck call's probes alone,
    // before, took ~72 s and then failed every waiting call).
    expect(Math.max(...okAt)).toBeLessThan(20_000);
    // The stuck call ends with the server's answer, in bounded time, after a few attempts.
    expect(await stuck).toBe(429);
    expect(gaveUp).toEqual(['retries-exhausted /stuck']);
    expect(stuckAttempts).toBeLessThanOrEqual(10);
    expect(took).toBeLessThanOrEqual(30_000);
    await client.close();
  });
});
