/**
 * RedisStore when single calls go wrong, against the real Redis through a client (of the kind
 * under test) that injects faults into chosen calls (no `CLIENT PAUSE`: other users of the Redis are not slowed): a reply
 * held back past the timeout (Redis applied the call), a call sent past its deadline, a release
 * that never comes (its process died). No concurrency slot is lost for longer than
 * `inFlightTtlMs`, and a take that rejects was not applied. (Which errors mean "Redis is down":
 * `errors.test.ts`.)
 *
 * Waits poll the state for at most a few seconds; no test asserts how long one call took.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  isStoreUnavailableError,
  RedisStore,
  type RedisStoreClient,
  type StoreUnavailableError,
} from '../../src/redis/index.js';
import {
  ConcurrencyLimit,
  createMockServer,
  type RateLimiter,
  TokenBucket,
} from '../../src/server/index.js';
import type { ScriptCall } from './clients.js';
import {
  type Connection,
  connect,
  connectAdmin,
  deleteKeys,
  describeRedis,
  uniquePrefix,
} from './helpers.js';

/** What happens to one script call (`EVALSHA` or `FCALL`). */
type Fault =
  /** Sent at once; its reply (Redis applied the call) reaches the store `ms` later. */
  | { slowReply: number }
  /** Sent `ms` late, as if stuck behind a busy Redis: Redis runs it that much later. */
  | { slowSend: number };

/** A client of the kind under test, with faults for its next script calls, in order. */
class FaultyClient {
  /** Faults for the next calls, first first. */
  readonly faults: Fault[] = [];
  /** What Redis answered to each faulty call (its raw reply), once it did. */
  readonly answers: Promise<unknown>[] = [];
  /** The client to give the store. */
  readonly client: RedisStoreClient;

  constructor(real: Connection) {
    this.client = real.intercept((call) => this.#send(call));
  }

  #send(call: ScriptCall): Promise<unknown> {
    // An EVAL follows a NOSCRIPT: the call the fault was for.
    const fault = call.command === 'EVAL' ? undefined : this.faults.shift();
    if (fault === undefined) return call.send();
    let answer: Promise<unknown>;
    if ('slowReply' in fault) {
      answer = call.send();
      this.answers.push(answer);
      return answer.then(async (reply) => {
        await sleep(fault.slowReply);
        return reply;
      });
    }
    answer = sleep(fault.slowSend).then(() => call.send());
    this.answers.push(answer);
    return answer;
  }
}

/** Resolves to the error `promise` rejects with; fails the test if it resolves. */
async function rejection(promise: Promise<unknown>): Promise<StoreUnavailableError> {
  try {
    await promise;
  } catch (error) {
    expect(isStoreUnavailableError(error), String(error)).toBe(true);
    return error as StoreUnavailableError;
  }
  throw new Error('expected a rejection');
}

/** Polls `condition` every 10 ms for up to 5 s; fails with `what` if it never holds. */
async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await sleep(10);
  }
  throw new Error(`never happened: ${what}`);
}

describeRedis('RedisStore when single calls go wrong', (kind) => {
  const prefix = uniquePrefix('faults');
  /** The test's own connection: it looks at Redis's clock and the leases. */
  let admin: RedisClientType;
  /** Two connections of the client under test. */
  let real: Connection;
  let other: Connection;

  beforeAll(async () => {
    admin = await connectAdmin();
    real = await connect(kind);
    other = await connect(kind);
  });
  afterAll(async () => {
    await deleteKeys(admin, prefix);
    admin.destroy();
    await real.close();
    await other.close();
  });

  /**
   * A store on a faulty client, its scripts loaded and its offset to Redis's clock measured by a
   * few quick calls (so that takes carry deadlines).
   */
  async function faultyStore(options: { timeoutMs: number; inFlightTtlMs?: number }) {
    const client = new FaultyClient(real);
    const store = new RedisStore(client.client, { prefix, recheckMs: 0, ...options });
    const warm = new ConcurrencyLimit({ limit: 1, store, name: 'warm' });
    const bucket = new TokenBucket({ capacity: 1, refillPerSecond: 1, store, name: 'warm-tb' });
    for (let i = 0; i < 5; i++) {
      await (await warm.acquire('k')).refund();
      await bucket.peek('k');
    }
    return { client, store };
  }

  /** Redis's clock, in epoch milliseconds. */
  async function redisNow(): Promise<number> {
    const [seconds, micros] = await admin.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /** Units in flight on a concurrency key, as Redis holds them (its live leases). */
  async function leases(store: RedisStore, name: string, key: string): Promise<number> {
    return admin.zCount(store.keyOf(name, key), `(${await redisNow()}`, '+inf');
  }

  it('a take Redis applied but answered after the timeout holds no slot: it is given back when the answer comes', async () => {
    const { client, store } = await faultyStore({ timeoutMs: 100 });
    const limiter = new ConcurrencyLimit({ limit: 2, store, name: 'late-reply' });
    client.faults.push({ slowReply: 300 });
    const error = await rejection(limiter.take('k'));
    expect(error.timeoutMs).toBe(100);
    // Redis did apply it: a lease for a take its caller was told failed.
    // '<allowed> <seconds> <micros> <units in flight> <receipt>'
    const [allowed, , , , receipt] = ((await client.answers[0]) as string).split(' ');
    expect(allowed).toBe('1');
    expect(receipt).toMatch(/^\d+$/);
    await until(() => store.health().givenBack === 1, 'the late take given back');
    expect(await leases(store, 'late-reply', 'k')).toBe(0);
    const both = [await limiter.take('k'), await limiter.take('k')];
    expect(both.map((r) => [r.allowed, r.remaining])).toEqual([
      [true, 1],
      [true, 0],
    ]);
    expect(store.health()).toMatchObject({ late: 0, givenBack: 1 });
  });

  it('a take that reaches Redis after its deadline is refused there and not applied', async () => {
    const { client, store } = await faultyStore({ timeoutMs: 400 });
    const limiters: RateLimiter[] = [
      new ConcurrencyLimit({ limit: 2, store, name: 'late-cc' }),
      new TokenBucket({ capacity: 5, refillPerSecond: 0.001, store, name: 'late-tb' }),
    ];
    for (const limiter of limiters) {
      // Sent after the caller's timeout, and (sent a little earlier) before it: the deadline is
      // half the timeout after sending, so Redis refuses both.
      for (const slowSend of [700, 300]) {
        const answered = client.answers.length;
        client.faults.push({ slowSend });
        await rejection(limiter.take('k'));
        expect(await client.answers[answered]).toMatch(/^late \d+ \d+$/);
      }
      expect(await admin.exists(store.keyOf(limiter.name, 'k'))).toBe(0);
      expect((await limiter.take('k')).remaining).toBe(limiter.limit - 1);
    }
    expect(store.health()).toMatchObject({ late: 4, givenBack: 0 });
  });

  it('a release answered after the timeout, or sent after it, was applied: the slot is free', async () => {
    const { client, store } = await faultyStore({ timeoutMs: 100 });
    const limiter = new ConcurrencyLimit({ limit: 2, store, name: 'late-release' });
    for (const fault of [{ slowReply: 300 }, { slowSend: 300 }]) {
      const slot = await limiter.acquire('k');
      expect(await leases(store, 'late-release', 'k')).toBe(1);
      const answered = client.answers.length;
      client.faults.push(fault);
      await rejection(slot.refund());
      expect(await client.answers[answered]).toBe('ok');
      expect(await leases(store, 'late-release', 'k')).toBe(0);
    }
    const both = [await limiter.take('k'), await limiter.take('k')];
    expect(both.map((r) => r.allowed)).toEqual([true, true]);
  });

  it('a slot whose release never comes (its process died) comes back after inFlightTtlMs, under steady traffic', async () => {
    const inFlightTtlMs = 500;
    const live = new RedisStore(real.client, { prefix, timeoutMs: 5000, inFlightTtlMs });
    const dead = new RedisStore(other.client, { prefix, timeoutMs: 5000, inFlightTtlMs });
    const options = { limit: 2, name: 'dead' };
    const key = live.keyOf('dead', 'k');

    const before = await redisNow();
    expect((await new ConcurrencyLimit({ ...options, store: dead }).take('k')).allowed).toBe(true);
    const after = await redisNow();
    // Its lease: one unit, expiring inFlightTtlMs after the take (in Redis's clock).
    const held = await admin.zRangeWithScores(key, 0, -1);
    expect(held).toHaveLength(1);
    expect(held[0]?.score).toBeGreaterThanOrEqual(before + inFlightTtlMs);
    expect(held[0]?.score).toBeLessThanOrEqual(after + inFlightTtlMs);

    // Steady traffic on the key, which a TTL renewed at each take would keep alive forever.
    const limiter = new ConcurrencyLimit({ ...options, store: live });
    const remaining: number[] = [];
    while (remaining.at(-1) !== 1 && remaining.length < 500) {
      const slot = await limiter.acquire('k');
      expect(slot.result.allowed).toBe(true);
      remaining.push(slot.result.remaining);
      await sleep(10);
      await slot.refund();
    }
    // Held by the dead process at first, then free: every take since finds both slots.
    expect(remaining.at(-1)).toBe(1);
    expect(await admin.zCard(key)).toBe(0);
    expect(await admin.exists(key)).toBe(0);
  });

  it('the mock server: a concurrency slot survives a take answered late (the reported leak)', async () => {
    const { client, store } = await faultyStore({ timeoutMs: 100 });
    const server = await createMockServer({
      store,
      routes: [
        {
          path: '/r',
          failMode: 'open',
          limits: [{ algorithm: 'concurrency', limit: 2, key: 'global', name: 'slots' }],
        },
      ],
    });
    client.faults.push({ slowReply: 300 });
    // Decided on the local share while Redis's answer is late.
    expect((await fetch(`${server.url}/r`)).status).toBe(200);
    await client.answers[0];
    await until(() => store.health().givenBack === 1, 'the late take given back');
    // Redis is back (a call probes it: two requests at once would race the probe, the second
    // decided locally while it is in flight).
    await new ConcurrencyLimit({ limit: 1, store, name: 'probe' }).peek('k');
    expect(store.health().available).toBe(true);
    // Two at once still fit: the hiccup holds no slot. Response bodies are read only after both
    // were admitted, so both are in flight together.
    const both = await Promise.all([fetch(`${server.url}/r`), fetch(`${server.url}/r`)]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    await Promise.all(both.map((r) => r.text()));
    expect(server.stats()).toMatchObject({ admitted: 3, rejected: 0, degraded: 1 });
    await server.close();
  });
});
