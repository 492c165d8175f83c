/**
 * The `partition` option and per-call `partition`: a host split into parts that learn, hold, queue
 * and break apart. GitHub's REST API is the case in point: its documentation
 * (docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api) reports
 * `x-ratelimit-resource: core` and `search` with separate quotas on one host.
 */
import { describe, expect, it } from 'vitest';
import {
  InvalidOptionError,
  isRateLimitError,
  MemoryStateStore,
  wrapFetch,
} from '../../src/index.js';
import { FakeClock, respond, scriptedFetch } from './helpers.js';

const API = 'https://api.github.com';

/** GitHub's headers: search has 30 a minute and this one spends the last; core has plenty. */
function github(clock: FakeClock) {
  return scriptedFetch(clock, (call) => {
    const search = new URL(call.url).pathname.startsWith('/search/');
    const reset = String(Math.ceil((clock.now() + 60_000) / 1000));
    return respond(200, {
      'x-ratelimit-resource': search ? 'search' : 'core',
      'x-ratelimit-limit': search ? '30' : '5000',
      'x-ratelimit-remaining': search ? '0' : '4999',
      'x-ratelimit-used': search ? '30' : '1',
      'x-ratelimit-reset': reset,
    });
  });
}

const bySearch = ({ url }: { url: string }) => (url.includes('/search/') ? 'search' : undefined);

describe('partitions', () => {
  it('without one, the answers name the budgets: a spent search holds searches only', async () => {
    const clock = new FakeClock();
    const inner = github(clock);
    const fetch = wrapFetch(inner, { clock, maxRetryAfterMs: 1000 });
    await fetch(`${API}/search/code?q=x`);
    expect((await fetch(`${API}/repos/nodejs/node`)).status).toBe(200);
    await expect(fetch(`${API}/search/issues?q=y`)).rejects.toSatisfy(isRateLimitError);
    expect(inner.calls).toHaveLength(2);
    const scopes = fetch.stats().hosts[API]?.scopes;
    expect(scopes?.map((s) => [s.name, s.policies[0]?.remaining]).sort()).toEqual([
      ['github:core', 4999],
      ['github:search', 0],
    ]);
  });

  it('with one, core calls go while search is held until its reset', async () => {
    const clock = new FakeClock();
    const inner = github(clock);
    const fetch = wrapFetch(inner, { clock, maxRetryAfterMs: 1000, partition: bySearch });
    await fetch(`${API}/search/code?q=x`);
    for (let i = 0; i < 5; i++) expect((await fetch(`${API}/repos/nodejs/node`)).status).toBe(200);
    await expect(fetch(`${API}/search/issues?q=y`)).rejects.toSatisfy(isRateLimitError);
    expect(inner.calls).toHaveLength(6);
    const { hosts } = fetch.stats();
    expect(hosts[API]?.scopes.flatMap((s) => s.policies.map((p) => p.name))).toEqual(['core']);
    const search = hosts[`${API}#search`]?.scopes;
    expect(search?.flatMap((s) => s.policies.map((p) => [p.name, p.remaining]))).toEqual([
      ['search', 0],
    ]);
  });

  it('is read from the method and URL of the call', async () => {
    const clock = new FakeClock();
    const seen: string[] = [];
    const fetch = wrapFetch(
      scriptedFetch(clock, () => respond(200)),
      {
        clock,
        partition: ({ method, url }) => {
          seen.push(`${method} ${url}`);
          return method === 'POST' ? 'writes' : undefined;
        },
      },
    );
    await fetch(`${API}/a`);
    await fetch(`${API}/b`, { method: 'post', body: 'x' });
    await fetch(new Request(`${API}/c`, { method: 'DELETE' }));
    expect(seen).toEqual([`GET ${API}/a`, `POST ${API}/b`, `DELETE ${API}/c`]);
    expect(Object.keys(fetch.stats().hosts).sort()).toEqual([API, `${API}#writes`]);
  });

  it('tags events and stats with the partition, and breaks its circuit alone', async () => {
    const clock = new FakeClock();
    const inner = scriptedFetch(clock, (call) => respond(call.url.endsWith('/flaky') ? 500 : 200));
    const fetch = wrapFetch(inner, {
      clock,
      retry: false,
      coldStart: false,
      partition: ({ url }) => (url.endsWith('/flaky') ? 'flaky' : undefined),
    });
    const states: unknown[] = [];
    fetch.on('circuit-state', (e) => states.push(e));
    for (let i = 0; i < 5; i++) await fetch(`${API}/flaky`);
    expect(states).toEqual([{ origin: API, partition: 'flaky', from: 'closed', to: 'open' }]);
    const refused: unknown[] = [];
    fetch.on('circuit-open', (e) => refused.push(e.partition));
    await expect(fetch(`${API}/flaky`)).rejects.toThrow(/circuit/i);
    expect(refused).toEqual(['flaky']);
    expect((await fetch(`${API}/fine`)).status).toBe(200);
    const { hosts } = fetch.stats();
    expect(hosts[`${API}#flaky`]).toMatchObject({
      origin: API,
      partition: 'flaky',
      circuit: 'open',
    });
    expect(hosts[API]).toMatchObject({ origin: API, circuit: 'closed' });
    expect(hosts[API]).not.toHaveProperty('partition');
  });

  it('shares a partition between clients through the store, apart from the host', async () => {
    const clock = new FakeClock();
    const store = new MemoryStateStore({ clock });
    const options = { clock, store, maxRetryAfterMs: 1000, partition: bySearch };
    const one = wrapFetch(github(clock), options);
    const twoInner = github(clock);
    const two = wrapFetch(twoInner, options);
    await one(`${API}/search/code?q=x`);
    // The other client learned, through the store, the search route's scope and that it is spent,
    // and that core is not.
    await expect(two(`${API}/search/code?q=y`)).rejects.toSatisfy(isRateLimitError);
    expect((await two(`${API}/user`)).status).toBe(200);
    expect(twoInner.calls.map((c) => new URL(c.url).pathname)).toEqual(['/user']);
    expect(store.get(`${API}#search\u001fgithub:search`)).toBeDefined();
    expect(store.get(`${API}#search\u001f`)).toEqual({
      v: 1,
      routes: [['GET', '/search/code', 'github:search', false]],
    });
  });

  it('refuses a partition that is not a string of at most 256 characters, without sending', async () => {
    const clock = new FakeClock();
    const inner = scriptedFetch(clock, () => respond(200));
    const bad = (value: unknown) =>
      wrapFetch(inner, { clock, partition: () => value as string | undefined });
    await expect(bad(42)(`${API}/x`)).rejects.toThrow(
      /GET https:\/\/api\.github\.com\/x: invalid option partition: must return a string of at most 256 characters, or undefined, got 42/,
    );
    await expect(bad('p'.repeat(257))(`${API}/x`)).rejects.toThrow(/\(257 characters\)/);
    await expect(
      wrapFetch(inner, { clock })(`${API}/x`, { partition: null as unknown as string }),
    ).rejects.toThrow(InvalidOptionError);
    const boom = new Error('my partition function failed');
    const throwing = wrapFetch(inner, {
      clock,
      partition: () => {
        throw boom;
      },
    });
    await expect(throwing(`${API}/x`)).rejects.toBe(boom);
    expect(inner.calls).toHaveLength(0);
    // 256 characters is fine.
    expect((await bad('p'.repeat(256))(`${API}/x`)).status).toBe(200);
  });

  it('refuses an option that is not a function, naming it', () => {
    expect(() => wrapFetch(fetch, { partition: 'search' as never })).toThrow(InvalidOptionError);
    expect(() => wrapFetch(fetch, { partition: 'search' as never })).toThrow(
      /invalid option partition: must be a function \(request\) => string \| undefined, got "search"/,
    );
    // Not a per-host option: a host entry cannot set it.
    expect(() =>
      wrapFetch(fetch, { hosts: { 'api.github.com': { partition: bySearch } as never } }),
    ).toThrow(/partition/);
  });
});
