/**
 * Many budgets per host, learned from answers with no configuration (issue 26): a spent scope
 * holds its own calls and no other; the host keeps what is host-wide. Scripted servers on fake
 * time; the provider simulations over HTTP are in test/peers/provider-shapes.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { MAX_SCOPE_NAMES } from '../../../src/client/scopes/route-scopes.js';
import { MAX_SCOPES } from '../../../src/client/scopes/scope-lanes.js';
import { MemoryStateStore, wrapFetch } from '../../../src/index.js';
import { type Call, FakeClock, flush, respond, scriptedFetch } from '../helpers.js';

const API = 'https://api.example.com';

/** A GitHub-style host: `search` 3 per minute, `core` 5000 per hour, each its own fixed window. */
function github(clock: FakeClock) {
  const windows = new Map<string, { start: number; used: number; limit: number; ms: number }>();
  let refusals = 0;
  const fetch = scriptedFetch(clock, (call: Call) => {
    const resource = new URL(call.url).pathname.startsWith('/search/') ? 'search' : 'core';
    const limit = resource === 'search' ? 3 : 5000;
    const ms = resource === 'search' ? 60_000 : 3_600_000;
    let w = windows.get(resource);
    if (w === undefined || clock.now() >= w.start + w.ms) {
      w = { start: clock.now(), used: 0, limit, ms };
      windows.set(resource, w);
    }
    const ok = w.used < w.limit;
    if (ok) w.used++;
    else refusals++;
    return respond(ok ? 200 : 403, {
      'x-ratelimit-resource': resource,
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(w.limit - w.used),
      'x-ratelimit-used': String(w.used),
      'x-ratelimit-reset': String(Math.ceil((w.start + w.ms) / 1000)),
    });
  });
  return { fetch, refusals: () => refusals };
}

/** A Discord-style host: 2 messages per 5 s per channel, one bucket hash for the route. */
function discord(clock: FakeClock, bucket: (call: Call) => string = () => 'b0a1') {
  const windows = new Map<string, { start: number; used: number }>();
  let refusals = 0;
  let globalUntil = 0;
  const fetch = scriptedFetch(clock, (call: Call) => {
    const path = new URL(call.url).pathname;
    if (path === '/global' && globalUntil === 0) {
      globalUntil = clock.now() + 2000;
      return respond(429, {
        'retry-after': '2',
        'x-ratelimit-global': 'true',
        'x-ratelimit-scope': 'global',
      });
    }
    if (clock.now() < globalUntil) {
      refusals++;
      return respond(429, { 'retry-after': '1', 'x-ratelimit-global': 'true' });
    }
    let w = windows.get(path);
    if (w === undefined || clock.now() >= w.start + 5000) {
      w = { start: clock.now(), used: 0 };
      windows.set(path, w);
    }
    const ok = w.used < 2;
    if (ok) w.used++;
    else refusals++;
    const resetAfter = (w.start + 5000 - clock.now()) / 1000;
    return respond(ok ? 200 : 429, {
      'x-ratelimit-bucket': bucket(call),
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': String(2 - w.used),
      'x-ratelimit-reset-after': resetAfter.toFixed(3),
      ...(ok ? {} : { 'retry-after': String(Math.ceil(resetAfter)) }),
    });
  });
  return { fetch, refusals: () => refusals };
}

const channel = (id: number) => `${API}/channels/1${String(id).padStart(17, '0')}/messages`;

describe('scopes learned from answers', () => {
  it('GitHub: a spent search budget holds searches only; core calls go at once', async () => {
    const clock = new FakeClock();
    const server = github(clock);
    const fetch = wrapFetch(server.fetch, { clock });
    await fetch(`${API}/repos/a/b`);
    for (let i = 0; i < 3; i++)
      expect((await fetch(`${API}/search/issues?q=${i}`)).status).toBe(200);
    const fourth = fetch(`${API}/search/code?q=x`);
    let searched = false;
    fourth.then(() => {
      searched = true;
    });
    // The search scope is spent until its reset; core routes are not held by it.
    for (let i = 0; i < 20; i++)
      expect((await fetch(`${API}/repos/a/b/issues/${i}`)).status).toBe(200);
    await flush();
    expect(searched).toBe(false);
    const waited = await clock.until(fourth);
    expect((await fourth).status).toBe(200);
    expect(waited).toBeGreaterThan(55_000);
    expect(server.refusals()).toBe(0);
    const stats = fetch.stats().hosts[API];
    expect(stats?.scopes.map((s) => s.name).sort()).toEqual(['github:core', 'github:search']);
  });

  it('Discord: a spent channel holds that channel only', async () => {
    const clock = new FakeClock();
    const server = discord(clock);
    const fetch = wrapFetch(server.fetch, { clock });
    for (let i = 0; i < 2; i++) await fetch(channel(1), { method: 'POST', body: 'x' });
    const third = fetch(channel(1), { method: 'POST', body: 'x' });
    let sent = false;
    third.then(() => {
      sent = true;
    });
    for (let c = 2; c <= 6; c++) {
      for (let i = 0; i < 2; i++) {
        expect((await fetch(channel(c), { method: 'POST', body: 'x' })).status).toBe(200);
      }
    }
    await flush();
    expect(sent).toBe(false);
    await clock.until(third);
    expect((await third).status).toBe(200);
    // One refusal at most per channel; here none: each channel's second answer says it is spent.
    expect(server.refusals()).toBeLessThanOrEqual(1);
    expect(fetch.stats().hosts[API]?.scopes.length).toBe(6);
  });

  it('Discord: a global 429 holds every route of the host', async () => {
    const clock = new FakeClock();
    const server = discord(clock);
    const fetch = wrapFetch(server.fetch, { clock });
    await fetch(channel(1), { method: 'POST', body: 'x' });
    await fetch(channel(2), { method: 'POST', body: 'x' });
    const start = clock.now();
    const refused = new Promise((resolve) => fetch.on('rate-limited', resolve));
    const global = fetch(`${API}/global`);
    await refused;
    await flush();
    const after = fetch(channel(2), { method: 'POST', body: 'x' });
    await clock.until(after);
    expect((await after).status).toBe(200);
    expect(clock.now() - start).toBeGreaterThanOrEqual(2000);
    expect(server.refusals()).toBe(0);
    await clock.until(global);
  });

  it('keeps at most MAX_SCOPES lanes per host; every call completes', async () => {
    const clock = new FakeClock();
    const server = discord(clock);
    const fetch = wrapFetch(server.fetch, { clock });
    const calls = Array.from({ length: MAX_SCOPES + 36 }, (_, c) =>
      fetch(channel(c), { method: 'POST', body: 'x' }),
    );
    await clock.until(Promise.all(calls));
    for (const r of await Promise.all(calls)) expect(r.status).toBe(200);
    for (let c = 0; c < MAX_SCOPES + 36; c++) {
      expect((await fetch(channel(c), { method: 'POST', body: 'x' })).status).toBe(200);
    }
    expect(fetch.stats().hosts[API]?.scopes.length).toBe(MAX_SCOPES);
  });

  it('a server naming a fresh bucket on every answer: bounded, every call completes', async () => {
    // Past every bound the case reads (the 64 lanes, the store's 200 keys, the 256 names after
    // which the host's scopes are off), bounded by work: thousands of names over HTTP are
    // test/hostile/client-scope-churn.test.ts's.
    const answers = MAX_SCOPE_NAMES + 144;
    const clock = new FakeClock();
    let n = 0;
    const server = discord(clock, () => `fresh-${n++}`);
    const store = new MemoryStateStore({ clock, maxKeys: 200 });
    const fetch = wrapFetch(server.fetch, { clock, store });
    let ok = 0;
    for (let i = 0; i < answers; i++) {
      const call = fetch(channel(i % 50), { method: 'POST', body: 'x' });
      await clock.until(call);
      if ((await call).status === 200) ok++;
    }
    expect(ok).toBe(answers);
    const stats = fetch.stats().hosts[API];
    expect(stats?.scopes.length).toBeLessThanOrEqual(MAX_SCOPES);
    // A dropped lane's state stays in the store until its own bound (maxKeys, the TTL).
    expect(store.size).toBeLessThanOrEqual(200);
  });

  it('a Retry-After with no scope on a route of no known scope holds the host', async () => {
    const clock = new FakeClock();
    const inner = scriptedFetch(clock, (call) =>
      new URL(call.url).pathname === '/unknown'
        ? respond(429, { 'retry-after': '3' })
        : respond(200, {
            'x-ratelimit-resource': 'core',
            'x-ratelimit-limit': '5000',
            'x-ratelimit-remaining': '4000',
            'x-ratelimit-reset': '1800000000',
          }),
    );
    const fetch = wrapFetch(inner, { clock, retry: false });
    await fetch(`${API}/repos/a`);
    expect((await fetch(`${API}/unknown`)).status).toBe(429);
    const start = clock.now();
    const next = fetch(`${API}/repos/b`);
    await clock.until(next);
    expect(clock.now() - start).toBeGreaterThanOrEqual(3000);
  });

  it('a Retry-After with no scope on a known route holds that scope only', async () => {
    const clock = new FakeClock();
    let refuse = true;
    const inner = scriptedFetch(clock, (call) => {
      const search = new URL(call.url).pathname.startsWith('/search');
      const headers = {
        'x-ratelimit-resource': search ? 'search' : 'core',
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '4000',
        'x-ratelimit-reset': '1800000000',
      };
      if (search && call.method === 'POST' && refuse) {
        refuse = false;
        return respond(429, { 'retry-after': '30' });
      }
      return respond(200, headers);
    });
    const fetch = wrapFetch(inner, { clock, retry: false });
    await fetch(`${API}/search/a`);
    await fetch(`${API}/repos/a`);
    expect((await fetch(`${API}/search/a`, { method: 'POST', body: 'x' })).status).toBe(429);
    // The core scope is not held: its call goes at once.
    const start = clock.now();
    expect((await fetch(`${API}/repos/b`)).status).toBe(200);
    expect(clock.now()).toBe(start);
    const search = fetch(`${API}/search/b`);
    await clock.until(search);
    expect(clock.now() - start).toBeGreaterThanOrEqual(30_000);
  });
});
