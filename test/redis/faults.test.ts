/**
 * RedisStore when single calls go wrong, against the real Redis (no `CLIENT PAUSE`: other users
 * of the Redis are not slowed): a release that never comes (its process died). No concurrency slot
 * is lost for longer than `inFlightTtlMs`.
 *
 * Waits poll the state for at most a few seconds; no test asserts how long one call took.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisStore } from '../../src/redis/index.js';
import { ConcurrencyLimit } from '../../src/server/index.js';
import { connect, deleteKeys, describeRedis, uniquePrefix } from './helpers.js';

describeRedis('RedisStore when single calls go wrong', () => {
  const prefix = uniquePrefix('faults');
  let admin: RedisClientType;
  let real: RedisClientType;

  beforeAll(async () => {
    admin = await connect();
    real = await connect();
  });
  afterAll(async () => {
    await deleteKeys(admin, prefix);
    admin.destroy();
    real.destroy();
  });

  /** Redis's clock, in epoch milliseconds. */
  async function redisNow(): Promise<number> {
    const [seconds, micros] = await admin.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  it('a slot whose release never comes (its process died) comes back after inFlightTtlMs, under steady traffic', async () => {
    const inFlightTtlMs = 500;
    const live = new RedisStore(real, { prefix, timeoutMs: 5000, inFlightTtlMs });
    const dead = new RedisStore(admin, { prefix, timeoutMs: 5000, inFlightTtlMs });
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
});
