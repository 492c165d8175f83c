/**
 * Issue 26 §6, Discord's dialect over real HTTP on fake time: a route's bucket is keyed by a path
 * parameter (5 messages per 5 s per channel) and named by one opaque hash for every channel; the
 * server's own limits are Discord's global limit. Refusals carry `X-RateLimit-Scope` (`user`, or
 * `global` with `X-RateLimit-Global: true`) and Discord's JSON body; what the fields declare is
 * true.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';
import { createMockServer, type MockServer } from '../../../src/server/index.js';
import { all, call, pacedStatuses } from './budgets.js';
import { FakeClock } from './helpers.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Discord's shape, small: 5 messages per 5 s per channel; 8 requests a second in all. */
async function discord(clock: FakeClock): Promise<string> {
  server = await createMockServer({
    clock,
    limits: [{ algorithm: 'fixed-window', limit: 8, windowMs: 1000, name: 'global' }],
    routes: [
      {
        method: 'POST',
        path: '/channels/:channel/messages',
        headers: 'discord',
        limits: [
          { algorithm: 'fixed-window', limit: 5, windowMs: 5000, key: { param: 'channel' } },
        ],
      },
      { path: '*', headers: 'discord' },
    ],
  });
  return server.url;
}

const post = { method: 'POST' };

describe("the mock server in Discord's dialect", () => {
  it('one bucket hash for every channel, a budget per channel', async () => {
    const clock = new FakeClock();
    const url = await discord(clock);
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await call(`${url}/channels/1/messages`, post));
    expect(answers.map((a) => a.headers.get('x-ratelimit-remaining'))).toEqual([
      '4',
      '3',
      '2',
      '1',
      '0',
    ]);
    const first = answers[0]?.headers as Headers;
    expect(first.get('x-ratelimit-limit')).toBe('5');
    expect(first.get('x-ratelimit-reset-after')).toBe('5.000');
    expect(first.get('x-ratelimit-reset')).toBe(((clock.now() + 5000) / 1000).toFixed(3));
    const bucket = first.get('x-ratelimit-bucket') as string;
    expect(bucket).toMatch(/^[0-9a-f]{32}$/);
    expect(parseRateLimitHeaders(first, { now: clock.now() })).toMatchObject({
      source: 'discord',
      policy: bucket,
      limit: 5,
      remaining: 4,
      resetMs: 5000,
    });
    // Another channel: the same bucket hash, its own budget.
    const other = await call(`${url}/channels/2/messages`, post);
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-bucket')).toBe(bucket);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('4');
    // No scope or global flag on an admitted request.
    expect(other.headers.has('x-ratelimit-scope')).toBe(false);
    expect(other.headers.has('x-ratelimit-global')).toBe(false);
  });

  it("a spent channel: 429, scope user, Discord's body; other channels go on", async () => {
    const clock = new FakeClock();
    const url = await discord(clock);
    for (let i = 0; i < 5; i++) await call(`${url}/channels/1/messages`, post);
    clock.advance(1250);
    const refused = await call(`${url}/channels/1/messages`, post);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-scope')).toBe('user');
    expect(refused.headers.has('x-ratelimit-global')).toBe(false);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset-after')).toBe('3.750');
    expect(refused.headers.get('retry-after')).toBe('4');
    expect(refused.body).toEqual({
      message: 'You are being rate limited.',
      retry_after: 3.75,
      global: false,
    });
    expect((await call(`${url}/channels/2/messages`, post)).status).toBe(200);
    clock.advance(3750);
    expect((await call(`${url}/channels/1/messages`, post)).status).toBe(200);
  });

  it('the global limit: X-RateLimit-Global and scope global, on every route', async () => {
    const clock = new FakeClock();
    const url = await discord(clock);
    for (let channel = 0; channel < 8; channel++) {
      expect((await call(`${url}/channels/${channel}/messages`, post)).status).toBe(200);
    }
    clock.advance(400);
    for (const refused of [
      await call(`${url}/channels/9/messages`, post),
      await call(`${url}/users/@me`),
    ]) {
      expect(refused.status).toBe(429);
      expect(refused.headers.get('x-ratelimit-global')).toBe('true');
      expect(refused.headers.get('x-ratelimit-scope')).toBe('global');
      expect(refused.body).toEqual({
        message: 'You are being rate limited.',
        retry_after: 0.6,
        global: true,
      });
      expect(parseRateLimitHeaders(refused.headers, { now: clock.now() })).toMatchObject({
        global: true,
      });
    }
    clock.advance(600);
    expect((await call(`${url}/channels/9/messages`, post)).status).toBe(200);
  });

  it('declares the truth: paced at X-RateLimit-Limit per Reset-After, never refused; one more is', async () => {
    const clock = new FakeClock();
    const url = await discord(clock);
    const first = await call(`${url}/channels/7/messages`, post);
    const limit = Number(first.headers.get('x-ratelimit-limit'));
    const windowMs = Number(first.headers.get('x-ratelimit-reset-after')) * 1000;
    expect([limit, windowMs]).toEqual([5, 5000]);
    clock.advance(windowMs);
    // Three channels at once, each paced at the declaration (3 a second in all, under global).
    const three = async () => {
      const answers = [];
      for (const channel of [7, 8, 9]) {
        answers.push(await call(`${url}/channels/${channel}/messages`, post));
      }
      return answers.find((a) => a.status !== 200) ?? (answers[0] as (typeof answers)[0]);
    };
    expect(await pacedStatuses(clock, limit, windowMs, 4, three)).toEqual(all(200, 20));
    clock.advance(windowMs - (clock.now() % windowMs));
    const send = () => call(`${url}/channels/7/messages`, post);
    expect(await pacedStatuses(clock, limit + 1, windowMs, 1, send)).toEqual([
      200, 200, 200, 200, 200, 429,
    ]);
  });

  it('a channel is kept as it is up to 128 characters, past that by its SHA-256', async () => {
    const clock = new FakeClock();
    const url = await discord(clock);
    const long = '9'.repeat(128);
    for (const channel of [long, `${long}9`]) {
      expect((await call(`${url}/channels/${channel}/messages`, post)).status).toBe(200);
    }
    const keys = Object.keys(
      server?.stats().routes['POST /channels/:channel/messages']?.keys ?? {},
    );
    expect(keys).toContain(`ip:127.0.0.1 param channel:${long}`);
    expect(keys.filter((k) => k.includes('param channel:sha256:'))).toHaveLength(1);
    expect(keys.some((k) => k.includes(`${long}9`))).toBe(false);
  });

  it('a channel named __proto__ is a channel like any other', async () => {
    const clock = new FakeClock();
    const url = await discord(clock);
    for (let i = 0; i < 5; i++) {
      expect((await call(`${url}/channels/__proto__/messages`, post)).status).toBe(200);
    }
    expect((await call(`${url}/channels/__proto__/messages`, post)).status).toBe(429);
    expect((await call(`${url}/channels/constructor/messages`, post)).status).toBe(200);
    const keys = server?.stats().routes['POST /channels/:channel/messages']?.keys ?? {};
    expect(Object.getPrototypeOf(keys)).toBe(null);
    expect(Object.keys(keys).sort()).toEqual([
      'ip:127.0.0.1 param channel:__proto__',
      'ip:127.0.0.1 param channel:constructor',
    ]);
  });
});
