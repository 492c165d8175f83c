/**
 * Issue 11, "bounds written down": what an outside party (the servers a caller talks to, the URLs
 * it is handed) can make the client hold, each at its bound. The bounds that already had a test at
 * the bound are not repeated here: `maxHosts` in the registry (`test/client/registry.test.ts`),
 * the partition name length (`test/client/partitions.test.ts`), `maxQueue`
 * (`test/client/admission.test.ts`), `MemoryStateStore`'s `maxKeys` (`test/client/store.test.ts`),
 * one listener on a shared signal (`client-shared-signal.test.ts`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TargetCache } from '../../src/client/entries/engine.js';
import { FLIGHT_TTL_MS, type FlightsState } from '../../src/client/rules/flights.js';
import { MAX_POLICIES } from '../../src/client/rules/quota.js';
import { SALESFORCE_MAX_MEMBERS } from '../../src/headers/vendor-quotas.js';
import {
  LimitedClient,
  MemoryStateStore,
  parseRateLimitHeaders,
  wrapFetch,
} from '../../src/index.js';
import { FakeClock } from '../client/helpers.js';
import { type ScriptedServer, scriptedServer } from './helpers.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ok = async () => new Response('ok');

describe('pipelines (maxHosts): hosts and partitions', () => {
  it('keeps maxHosts pipelines, dropping the least recently used; counters survive', async () => {
    const fetch = wrapFetch(ok, { maxHosts: 5, coldStart: false });
    for (let i = 0; i < 5; i++) await fetch(`http://h${i}.example/`);
    expect(Object.keys(fetch.stats().hosts)).toHaveLength(5);
    await fetch('http://h5.example/');
    const { hosts, totals } = fetch.stats();
    expect(Object.keys(hosts)).toEqual([1, 2, 3, 4, 5].map((i) => `http://h${i}.example`));
    expect(totals.requests).toBe(6);
    await fetch.close();
  });

  it('counts each partition as a pipeline against maxHosts, names up to 256 characters', async () => {
    const fetch = wrapFetch(ok, { maxHosts: 5, coldStart: false });
    const long = (i: number) => `${i}`.padEnd(256, 'p');
    await fetch('http://h.example/');
    for (let i = 0; i < 4; i++) await fetch('http://h.example/', { partition: long(i) });
    expect(Object.keys(fetch.stats().hosts)).toHaveLength(5);
    await fetch('http://h.example/', { partition: long(4) });
    const keys = Object.keys(fetch.stats().hosts);
    expect(keys).toHaveLength(5);
    // The host's own pipeline was the least recently used.
    expect(keys).not.toContain('http://h.example');
    expect(keys).toContain(`http://h.example#${long(4)}`);
    await fetch.close();
  });

  it('keeps a pipeline past maxHosts while its call is under way, and lets it go after', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const fetch = wrapFetch(
      async () => {
        await gate;
        return new Response('ok');
      },
      { maxHosts: 2, coldStart: false },
    );
    const calls = [0, 1, 2, 3].map((i) => fetch(`http://h${i}.example/`).then((r) => r.status));
    await new Promise((resolve) => setImmediate(resolve));
    expect(Object.keys(fetch.stats().hosts)).toHaveLength(4);
    release();
    expect(await Promise.all(calls)).toEqual([200, 200, 200, 200]);
    // The next call's sweep brings the registry back to its bound.
    await fetch('http://h4.example/');
    expect(Object.keys(fetch.stats().hosts)).toHaveLength(2);
    await fetch.close();
  });
});

describe(`learned policies per host (${MAX_POLICIES}, the most restrictive)`, () => {
  /** Policies `p0`...: `p0` the tightest (1 of 100 left), each next one roomier. */
  function policies(n: number): [string, string][] {
    const names = Array.from({ length: n }, (_, i) => `p${i}`);
    return [
      ['RateLimit-Policy', names.map((name) => `"${name}";q=100;w=60`).join(', ')],
      ['RateLimit', names.map((name, i) => `"${name}";r=${1 + 10 * i};t=30`).join(', ')],
    ];
  }

  it(`keeps all ${MAX_POLICIES} when the server names ${MAX_POLICIES}`, async () => {
    server = await scriptedServer(() => ({ status: 200, headers: policies(MAX_POLICIES) }));
    const api = new LimitedClient(server.url, { coldStart: false });
    await (await api.get('/')).text();
    const kept = api.stats().hosts[server.url]?.policies.map((p) => p.name);
    expect(kept?.sort()).toEqual(Array.from({ length: MAX_POLICIES }, (_, i) => `p${i}`).sort());
    await api.close();
  });

  it(`keeps ${MAX_POLICIES} of ${MAX_POLICIES + 1}, dropping the roomiest`, async () => {
    server = await scriptedServer(() => ({ status: 200, headers: policies(MAX_POLICIES + 1) }));
    const api = new LimitedClient(server.url, { coldStart: false });
    await (await api.get('/')).text();
    const kept = api.stats().hosts[server.url]?.policies.map((p) => p.name) ?? [];
    expect(kept).toHaveLength(MAX_POLICIES);
    expect(kept).not.toContain(`p${MAX_POLICIES}`);
    expect(kept).toContain('p0');
    await api.close();
  });
});

describe('requests in flight to a server that never answers', () => {
  it(`are kept in at most ${Math.ceil(FLIGHT_TTL_MS / 2000) + 1} entries, however many are out`, async () => {
    const clock = new FakeClock(0);
    const store = new MemoryStateStore({ clock });
    // Holds every request until it is aborted (the client's close).
    const never = (_input: RequestInfo | URL, init?: RequestInit) =>
      new Promise<Response>((_, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      });
    const fetch = wrapFetch(never, { clock, store, coldStart: false });
    const stop = new AbortController();
    const pending: Promise<unknown>[] = [];
    let longest = 0;
    // A request a second for five minutes: 300 of them out at once by the end.
    for (let i = 0; i < 300; i++) {
      pending.push(fetch(`http://h.example/${i}`, { signal: stop.signal }).catch(() => {}));
      await clock.advance(1000);
      const state = store.get<{ flights?: FlightsState }>('http://h.example');
      longest = Math.max(longest, state?.flights?.list.length ?? 0);
    }
    expect(fetch.stats().hosts['http://h.example']?.inFlight).toBe(300);
    // A minute of requests in grains of two seconds (see flightExpiry).
    expect(longest).toBeGreaterThan(20);
    expect(longest).toBeLessThanOrEqual(Math.ceil(FLIGHT_TTL_MS / 2000) + 1);
    // close() lets attempts on the wire finish: these never would, so the caller ends them.
    stop.abort();
    await Promise.all(pending);
    expect(fetch.stats().hosts['http://h.example']?.inFlight).toBe(0);
    await fetch.close();
  });
});

describe('idempotency keys', () => {
  it('one per call, the same on each of its attempts, none kept after', async () => {
    const attemptsByKey = new Map<string, number>();
    server = await scriptedServer((request) => {
      const key = String(request.headers['idempotency-key']);
      const n = (attemptsByKey.get(key) ?? 0) + 1;
      attemptsByKey.set(key, n);
      // Twice a plain 503 (the key echoed, as a server that honours it does), then done. It was
      // `Retry-After: 0`, "try again at once", which is paced like any refusal since issue 24
      // item 1: 40 refusals at the pace would outlast this test.
      return n < 3 ? { status: 503, headers: [['Idempotency-Key', key]] } : { status: 201 };
    });
    const api = new LimitedClient(server.url, {
      coldStart: false,
      retryBudget: false,
      circuitBreaker: false,
    });
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.post('/pay', { i }).then((r) => r.status)),
    );
    expect(statuses).toEqual(Array(20).fill(201));
    expect(server.received).toBe(60);
    expect(attemptsByKey.size).toBe(20);
    expect([...attemptsByKey.values()]).toEqual(Array(20).fill(3));
    // The keys lived with their calls: the client's state names none of them.
    const state = JSON.stringify(api.stats());
    for (const key of attemptsByKey.keys()) expect(state).not.toContain(key);
    await api.close();
  });
});

describe('parsed URLs (TargetCache, 256)', () => {
  it('keeps 256 URLs parsed, and starts over on the 257th', () => {
    const cache = new TargetCache();
    const first = cache.get('http://h.example/0');
    for (let i = 1; i < 256; i++) cache.get(`http://h.example/${i}`);
    expect(cache.get('http://h.example/0')).toBe(first);
    cache.get('http://h.example/256');
    const again = cache.get('http://h.example/0');
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});

describe(`Salesforce members read from one field (${SALESFORCE_MAX_MEMBERS})`, () => {
  it(`reads the first ${SALESFORCE_MAX_MEMBERS} members of a longer field, and no more`, () => {
    const members = (n: number) =>
      Array.from({ length: n }, (_, i) => `member${i}=1/100`).join('; ');
    const names = (n: number) =>
      parseRateLimitHeaders({ 'sforce-limit-info': members(n) })
        ?.policies.map((p) => p.name)
        .sort();
    const first = Array.from({ length: SALESFORCE_MAX_MEMBERS }, (_, i) => `member${i}`).sort();
    expect(names(SALESFORCE_MAX_MEMBERS)).toEqual(first);
    expect(names(1000)).toEqual(first);
  });
});
