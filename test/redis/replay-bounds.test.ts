/**
 * Issue 24, item 5: what a process keeps for replay during a Redis outage is bounded in total, not
 * per host: a fresh partition per call made it grow by 3.4 KB a call (273 MB over 74,000 calls in
 * 40 s). `maxReplay` bounds the updates kept over every host; the updates of a host whose pipeline
 * the client dropped (`maxHosts`) go with it; when Redis is back, hosts are replayed
 * `REPLAY_CONCURRENCY` at a time, not all at once. Over loopback and the real Redis, through a
 * client whose connection the test takes down (no pause of the shared Redis).
 */
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Transaction } from '../../src/client/host/store.js';
import { wrapFetch } from '../../src/index.js';
import { RedisStore } from '../../src/redis/index.js';
import { REPLAY_CONCURRENCY } from '../../src/redis/shared-state.js';
import { createMockServer, type MockServer } from '../../src/server/index.js';
import {
  type Connection,
  connect,
  connectAdmin,
  deleteKeys,
  describeRedis,
  uniquePrefix,
} from './helpers.js';

/**
 * The real client behind a switch: while `down`, it says it is not connected (calls fail at once,
 * as during a reconnection); it counts the scripts in flight on the keys `watched` picks.
 */
function switchable(real: Connection, watched: (key: string) => boolean) {
  const seen = { down: false, inFlight: 0, maxInFlight: 0, calls: 0 };
  const client = real.intercept(
    (call) => {
      const key = call.keys[0];
      const reply = call.send();
      if (key === undefined || !watched(key)) return reply;
      seen.calls++;
      seen.inFlight++;
      seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
      return reply.finally(() => {
        seen.inFlight--;
      });
    },
    () => !seen.down,
  );
  return { client, seen };
}

/** Waits until `done()` holds, checking every 20 ms, 5 s at most. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !done(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(done()).toBe(true);
}

describeRedis('the replay log of a Redis outage with many hosts', (kind) => {
  const prefix = uniquePrefix('replay');
  /** The test's own connection, which reads what was replayed. */
  let admin: RedisClientType;
  /** The client under test, behind the switch. */
  let real: Connection;
  let server: MockServer;

  beforeAll(async () => {
    admin = await connectAdmin();
    real = await connect(kind);
    server = await createMockServer({ routes: [{ path: '*', limits: [] }] });
  });
  afterAll(async () => {
    await server.close();
    await deleteKeys(admin, prefix);
    admin.destroy();
    await real.close();
  });

  /** A wrapFetch on its own store prefix, a fresh partition per call. */
  function crawler(name: string, storeOptions: object, clientOptions: object = {}) {
    const storePrefix = `${prefix}${name}:`;
    const { client, seen } = switchable(real, (key) => key.includes('#p'));
    const store = new RedisStore(client, { prefix: storePrefix, recheckMs: 0, ...storeOptions });
    let n = 0;
    const fetch = wrapFetch(globalThis.fetch, {
      store,
      coldStart: false,
      partition: () => `p${n++}`,
      ...clientOptions,
    });
    return { store, seen, fetch, storePrefix };
  }

  it('keeps maxReplay updates in all, then replays them a few hosts at a time', async () => {
    const { store, seen, fetch, storePrefix } = crawler('total', { maxReplay: 100 });
    // Redis's clock measured, then the outage: 300 calls, each its own partition.
    expect((await fetch(`${server.url}/warm`, { partition: 'warm' })).status).toBe(200);
    seen.down = true;
    for (let i = 0; i < 300; i++) expect((await fetch(`${server.url}/${i}`)).status).toBe(200);
    const during = store.health();
    // Two updates a call (admit, settle), each run locally; 100 kept. Before: all 600.
    expect(during.localUpdates).toBe(600);
    expect(during.pending).toBe(100);
    expect(during.dropped).toBe(500);
    // Back: the next call finds Redis up, and the 50 hosts kept are replayed, 4 at a time.
    seen.down = false;
    seen.calls = 0;
    expect((await fetch(`${server.url}/back`, { partition: 'back' })).status).toBe(200);
    await until(() => store.health().pending === 0);
    expect(store.health()).toMatchObject({ replayed: 100, dropped: 500, pending: 0 });
    expect(seen.calls).toBe(50);
    expect(seen.maxInFlight).toBeLessThanOrEqual(REPLAY_CONCURRENCY);
    // The last partitions of the outage are in Redis, each with its request, answered.
    const last = JSON.parse(
      (await admin.hGet(`${storePrefix}state:{${server.url}#p299}`, 's')) ?? '{}',
    );
    expect(last).toMatchObject({ seq: 1, flights: { requests: 0 } });
    await fetch.close();
  });

  it('drops the updates of the hosts whose pipelines maxHosts dropped', async () => {
    const { store, seen, fetch } = crawler('evicted', {}, { maxHosts: 10 });
    expect((await fetch(`${server.url}/warm`, { partition: 'warm' })).status).toBe(200);
    seen.down = true;
    for (let i = 0; i < 200; i++) expect((await fetch(`${server.url}/${i}`)).status).toBe(200);
    const { localUpdates, pending, dropped } = store.health();
    expect(localUpdates).toBe(400);
    // Only the ten pipelines kept keep their updates. Before: all 400.
    expect(pending).toBeLessThanOrEqual(2 * 10);
    expect(pending + dropped).toBe(400);
    seen.down = false;
    await fetch.close();
  });

  it('a local copy whose updates were all dropped is not the seed of the next outage', async () => {
    const { client, seen } = switchable(real, () => false);
    const store = new RedisStore(client, { prefix: `${prefix}stale:`, recheckMs: 0, maxReplay: 0 });
    const add: Transaction<{ n: number }, number> = {
      run: (state) => [{ n: (state?.n ?? 0) + 1 }, (state?.n ?? 0) + 1],
    };
    expect(await store.update('k', add, 60_000)).toBe(1);
    // An outage: three updates on the local copy, none kept for replay (maxReplay 0).
    seen.down = true;
    for (const n of [2, 3, 4]) expect(await store.update('k', add, 60_000)).toBe(n);
    expect(store.health()).toMatchObject({ dropped: 3, pending: 0 });
    // Back: the shared state never learned them.
    seen.down = false;
    expect(await store.update('k', add, 60_000)).toBe(2);
    // The next outage starts from the shared state seen last (2), not from the old copy (4).
    seen.down = true;
    expect(await store.update('k', add, 60_000)).toBe(3);
    seen.down = false;
  });
});
