/**
 * Budgets per endpoint whose fields name nothing (issue 26, X's `x-rate-limit-*`): with default
 * options the client splits a host into a scope per route once its routes report different limits,
 * and keeps one lane for a host whose routes all report one budget (split, that budget would be
 * overshot once per lane). Real HTTP, on one fake clock for the client and the server.
 */
import { describe, expect, it } from 'vitest';
import { wrapFetch } from '../../../src/index.js';
import { createMockServer } from '../../../src/server/index.js';
import { startX, X_API } from '../../peers/provider-shapes.js';
import { countingFetch, FakeClock, runOnFakeTime } from './fake-time.js';

/** `calls` GETs of each path, `concurrency` at a time per path; each path's finish, fake ms. */
async function drive(
  base: string,
  paths: string[],
  calls: number,
  concurrency: number,
  clock: FakeClock,
) {
  const wire = countingFetch();
  const fetchLimited = wrapFetch(wire.fetch, { clock });
  const start = clock.now();
  const finished = new Map<string, number>();
  const statuses: number[] = [];
  const work = Promise.all(
    paths.map(async (path, p) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < calls) {
            const i = next++;
            const r = await fetchLimited(`${base}${path.replace('{i}', String(i + 1))}`);
            await r.text();
            statuses.push(r.status);
          }
        }),
      );
      finished.set(String(p), clock.now() - start);
    }),
  );
  await runOnFakeTime(clock, wire, work, { maxMs: 120_000 });
  await work;
  const origin = new URL(base).origin;
  const scopes = fetchLimited.stats().hosts[origin]?.scopes.map((s) => s.name) ?? [];
  await fetchLimited.close();
  return { finished, statuses, scopes };
}

describe('one budget reported on several routes', () => {
  for (const limit of [
    { algorithm: 'fixed-window' as const, limit: 10, windowMs: 1000 },
    { algorithm: 'token-bucket' as const, capacity: 10, refillPerSecond: 10 },
  ]) {
    it(`${limit.algorithm}: one lane, 0 x 429`, async () => {
      const clock = new FakeClock();
      const server = await createMockServer({
        clock,
        routes: [{ path: '*', headers: 'x-ratelimit', limits: [{ ...limit, key: 'global' }] }],
      });
      const paths = ['/a/{i}', '/b', '/c/{i}/d', '/e'];
      const run = await drive(server.url, paths, 15, 2, clock);
      const stats = server.stats();
      await server.close();
      expect(run.statuses).toEqual(Array(60).fill(200));
      expect(stats.rejected).toBe(0);
      expect(run.scopes).toEqual([]);
    }, 60_000);
  }
});

describe('a budget per endpoint, unnamed (the X simulation)', () => {
  it('each endpoint runs at its own limit: split per route, no refusal', async () => {
    // The simulation dates its resets by the clock; the Date field is the machine's.
    const clock = new FakeClock(Math.ceil(Date.now() / 1000) * 1000);
    const server = await startX({ now: () => clock.now() });
    const paths = ['/2/tweets/search/recent?query=q{i}', '/2/users/{i}/tweets', '/2/tweets/{i}'];
    const run = await drive(server.url, paths, 10, 1, clock);
    await server.close();
    console.log('X, fake ms per endpoint:', Object.fromEntries(run.finished), run.scopes);
    expect(run.statuses).toEqual(Array(30).fill(200));
    expect(server.refusals()).toBe(0);
    // Search: 10 calls at 5 a window need a second window. The others fit their first window:
    // held behind the search budget they would wait for its reset too.
    expect(run.finished.get('0')).toBeLessThanOrEqual(X_API.windowMs * 1.1);
    expect(run.finished.get('1')).toBeLessThan(X_API.windowMs / 3);
    expect(run.finished.get('2')).toBeLessThan(X_API.windowMs / 3);
    expect(run.scopes).toEqual(
      expect.arrayContaining([
        'route:GET /:id/tweets/search/recent',
        'route:GET /:id/users/:id/tweets',
        'route:GET /:id/tweets/:id',
      ]),
    );
  }, 60_000);
});
