/**
 * Issue 26, "Bounds": servers that name budgets without end, over real HTTP on loopback and fake
 * time. Counted, not timed: after thousands of fresh names, what the client holds for the host
 * stays within its bounds (MAX_SCOPES lanes, MAX_ROUTES routes, MAX_SCOPE_NAMES names), every call
 * completes, and no call is sent twice. The heap over 100,000 such answers is measured by
 * `npm run bench:churn` (test/bench/scope-churn.ts), not here.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_ROUTES, MAX_SCOPE_NAMES } from '../../src/client/scopes/route-scopes.js';
import { MAX_SCOPES } from '../../src/client/scopes/scope-lanes.js';
import { MemoryStateStore, wrapFetch } from '../../src/index.js';
import { flush } from '../client/helpers.js';
import { type CountingFetch, countingFetch, FakeClock } from '../client/integration/fake-time.js';
import { type RoutesSeen, routesSeen, watchingRoutes } from '../client/scopes/watch-routes.js';
import { type ScriptedServer, scriptedServer } from './helpers.js';

/**
 * Calls per case: past every bound several times over (the 257th name, 3 route keys per fresh
 * route against 512, a lane per channel against 64), 4,000 fresh names in all, while the file
 * stays within about 20 s of CPU (a call over loopback costs a few ms under vitest). The heap over
 * 100,000 answers is the bench's.
 */
const CALLS = 1000;
/** Calls in flight at once. */
const CONCURRENCY = 8;

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const plenty: [string, string][] = [
  ['x-ratelimit-limit', '1000000'],
  ['x-ratelimit-remaining', '999999'],
];
const channel = (n: number) => String(1_234_567_890_123_456_00n + BigInt(n));
/** A path segment of letters only (never folded as an identifier), fresh for each `n`. */
const word = (n: number) => n.toString(26).replace(/\d/g, (d) => 'qrstuvwxyz'[Number(d)] as string);

/**
 * Awaits `work`, moving `clock` 10 ms whenever nothing is on the wire (a wait of the client's):
 * `runOnFakeTime` waits for the wire to go quiet, which a steady stream of calls never does.
 */
async function drive(clock: FakeClock, wire: CountingFetch, work: Promise<unknown>): Promise<void> {
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  while (!done) {
    // A few turns for an answer's callbacks to reach the wire or a sleep on the clock.
    for (let i = 0; i < 3; i++) await flush();
    if (done) break;
    if (wire.inFlight === 0) await clock.advance(10);
    else await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await settled;
}

interface Figures extends RoutesSeen {
  ok: number;
  received: number;
  /** The most lanes seen at any checkpoint (every 100 calls). */
  lanes: number;
  storeKeys: number;
}

/** Sends {@link CALLS} calls to `path(i)` on a server answering `fields(n)` on its n-th answer. */
async function churn(
  fields: (n: number) => [string, string][],
  path: (i: number) => string,
): Promise<Figures> {
  server = await scriptedServer((_req, n) => ({ status: 200, headers: fields(n), body: 'ok' }));
  const clock = new FakeClock();
  const wire = countingFetch();
  const store = new MemoryStateStore({ clock });
  const fetch = wrapFetch(wire.fetch, { clock, store });
  const origin = server.url;
  let ok = 0;
  let lanes = 0;
  const seen = await watchingRoutes(async (tables) => {
    let next = 0;
    const work = Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CALLS) {
          const i = next++;
          const response = await fetch(`${origin}${path(i)}`);
          if (response.status === 200 && (await response.text()) === 'ok') ok++;
          if (i % 100 === 0) {
            lanes = Math.max(lanes, fetch.stats().hosts[origin]?.scopes.length ?? 0);
          }
        }
      }),
    );
    await drive(clock, wire, work);
    lanes = Math.max(lanes, fetch.stats().hosts[origin]?.scopes.length ?? 0);
    return routesSeen(tables);
  });
  await fetch.close();
  return { ...seen, ok, received: server.received, lanes, storeKeys: store.size };
}

describe(`a server naming budgets without end (${CALLS} calls each, ${CONCURRENCY} in flight)`, () => {
  it(`a fresh Discord bucket on every answer: ${MAX_SCOPE_NAMES} names, then none; at most ${MAX_SCOPES} lanes`, async () => {
    const f = await churn(
      (n) => [...plenty, ['x-ratelimit-reset-after', '60'], ['x-ratelimit-bucket', `b${n}`]],
      () => `/api/v10/channels/${channel(1)}/messages`,
    );
    expect(f.ok).toBe(CALLS);
    expect(f.received).toBe(CALLS);
    // The 257th name turns scopes off for the host: names stop at the cap, routes are let go.
    expect(f.names).toBe(MAX_SCOPE_NAMES);
    expect(f.off).toBe(true);
    expect(f.routes).toBe(0);
    expect(f.lanes).toBe(MAX_SCOPES);
    // The host's own state and the lanes' states, one per name at most (a dropped lane's stays).
    expect(f.storeKeys).toBeLessThanOrEqual(MAX_SCOPE_NAMES + 2);
  }, 120_000);

  it('a fresh GitHub resource on every answer: the same bounds', async () => {
    const f = await churn(
      (n) => [...plenty, ['x-ratelimit-reset', '1700003600'], ['x-ratelimit-resource', `r${n}`]],
      (i) => `/repos/o/r/issues/${i}`,
    );
    expect(f.ok).toBe(CALLS);
    expect(f.received).toBe(CALLS);
    expect(f.names).toBe(MAX_SCOPE_NAMES);
    expect(f.off).toBe(true);
    expect(f.lanes).toBe(MAX_SCOPES);
    expect(f.storeKeys).toBeLessThanOrEqual(MAX_SCOPE_NAMES + 2);
  }, 120_000);

  it(`200 names in turn while the caller walks fresh routes: ${MAX_ROUTES} routes kept, ${MAX_SCOPES} lanes`, async () => {
    const f = await churn(
      (n) => [
        ...plenty,
        ['x-ratelimit-reset', '1700003600'],
        ['x-ratelimit-resource', `r${n % 200}`],
      ],
      (i) => `/${word(i)}/x`,
    );
    expect(f.ok).toBe(CALLS);
    expect(f.received).toBe(CALLS);
    expect(f.names).toBe(200);
    expect(f.off).toBe(false);
    expect(f.routes).toBe(MAX_ROUTES);
    expect(f.lanes).toBe(MAX_SCOPES);
  }, 120_000);

  it(`one bucket, a fresh channel on every call: a lane per channel, at most ${MAX_SCOPES}`, async () => {
    const f = await churn(
      () => [...plenty, ['x-ratelimit-reset-after', '60'], ['x-ratelimit-bucket', 'one']],
      (i) => `/api/v10/channels/${channel(i)}/messages`,
    );
    expect(f.ok).toBe(CALLS);
    expect(f.received).toBe(CALLS);
    expect(f.names).toBe(1);
    expect(f.lanes).toBe(MAX_SCOPES);
    // Each channel's route folds to one: the route and its prefixes.
    expect(f.routes).toBeLessThanOrEqual(6);
  }, 120_000);
});
