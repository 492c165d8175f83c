/**
 * RedisStore as the client's `StateStore`, against the real Redis: read-modify-writes from several
 * connections never lose an update, a process batches its own updates of a key, TTLs and deletes.
 * (What it does when Redis pauses is in `outage.test.ts`.)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Transaction } from '../../src/client/host/store.js';
import { RedisStore } from '../../src/redis/index.js';
import { FixedWindow } from '../../src/server/index.js';
import {
  type Connection,
  connect,
  connectAdmin,
  deleteKeys,
  describeRedis,
  uniquePrefix,
} from './helpers.js';

interface Counter {
  n: number;
}

const increment: Transaction<Counter, number> = {
  run: (state) => {
    const next = { n: (state?.n ?? 0) + 1 };
    return [next, next.n];
  },
};

describeRedis('RedisStore as a StateStore', (kind) => {
  const prefix = uniquePrefix('state');
  /** Connections of the client under test. */
  const clients: Connection[] = [];
  /** The test's own connection, which writes garbage and reads what the stores wrote. */
  let admin: RedisClientType;
  /** The client of the `i`th connection. */
  const client = (i: number) => (clients[i] as Connection).client;

  beforeAll(async () => {
    admin = await connectAdmin();
    for (let i = 0; i < 4; i++) clients.push(await connect(kind));
  });
  afterAll(async () => {
    await deleteKeys(admin, prefix);
    admin.destroy();
    for (const connection of clients) await connection.close();
  });

  it('loses no update when four connections increment one key 200 times each, all at once', async () => {
    const stores = clients.map(({ client }) => new RedisStore(client, { prefix, timeoutMs: 5000 }));
    const results = await Promise.all(
      stores.flatMap((store) =>
        Array.from({ length: 200 }, () => store.update('counter', increment, 60_000)),
      ),
    );
    // Every increment saw a distinct count: each ran on the state the one before it left.
    expect(new Set(results).size).toBe(800);
    expect(Math.max(...results)).toBe(800);
    const final = await (stores[0] as RedisStore).update<Counter, number>(
      'counter',
      { run: (s) => [s, s?.n ?? 0] },
      60_000,
    );
    expect(final).toBe(800);
    const health = stores.map((s) => s.health());
    // They did conflict, and every conflict was retried on the newer state.
    expect(health.reduce((sum, h) => sum + h.conflicts, 0)).toBeGreaterThan(0);
    expect(health.every((h) => h.localUpdates === 0 && h.available)).toBe(true);
  });

  it('batches a process’s own updates of a key: fewer round trips than updates, no conflicts', async () => {
    const store = new RedisStore(client(0), { prefix, timeoutMs: 5000 });
    const results = await Promise.all(
      Array.from({ length: 100 }, () => store.update('batched', increment, 60_000)),
    );
    expect(results).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const health = store.health();
    expect(health.conflicts).toBe(0);
    expect(health.succeeded).toBeLessThan(100);
  });

  it('a state key holding garbage or another type: reported, read as no state, replaced by the next write', async () => {
    const store = new RedisStore(client(1), { prefix, timeoutMs: 5000 });
    const reported: string[] = [];
    store.on('store-error', (error) => reported.push(error.key));
    const garbage: [string, (key: string) => Promise<unknown>][] = [
      ['a string', (key) => admin.set(key, 'not a hash')],
      ['a list', (key) => admin.rPush(key, 'x')],
      ['a hash whose JSON does not parse', (key) => admin.hSet(key, { v: 'x.1', s: '{"n":' })],
      ['a hash with a version and no state', (key) => admin.hSet(key, { v: 'x.1' })],
    ];
    for (const [i, [what, write]] of garbage.entries()) {
      const name = `garbage-${i}`;
      const key = `${prefix}state:{${name}}`;
      await write(key);
      // The update runs on no state, once, and its result is written over the garbage.
      expect(await store.update(name, increment, 30_000), what).toBe(1);
      expect(await admin.hGet(key, 's'), what).toBe('{"n":1}');
      expect(await store.update(name, increment, 30_000), what).toBe(2);
      expect(reported, what).toContain(key);
    }
    // A read of garbage is no state too.
    await admin.set(`${prefix}state:{garbage-read}`, 'not a hash');
    expect(await store.get('garbage-read')).toBeUndefined();
    const health = store.health();
    expect(health).toMatchObject({ available: true, localUpdates: 0, failed: 0 });
    expect(health.corrupt).toBeGreaterThanOrEqual(garbage.length + 1);
  });

  it('keeps a state for its TTL, and deletes it', async () => {
    const store = new RedisStore(client(1), { prefix, timeoutMs: 5000 });
    await store.update('ttl', increment, 30_000);
    const key = `${prefix}state:{ttl}`;
    const ttl = await admin.pTTL(key);
    expect(ttl).toBeGreaterThan(25_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
    expect(await admin.hGet(key, 's')).toBe('{"n":1}');
    await store.delete('ttl');
    expect(await admin.exists(key)).toBe(0);
    expect(await store.update('ttl', increment, 30_000)).toBe(1);
  });

  it('rejects only the update whose transaction throws', async () => {
    const store = new RedisStore(client(2), { prefix, timeoutMs: 5000 });
    const broken: Transaction<Counter, number> = {
      run: () => {
        throw new Error('a bug in a transaction');
      },
    };
    const [a, b, c] = await Promise.allSettled([
      store.update('throws', increment, 60_000),
      store.update('throws', broken, 60_000),
      store.update('throws', increment, 60_000),
    ]);
    expect(a).toEqual({ status: 'fulfilled', value: 1 });
    expect(b).toMatchObject({ status: 'rejected', reason: { message: 'a bug in a transaction' } });
    expect(c).toEqual({ status: 'fulfilled', value: 2 });
  });

  it('a write Redis applied but answered too late is not applied again by the replay', async () => {
    // The real client, with its replies held back past the store's timeout while `slow` is set:
    // Redis applies each write, and the store sees a timeout.
    // The timeout leaves room for a loaded machine (at 50 ms a plain write timed out once in CI,
    // and the counts below were off by one); the held replies come well past it.
    let slow = false;
    const late = (reply: Promise<unknown>) =>
      slow ? reply.then((value) => sleep(1000).then(() => value)) : reply;
    const lateClient = (clients[3] as Connection).intercept((call) => late(call.send()));
    const store = new RedisStore(lateClient, { prefix, timeoutMs: 400, recheckMs: 0 });
    for (let i = 0; i < 3; i++) await store.update('late', increment, 60_000);
    slow = true;
    // Timed out here (run locally, logged), applied on Redis all the same.
    expect(await store.update('late', increment, 60_000)).toBe(4);
    slow = false;
    await sleep(1100);
    // The next write learns that the logged update was applied, and does not replay it.
    expect(await store.update('late', increment, 60_000)).toBe(5);
    expect(JSON.parse((await admin.hGet(`${prefix}state:{late}`, 's')) as string)).toEqual({
      n: 5,
    });
    expect(store.health()).toMatchObject({ localUpdates: 1, replayed: 1, failed: 1 });
  });
  it('a late answer to the fate read does not make it replay a write Redis did apply', async () => {
    // One write applied on Redis but answered after the timeout; then the read that asks what
    // was applied is sent late too. A read carries no deadline, so it still answers truly, and
    // the update is not counted twice.
    let mode: 'normal' | 'reply-late' | 'send-late' = 'normal';
    const faulty = (clients[2] as Connection).intercept(async (call) => {
      // An EVAL follows a NOSCRIPT: part of the call the mode was for.
      if (call.command === 'EVAL') return call.send();
      const current = mode;
      mode = 'normal';
      if (current === 'send-late') await sleep(140);
      const reply = call.send();
      if (current === 'reply-late') return reply.then((value) => sleep(300).then(() => value));
      return reply;
    });
    const store = new RedisStore(faulty, { prefix, timeoutMs: 200, recheckMs: 0 });
    expect(await store.update('fate', increment, 60_000)).toBe(1);
    mode = 'reply-late';
    expect(await store.update('fate', increment, 60_000)).toBe(2); // timed out, ran locally
    await sleep(400);
    mode = 'send-late';
    expect(await store.update('fate', increment, 60_000)).toBe(3);
    expect(JSON.parse((await admin.hGet(`${prefix}state:{fate}`, 's')) as string)).toEqual({
      n: 3,
    });
  });

  it('keeps limiter keys apart from client state, whatever the limiter is called', async () => {
    const store = new RedisStore(client(1), { prefix, timeoutMs: 5000 });
    await store.update('limited-client:https://x.example', increment, 60_000);
    const limiter = new FixedWindow({ limit: 5, windowMs: 60_000, name: 'state', store });
    await limiter.take('limited-client:https://x.example');
    expect(store.keyOf('state', 'limited-client:https://x.example')).not.toBe(
      `${prefix}state:{limited-client:https://x.example}`,
    );
    expect(await store.get<Counter>('limited-client:https://x.example')).toEqual({ n: 1 });
    expect(await store.update('limited-client:https://x.example', increment, 60_000)).toBe(2);
  });

  it('get reads the shared state without renewing its expiry (what stats() relies on)', async () => {
    const store = new RedisStore(client(0), { prefix, timeoutMs: 5000 });
    await store.update('peeked', increment, 60_000);
    await store.update('peeked', increment, 60_000);
    const redisKey = `${prefix}state:{peeked}`;
    await admin.pExpire(redisKey, 30_000);
    expect(await store.get<Counter>('peeked')).toEqual({ n: 2 });
    const ttl = await admin.pTTL(redisKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(30_000);
    expect(await store.get('never-written')).toBeUndefined();
  });
});
