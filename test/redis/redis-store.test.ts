/**
 * RedisStore on Redis's own clock, against the real Redis: exact admission under concurrency from
 * several connections, `TIME` rather than the caller's clock, TTLs that mirror `expiresAt`, exact
 * refunds of fractional timestamps, `NOSCRIPT` and "Function not found" recovery, the fallback to
 * scripts where Redis refuses functions, option checks.
 */
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisStore } from '../../src/redis/index.js';
import { LIMITER_LIBRARY, luaScript } from '../../src/redis/lua/index.js';
import { ScriptRunner } from '../../src/redis/runner.js';
import {
  ConcurrencyLimit,
  FixedWindow,
  Gcra,
  LeakyBucket,
  type RateLimiter,
  SlidingLog,
  SlidingWindowCounter,
  TokenBucket,
} from '../../src/server/index.js';
import { isInvalidOptionError } from '../../src/shared/errors.js';
import {
  type Connection,
  connect,
  connectAdmin,
  deleteKeys,
  describeRedis,
  REDIS_URL,
  uniquePrefix,
} from './helpers.js';

/** `RACE_REPEAT=1000` repeats the race more. */
const REPEAT = Number(process.env.RACE_REPEAT) || 100;
const CONNECTIONS = 5;
const REQUESTS = 50;

/** Every algorithm with a limit of `k` that refills nothing during the race (one unit per 1000 s). */
const exact: Record<string, (k: number, store: RedisStore) => RateLimiter> = {
  'fixed-window': (k, store) => new FixedWindow({ limit: k, windowMs: 1e12, store, name: 'fw' }),
  'sliding-log': (k, store) => new SlidingLog({ limit: k, windowMs: 1e9, store, name: 'sl' }),
  'sliding-window-counter': (k, store) =>
    new SlidingWindowCounter({ limit: k, windowMs: 1e12, store, name: 'swc' }),
  'token-bucket': (k, store) =>
    new TokenBucket({ capacity: k, refillPerSecond: 0.001, store, name: 'tb' }),
  gcra: (k, store) => new Gcra({ rate: 0.001, burst: k - 1, store, name: 'gcra' }),
  'leaky-bucket': (k, store) => new LeakyBucket({ rate: 0.001, capacity: k, store, name: 'lb' }),
  concurrency: (k, store) => new ConcurrencyLimit({ limit: k, store, name: 'cc' }),
};

describeRedis(
  'RedisStore on Redis time',
  (kind) => {
    const prefix = uniquePrefix('store');
    /** Connections of the client under test. */
    const clients: Connection[] = [];
    let stores: RedisStore[];
    /** The test's own connection, which looks at what the stores wrote. */
    let admin: RedisClientType;

    beforeAll(async () => {
      admin = await connectAdmin();
      for (let i = 0; i < CONNECTIONS; i++) clients.push(await connect(kind));
      stores = clients.map(({ client }) => new RedisStore(client, { prefix, timeoutMs: 5000 }));
    });
    afterAll(async () => {
      await deleteKeys(admin, prefix);
      admin.destroy();
      for (const client of clients) await client.close();
    });

    for (const [algorithm, make] of Object.entries(exact)) {
      it(`${algorithm}: ${REQUESTS} simultaneous takes over ${CONNECTIONS} connections admit exactly the limit, ${REPEAT} times`, async () => {
        const wrong: string[] = [];
        for (let round = 0; round < REPEAT; round++) {
          const k = 1 + (round % (REQUESTS - 1));
          const limiters = stores.map((store) => make(k, store));
          const key = `race-${round}`;
          const results = await Promise.all(
            Array.from({ length: REQUESTS }, (_, i) =>
              (limiters[i % CONNECTIONS] as RateLimiter).take(key),
            ),
          );
          const admitted = results.filter((r) => r.allowed).length;
          if (admitted !== k)
            wrong.push(`round ${round}: ${admitted} admitted for a limit of ${k}`);
          // Every rejection saw the key spent, and every admission left a consistent remainder.
          const remainders = results.filter((r) => r.allowed).map((r) => r.remaining);
          expect(remainders.sort((a, b) => a - b)).toEqual(Array.from({ length: k }, (_, i) => i));
        }
        expect(wrong).toEqual([]);
      });
    }

    it('decides on Redis TIME: the caller’s now is ignored', async () => {
      const store = stores[0] as RedisStore;
      const limiter = new FixedWindow({ limit: 2, windowMs: 60_000, store, name: 'time' });
      // A caller a year behind and one a year ahead share the window Redis is in.
      const year = 365 * 86_400_000;
      await limiter.take('k', { now: Date.now() - year });
      const second = await limiter.take('k', { now: Date.now() + year });
      expect(second).toMatchObject({ allowed: true, remaining: 0 });
      const [seconds] = await admin.time();
      // The window's state: '<start> <count>'.
      const state = (await admin.get(store.keyOf('time', 'k'))) ?? '';
      const start = Number(state.split(' ')[0]);
      expect(start).toBe(Math.floor((Number(seconds) * 1000) / 60_000) * 60_000);
    });

    it('keys expire when their state becomes equivalent to a fresh key', async () => {
      const store = stores[0] as RedisStore;
      const bucket = new TokenBucket({ capacity: 10, refillPerSecond: 2, store, name: 'ttl' });
      await bucket.take('k', { cost: 4 });
      // Full again after 4 tokens at 2 per second: 2000 ms (and the 1 ms margin of expiresAt).
      const ttl = await admin.pTTL(store.keyOf('ttl', 'k'));
      expect(ttl).toBeGreaterThan(1500);
      expect(ttl).toBeLessThanOrEqual(2001);
      // A state that is already fresh is not written at all.
      const concurrency = new ConcurrencyLimit({ limit: 3, store, name: 'ttl-cc' });
      const slot = await concurrency.acquire('k');
      expect(await admin.pTTL(store.keyOf('ttl-cc', 'k'))).toBeGreaterThan(599_000);
      await slot.refund();
      expect(await admin.exists(store.keyOf('ttl-cc', 'k'))).toBe(0);
    });

    it('names each concurrency lease by Redis TIME in microseconds, and a release removes exactly its own', async () => {
      const store = stores[0] as RedisStore;
      const limiter = new ConcurrencyLimit({ limit: 5, store, name: 'lease-names' });
      const key = store.keyOf('lease-names', 'k');
      const micros = async () => {
        const [seconds, us] = await admin.time();
        return Number(seconds) * 1_000_000 + Number(us);
      };
      const before = await micros();
      const slots = await Promise.all([1, 1, 2].map((cost) => limiter.acquire('k', { cost })));
      const after = await micros();
      const members = await admin.zRange(key, 0, -1);
      const leases = members.filter((m) => m !== 'n').map((m) => m.split(':'));
      expect(leases.map(([, units]) => units).sort()).toEqual(['1', '1', '2']);
      for (const [lease] of leases) {
        // The text of the number: digits, no padding lost or added.
        expect(String(Number(lease))).toBe(lease);
        expect(Number(lease)).toBeGreaterThanOrEqual(before);
        expect(Number(lease)).toBeLessThanOrEqual(after);
      }
      expect(new Set(leases.map(([lease]) => lease)).size).toBe(3);
      await (slots[0] as { refund(): Promise<void> }).refund();
      expect((await limiter.peek('k')).remaining).toBe(2);
      await (slots[2] as { refund(): Promise<void> }).refund();
      expect((await limiter.peek('k')).remaining).toBe(4);
      expect(await admin.zRange(key, 0, -1)).toHaveLength(1);
    });

    it('a take in the same window keeps the key until the window ends (KEEPTTL), on either clock', async () => {
      const windowMs = 3_600_000;
      const store = stores[0] as RedisStore;
      const window = new FixedWindow({ limit: 5, windowMs, store, name: 'ttl-fw' });
      const [seconds, micros] = await admin.time();
      const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      const end = (Math.floor(redisNow / windowMs) + 1) * windowMs;
      for (let i = 0; i < 3; i++) await window.take('k');
      const expiry = await admin.pExpireTime(store.keyOf('ttl-fw', 'k'));
      // The window's end, give or take the millisecond of the clock read (unless it just ended).
      if (end - redisNow > 1000) expect(Math.abs(expiry - end)).toBeLessThanOrEqual(2);
      expect((await window.peek('k')).remaining).toBe(2);
      // On the callers' clocks every write renews the least TTL (a minute).
      const caller = new RedisStore((clients[0] as Connection).client, {
        prefix: store.prefix,
        timeSource: 'caller',
      });
      const fixed = new FixedWindow({
        limit: 5,
        windowMs: 1000,
        store: caller,
        name: 'ttl-fw-caller',
      });
      await fixed.take('k', { now: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await fixed.take('k', { now: 10_001 });
      expect(await admin.pTTL(caller.keyOf('ttl-fw-caller', 'k'))).toBeGreaterThan(59_900);
    });

    it('refunds GCRA and leaky-bucket takes exactly, though their timestamps are fractional', async () => {
      const store = stores[0] as RedisStore;
      for (const limiter of [
        new Gcra({ rate: 3, burst: 4, store, name: 'frac-gcra' }),
        new LeakyBucket({ rate: 3, capacity: 5, store, name: 'frac-lb' }),
      ]) {
        const key = store.keyOf(limiter.name, 'k');
        await limiter.take('k');
        const before = await admin.get(key);
        // A third of a millisecond short of whole, written to 17 significant digits (tostring's 14
        // would round it, and the refund's exact comparison would then never match).
        expect(before?.replace('.', '')).toHaveLength(17);
        const second = await limiter.acquire('k');
        expect(await admin.get(key)).not.toBe(before);
        await second.refund();
        expect(await admin.get(key)).toBe(before);
      }
    });

    it('loads a script with EVAL when Redis answers NOSCRIPT', async () => {
      const runner = new ScriptRunner(
        (clients[0] as Connection).client,
        { timeoutMs: 5000, recheckMs: 1000 },
        { down: () => {}, up: () => {} },
      );
      // A source no Redis has seen: EVALSHA answers NOSCRIPT, EVAL runs and caches it.
      const script = luaScript(`return ARGV[1] -- ${prefix}`);
      expect(await admin.scriptExists(script.sha)).toEqual([0]);
      expect(await runner.run(script, [`${prefix}noscript`], ['hello'], 'take')).toBe('hello');
      expect(await admin.scriptExists(script.sha)).toEqual([1]);
      expect(runner.health()).toMatchObject({ available: true, succeeded: 1, failed: 0 });
    });

    it('calls a Redis Function, and loads the library again when Redis lost it (FUNCTION DELETE, a restart)', async () => {
      const store = new RedisStore((clients[0] as Connection).client, { prefix, timeoutMs: 5000 });
      const limiter = new FixedWindow({ limit: 3, windowMs: 1e12, store, name: 'fn-reload' });
      await limiter.take('k');
      const fcalls = async () => {
        const stats = await admin.info('commandstats');
        return Number(/cmdstat_fcall:calls=(\d+)/.exec(stats)?.[1] ?? 0);
      };
      const before = await fcalls();
      expect((await limiter.take('k')).remaining).toBe(1);
      expect(await fcalls()).toBeGreaterThan(before);
      await admin.sendCommand(['FUNCTION', 'DELETE', LIMITER_LIBRARY.name]);
      // 'Function not found': loaded again, and the call is made once.
      expect((await limiter.take('k')).remaining).toBe(0);
      expect((await limiter.take('k')).allowed).toBe(false);
      const libraries = (await admin.sendCommand([
        'FUNCTION',
        'LIST',
        'LIBRARYNAME',
        LIMITER_LIBRARY.name,
      ])) as unknown[];
      expect(libraries).toHaveLength(1);
      expect(store.health()).toMatchObject({ available: true, failed: 0 });
    });

    it('runs the scripts (EVALSHA) where Redis refuses functions, with the same decisions', async () => {
      let refused = 0;
      // A server without functions (Redis 6, a managed service that disabled them).
      const noFunctions = (clients[0] as Connection).intercept((call) => {
        if (call.command !== 'FCALL') return call.send();
        refused += 1;
        return Promise.reject(new Error("ERR unknown command 'FCALL', with args beginning with: "));
      });
      const store = new RedisStore(noFunctions, { prefix, timeoutMs: 5000 });
      for (const [name, make] of Object.entries(exact)) {
        const limiter = make(2, store);
        const key = `no-functions-${name}`;
        const results = [];
        for (let i = 0; i < 3; i++) results.push((await limiter.take(key)).allowed);
        expect(results, name).toEqual([true, true, false]);
      }
      // Refused once: scripts from then on.
      expect(refused).toBe(1);
      expect(store.health()).toMatchObject({ available: true, failed: 0 });
    });

    it.runIf(kind.unconnected !== undefined).each([
      ['connecting in the background (new Redis(url))', false],
      ['not connected yet (lazyConnect: its first command connects it)', true],
    ])('a store on a client %s: the first calls wait for the connection', async (_what, lazy) => {
      const connection = kind.unconnected?.(REDIS_URL as string, lazy) as Connection;
      try {
        expect(connection.connected()).toBe(false);
        const store = new RedisStore(connection.client, { prefix, timeoutMs: 5000 });
        const limiter = new FixedWindow({ limit: 2, windowMs: 1e12, store, name: `early-${lazy}` });
        const results = await Promise.all([1, 2, 3].map(() => limiter.take('k')));
        expect(results.map((r) => r.allowed)).toEqual([true, true, false]);
        expect(store.health()).toMatchObject({ available: true, failed: 0, refused: 0 });
      } finally {
        await connection.close();
      }
    });

    it('checks its options', () => {
      const client = (clients[0] as Connection).client;
      expect(() => new RedisStore(client, { prefix: 'a{b}:' })).toThrow(
        'invalid option prefix: must not contain { or }, got "a{b}:"',
      );
      try {
        new RedisStore(client, { timeoutMs: 0 });
        expect.unreachable();
      } catch (error) {
        expect(isInvalidOptionError(error)).toBe(true);
      }
      expect(() => new RedisStore({} as never)).toThrow(TypeError);
      expect(new RedisStore(client).keyOf('per-ip', '203.0.113.7')).toBe(
        'limited-client:limit:per-ip:{203.0.113.7}',
      );
    });
  },
  'full',
);
