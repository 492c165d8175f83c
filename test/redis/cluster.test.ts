/**
 * RedisStore on a real Redis Cluster, through each client's cluster (node-redis's `createCluster`,
 * ioredis's `Cluster`), when `REDIS_CLUSTER_NODES` names its nodes
 * (`redis://127.0.0.1:7101,redis://127.0.0.1:7102`); skipped with a reason otherwise (CI has a
 * single node). Every call is routed by its key; nodes that never saw the function library answer
 * "Function not found" and get it by `FUNCTION LOAD` (on the key's node with node-redis, on every
 * master with ioredis; nodes that never saw a script answer `NOSCRIPT` and get it by `EVAL`); a
 * limit shared by clients on different connections stays exact.
 */
import { randomUUID } from 'node:crypto';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/client/host/store.js';
import { RedisStore } from '../../src/redis/index.js';
import { LIMITER_LIBRARY } from '../../src/redis/lua/index.js';
import { FixedWindow, Gcra, type RateLimiter, TokenBucket } from '../../src/server/index.js';
import { type ClientKind, type Connection, kindsFor } from './helpers.js';

const NODES = process.env.REDIS_CLUSTER_NODES?.split(',').filter(Boolean) ?? [];

if (NODES.length === 0) {
  console.warn(
    'Redis Cluster tests skipped: REDIS_CLUSTER_NODES is not set (e.g. redis://127.0.0.1:7101,redis://127.0.0.1:7102).',
  );
}

/** The suite, once per client (its three cluster connections of that client). */
function clusterSuite(kind: ClientKind) {
  const prefix = `lc-test:cluster:${randomUUID().slice(0, 8)}:`;
  type Cluster = ReturnType<typeof createCluster>;
  /** The test's own cluster connection (node-redis 5): it looks at the nodes and cleans up. */
  let admin: Cluster;
  /** Cluster connections of the client under test. */
  const clusters: Connection[] = [];

  beforeAll(async () => {
    admin = createCluster({ rootNodes: NODES.map((url) => ({ url })) });
    admin.on('error', () => {});
    await admin.connect();
    for (let i = 0; i < 3; i++) clusters.push(await kind.connectCluster(NODES));
  });
  afterAll(async () => {
    for (const node of admin.masters) {
      const client = await admin.nodeClient(node);
      for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
        for (const key of keys) await admin.del(key);
      }
    }
    admin.destroy();
    for (const c of clusters) await c.close();
  });

  it('decides exactly on keys spread over every node, through three cluster clients', async () => {
    const stores = clusters.map((c) => new RedisStore(c.client, { prefix, timeoutMs: 5000 }));
    const makers: ((store: RedisStore) => RateLimiter)[] = [
      (store: RedisStore) => new FixedWindow({ limit: 5, windowMs: 1e12, store, name: 'fw' }),
      (store: RedisStore) =>
        new TokenBucket({ capacity: 5, refillPerSecond: 0.001, store, name: 'tb' }),
      (store: RedisStore) => new Gcra({ rate: 0.001, burst: 4, store, name: 'gcra' }),
    ];
    const slots = new Set<string>();
    for (const make of makers) {
      const limiters = stores.map(make);
      for (let k = 0; k < 30; k++) {
        const key = `user-${k}`;
        const results = await Promise.all(
          Array.from({ length: 15 }, (_, i) => (limiters[i % 3] as RateLimiter).take(key)),
        );
        expect(results.filter((r) => r.allowed)).toHaveLength(5);
        const redisKey = stores[0]?.keyOf('fw', key) as string;
        slots.add(
          String(await admin.sendCommand(redisKey, true, ['CLUSTER', 'KEYSLOT', redisKey])),
        );
      }
    }
    // The hash tag is the client key: thirty keys spread over (nearly) thirty slots.
    expect(slots.size).toBeGreaterThan(20);
  });

  it('loads the function library on each node that lacks it (a fresh node, a FUNCTION DELETE)', async () => {
    for (const node of admin.masters) {
      const client = await admin.nodeClient(node);
      await client.sendCommand(['FUNCTION', 'DELETE', LIMITER_LIBRARY.name]).catch(() => {});
    }
    const store = new RedisStore((clusters[0] as Connection).client, { prefix, timeoutMs: 5000 });
    const limiter = new TokenBucket({ capacity: 2, refillPerSecond: 0.001, store, name: 'fresh' });
    for (let k = 0; k < 30; k++) {
      const results = [];
      for (let i = 0; i < 3; i++) results.push((await limiter.take(`fresh-${k}`)).allowed);
      expect(results).toEqual([true, true, false]);
    }
    for (const node of admin.masters) {
      const client = await admin.nodeClient(node);
      const listed = (await client.sendCommand([
        'FUNCTION',
        'LIST',
        'LIBRARYNAME',
        LIMITER_LIBRARY.name,
      ])) as unknown[];
      expect(listed, `${node.host}:${node.port}`).toHaveLength(1);
    }
    expect(store.health()).toMatchObject({ available: true, failed: 0 });
  });

  it('keeps client state (two keys of one slot per update) without losing an update', async () => {
    const stores = clusters.map((c) => new RedisStore(c.client, { prefix, timeoutMs: 5000 }));
    const increment: Transaction<{ n: number }, number> = {
      run: (state) => {
        const next = { n: (state?.n ?? 0) + 1 };
        return [next, next.n];
      },
    };
    for (const host of ['https://a.example', 'https://b.example', 'https://c.example']) {
      const results = await Promise.all(
        stores.flatMap((store) =>
          Array.from({ length: 50 }, () =>
            store.update(`limited-client:${host}`, increment, 60_000),
          ),
        ),
      );
      expect(Math.max(...results)).toBe(150);
    }
    expect(stores.every((s) => s.health().localUpdates === 0)).toBe(true);
  });
}

if (NODES.length > 0) {
  for (const kind of kindsFor('full')) {
    describe(`RedisStore on Redis Cluster (${kind.name})`, () => clusterSuite(kind));
  }
} else {
  describe.skip('RedisStore on Redis Cluster', () =>
    clusterSuite(kindsFor('full')[0] as ClientKind));
}
