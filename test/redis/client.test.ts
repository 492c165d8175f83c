/**
 * LimitedClient and wrapFetch with a RedisStore: what one process learns from the server holds the
 * others, over real HTTP and the real Redis. Each "process" has its own connection and store.
 */
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isRateLimitError, LimitedClient, wrapFetch } from '../../src/index.js';
import { RedisStore } from '../../src/redis/index.js';
import { createMockServer, type MockServer } from '../../src/server/index.js';
import {
  type Connection,
  connect,
  connectAdmin,
  deleteKeys,
  describeRedis,
  uniquePrefix,
} from './helpers.js';

describeRedis('clients sharing what the server taught, through Redis', (kind) => {
  const prefix = uniquePrefix('client');
  const clients: Connection[] = [];
  let admin: RedisClientType;
  let server: MockServer;

  beforeAll(async () => {
    admin = await connectAdmin();
    for (let i = 0; i < 2; i++) clients.push(await connect(kind));
    // One request a minute for everybody, declared in the IETF fields.
    server = await createMockServer({
      routes: [
        {
          path: '*',
          limits: [{ algorithm: 'sliding-log', limit: 1, windowMs: 60_000, key: 'global' }],
        },
      ],
    });
  });
  afterAll(async () => {
    await server.close();
    await deleteKeys(admin, prefix);
    admin.destroy();
    for (const client of clients) await client.close();
  });

  const store = (i: number, name: string) =>
    new RedisStore((clients[i] as Connection).client, { prefix: `${prefix}${name}:` });

  it('a LimitedClient told "none left until the window ends" holds another process’s client', async () => {
    server.resetStats();
    const options = { maxRetryAfterMs: 100, coldStart: false as const };
    const first = new LimitedClient(server.url, { ...options, store: store(0, 'lc') });
    const second = new LimitedClient(server.url, { ...options, store: store(1, 'lc') });
    expect((await first.get('/a')).status).toBe(200);
    // The second process never sends: the shared state says the server has nothing left.
    const refusal = await second.get('/b').catch((error: unknown) => error);
    expect(isRateLimitError(refusal)).toBe(true);
    expect(server.stats()).toMatchObject({ admitted: 1, rejected: 0 });
    await first.close();
    await second.close();
  });

  it('so does wrapFetch', async () => {
    const key = `${prefix}wrap:state:{${server.url}}`;
    const first = wrapFetch(fetch, {
      maxRetryAfterMs: 100,
      coldStart: false,
      store: store(0, 'wrap'),
    });
    const second = wrapFetch(fetch, {
      maxRetryAfterMs: 100,
      coldStart: false,
      store: store(1, 'wrap'),
    });
    // This window is spent already (the test before took it): the first call gets the 429 and
    // the hold it carries reaches the other process through Redis.
    server.resetStats();
    expect((await first(`${server.url}/c`)).status).toBe(429);
    expect(await admin.exists(key)).toBe(1);
    const refusal = await second(`${server.url}/d`).catch((error: unknown) => error);
    expect(isRateLimitError(refusal)).toBe(true);
    expect(server.stats()).toMatchObject({ admitted: 0, rejected: 1 });
  });
  it('keeps a partition apart from its host, in its own key', async () => {
    const routes = await createMockServer({
      routes: [
        {
          path: '/search',
          limits: [{ algorithm: 'sliding-log', limit: 1, windowMs: 60_000, name: 'search' }],
        },
        {
          path: '/items/:id',
          limits: [{ algorithm: 'sliding-log', limit: 50, windowMs: 60_000, name: 'core' }],
        },
      ],
    });
    try {
      const options = {
        maxRetryAfterMs: 100,
        coldStart: false as const,
        partition: ({ url }: { url: string }) => (url.includes('/search') ? 'search' : undefined),
      };
      const first = new LimitedClient(routes.url, { ...options, store: store(0, 'part') });
      const second = new LimitedClient(routes.url, { ...options, store: store(1, 'part') });
      expect((await first.get('/search')).status).toBe(200);
      const key = `${prefix}part:state:{${routes.url}#search}`;
      expect(await admin.exists(key)).toBe(1);
      // The other process knows search is spent, and that the items are not.
      const refusal = await second.get('/search').catch((error: unknown) => error);
      expect(isRateLimitError(refusal)).toBe(true);
      const items = await Promise.all([1, 2, 3].map((i) => second.get(`/items/${i}`)));
      expect(items.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(routes.stats()).toMatchObject({ admitted: 4, rejected: 0 });
      await first.close();
      await second.close();
    } finally {
      await routes.close();
    }
  });
  it('a probe lost with a dead process stops holding the others once its time is up', async () => {
    const routes = await createMockServer({
      routes: [{ path: '*', limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 1000 }] }],
    });
    const dead = new AbortController();
    try {
      // A process whose request never comes back (its fetch hangs until the test ends). Its
      // signals are held, as a real fetch's socket holds them: the client follows a caller's
      // signal weakly (signals.ts), so one that nothing holds may be collected, and the test's
      // abort would never reach it (it did not, once in four runs).
      const inFlight: AbortSignal[] = [];
      const hang: typeof fetch = (_input, init) =>
        new Promise((_resolve, reject) => {
          const signal = init?.signal;
          if (signal) inFlight.push(signal);
          signal?.addEventListener('abort', () => reject(signal.reason));
        });
      const alive = wrapFetch(fetch, { coldStart: false, store: store(1, 'lost') });
      // It sent with a 1 s attempt timeout, then died: its timers never fire.
      const dying = wrapFetch(hang, {
        coldStart: false,
        attemptTimeoutMs: 1000,
        store: store(0, 'lost'),
        clock: { now: () => Date.now(), random: Math.random, sleep: () => new Promise(() => {}) },
      });
      const first = await alive(`${routes.url}/a`);
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit')).toMatch(/r=0/);
      // Past the window's reset, the dying process's request is the one probe.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const lost = dying(`${routes.url}/b`, { signal: dead.signal }).catch(() => 'aborted');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const held: string[] = [];
      alive.on('held', (e) => held.push(e.reason));
      // Waits for that probe's answer, then takes it as lost (its attempt timeout 1 s, plus 1 s).
      const next = await alive(`${routes.url}/c`);
      expect(next.status).toBe(200);
      expect(held).toEqual(['probe']);
      dead.abort();
      expect(await lost).toBe('aborted');
      await alive.close();
      await dying.close();
    } finally {
      dead.abort();
      await routes.close();
    }
  });
});
