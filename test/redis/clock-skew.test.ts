/**
 * Issue 24, item 3: processes sharing a host's state through Redis whose clocks disagree. The
 * moments recorded in the shared state (a hold's end, a refill) are on Redis's clock
 * (`RedisStore.now`), not on the writer's: a process whose clock is an hour (or 30 s) ahead, told
 * `Retry-After: 1`, holds a correctly set process for about a second, not for an hour (or 31 s).
 * Over loopback and the real Redis; each "process" has its own connection, store and client.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LimitedClient } from '../../src/index.js';
import { RedisStore } from '../../src/redis/index.js';
import { type Clock, systemClock } from '../../src/shared/clock.js';
import { type ScriptedServer, scriptedServer } from '../hostile/helpers.js';
import { type Connection, cleanUp, connect, describeRedis, uniquePrefix } from './helpers.js';

/** The real clock, `aheadMs` ahead. */
const ahead = (aheadMs: number): Clock => ({
  now: () => Date.now() + aheadMs,
  sleep: systemClock.sleep,
  random: systemClock.random,
});

describeRedis('processes whose clocks disagree, sharing a host through Redis', (kind) => {
  const prefix = uniquePrefix('skew');
  const clients: Connection[] = [];
  let server: ScriptedServer;
  /** Whether the next request is refused with `Retry-After: 1`. */
  let refuse = false;

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) clients.push(await connect(kind));
    server = await scriptedServer(() => {
      if (!refuse) return { status: 200, body: 'ok' };
      refuse = false;
      return { status: 429, headers: [['retry-after', '1']] };
    });
  });
  afterAll(async () => {
    await server.close();
    await cleanUp(prefix, clients);
  });

  it.each([
    ['an hour', 3_600_000],
    ['30 s', 30_000],
  ])(
    'a process %s ahead told Retry-After: 1 holds the others about a second',
    async (name, skewMs) => {
      const storePrefix = `${prefix}${skewMs}:`;
      const options = { retry: false as const, coldStart: false as const };
      const skewed = new LimitedClient(server.url, {
        ...options,
        clock: ahead(skewMs),
        store: new RedisStore((clients[0] as Connection).client, { prefix: storePrefix }),
      });
      const correct = new LimitedClient(server.url, {
        ...options,
        store: new RedisStore((clients[1] as Connection).client, { prefix: storePrefix }),
      });
      refuse = true;
      expect((await skewed.get('/a')).status).toBe(429);
      const held: (number | undefined)[] = [];
      correct.on('held', (event) => held.push(event.waitMs));
      // Before: RateLimitError (held for an hour, past maxRetryAfterMs), or a wait of 31 s.
      const response = await correct.get('/b');
      expect(response.status, name).toBe(200);
      // The one wait: what is left of the second and its jitter (at most 5 %), read from the state.
      expect(held).toHaveLength(1);
      expect(held[0]).toBeGreaterThan(0);
      expect(held[0]).toBeLessThanOrEqual(1050);
      await skewed.close();
      await correct.close();
    },
  );
});
