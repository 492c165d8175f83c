/**
 * Issue 24, item 4: the shared client state is checked before anything reads it. JSON of the wrong
 * shape in a host's state key (the realistic cause: two versions of the package sharing one Redis
 * in a rolling deploy), a state of another format, one nested 100,000 deep, one past the size
 * bound: each is reported (`store-error`, `health().corrupt`), read as no state and written over,
 * and the call goes as it would to a new host. A moment past its bound is brought back to it. A
 * field this version does not know (a later release of the same format) is dropped, not the state.
 * Over loopback against the mock server, and the real Redis.
 */
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STATE_VERSION } from '../../src/client/rules/host-rules.js';
import { isRateLimitError, LimitedClient } from '../../src/index.js';
import { RedisStore } from '../../src/redis/index.js';
import { MAX_STATE_CHARS } from '../../src/redis/shared-state.js';
import { createMockServer, type MockServer } from '../../src/server/index.js';
import {
  type Connection,
  connect,
  connectAdmin,
  deleteKeys,
  describeRedis,
  uniquePrefix,
} from './helpers.js';

const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const blind = (fields: string) => `{"v":${STATE_VERSION},"mode":"blind","seq":3${fields}}`;

/** Values found in a host's state key, each with what it is. */
const WRONG: [string, string][] = [
  ['a number', '42'],
  ['a string', '"x"'],
  ['policies as an object', blind(',"quota":{"policies":{},"applied":0}')],
  ['a null policy', blind(',"quota":{"policies":[null],"applied":0}')],
  ['flights that are not a list', blind(',"flights":{"units":0,"requests":0,"list":5}')],
  ['a flight of two', blind(',"flights":{"units":1,"requests":1,"list":[[1,1]]}')],
  ['a state without a format (before it had one)', '{"mode":"blind","seq":3}'],
  ['a state of a later format', '{"v":2,"mode":"blind","seq":3}'],
  ['a state nested 100,000 deep', blind(`,"hold":${deep(100_000)}`)],
  [
    'JSON past the size bound',
    blind(`,"quota":{"policies":[],"applied":0,"x":"${'x'.repeat(MAX_STATE_CHARS)}"}`),
  ],
];

describeRedis('a host state key holding what this version does not write', (kind) => {
  const prefix = uniquePrefix('check');
  let admin: RedisClientType;
  let connection: Connection;
  let server: MockServer;

  beforeAll(async () => {
    admin = await connectAdmin();
    connection = await connect(kind);
    server = await createMockServer({ routes: [{ path: '*', limits: [] }] });
  });
  afterAll(async () => {
    await server.close();
    await deleteKeys(admin, prefix);
    admin.destroy();
    await connection.close();
  });

  /** A client and its store on `name`'s own prefix, with the value `json` in the host's key. */
  async function clientOn(name: string, json: string, options = {}) {
    const storePrefix = `${prefix}${name}:`;
    const key = `${storePrefix}state:{${server.url}}`;
    await admin.hSet(key, { v: 'other.1', s: json });
    const store = new RedisStore(connection.client, { prefix: storePrefix, timeoutMs: 5000 });
    const reported: string[] = [];
    store.on('store-error', (error) => reported.push(`${error.key}: ${error.message}`));
    const client = new LimitedClient(server.url, { store, ...options });
    return { key, store, reported, client };
  }

  it.each(WRONG)('%s: reported, read as none, written over; the calls go', async (what, json) => {
    const { key, store, reported, client } = await clientOn(what.replace(/\W/g, '-'), json);
    server.resetStats();
    // Before: every call rejected with a bare TypeError, nothing sent, nothing reported.
    expect((await client.get('/a')).status).toBe(200);
    expect((await client.get('/b')).status).toBe(200);
    expect(server.stats().admitted).toBe(2);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toContain(key);
    expect(store.health()).toMatchObject({ corrupt: 1, localUpdates: 0, available: true });
    // Written over with a state of this format.
    const written = JSON.parse((await admin.hGet(key, 's')) as string);
    expect(written).toMatchObject({ v: STATE_VERSION, seq: 2 });
    // stats() reads it again (checked too): no throw, no unhandled rejection.
    client.stats();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(client.stats().hosts[server.url]?.requests).toBe(2);
    await client.close();
  });

  it('reads a state of exactly the size bound, not one character more', async () => {
    const head = `{"v":${STATE_VERSION},"mode":"blind","seq":3,"quota":{"policies":[{"key":"k","name":"`;
    const tail = '","probes":0}],"applied":0}}';
    const at = (length: number) =>
      `${head}${'n'.repeat(length - head.length - tail.length)}${tail}`;
    expect(at(MAX_STATE_CHARS)).toHaveLength(MAX_STATE_CHARS);
    const { key, store, reported } = await clientOn('at-the-bound', at(MAX_STATE_CHARS));
    const read = await store.get<{ quota: { policies: { name: string }[] } }>(server.url);
    expect(read?.quota.policies[0]?.name).toHaveLength(MAX_STATE_CHARS - head.length - tail.length);
    expect(reported).toEqual([]);
    await admin.hSet(key, { v: 'other.2', s: at(MAX_STATE_CHARS + 1) });
    expect(await store.get(server.url)).toBeUndefined();
    expect(reported).toHaveLength(1);
    expect(store.health().corrupt).toBe(1);
  });

  it('a hold until the year 275760 holds for maxHoldMs at most, then one probe goes', async () => {
    const { client } = await clientOn('far-hold', blind(',"hold":{"until":8640000000000000}'), {
      maxRetryAfterMs: 100,
    });
    server.resetStats();
    const refusal = await client.get('/a').catch((error: unknown) => error);
    expect(isRateLimitError(refusal)).toBe(true);
    // maxHoldMs is max(maxRetryAfterMs, 1 s); the jitter adds 1 s at most. Before: 8.6e15 ms.
    const { retryAfterMs } = refusal as { retryAfterMs: number };
    expect(retryAfterMs).toBeGreaterThan(1000);
    expect(retryAfterMs).toBeLessThanOrEqual(2001);
    expect(server.stats().admitted).toBe(0);
    await client.close();
  });

  it("a later version's field is dropped, not the state: its hold still holds", async () => {
    // A rolling deploy: a newer writer of the same format added a field at the top and in the hold.
    const until = Date.now() + 60_000;
    const json = blind(`,"later":{"x":1},"hold":{"until":${until},"laterToo":2}`);
    const { reported, store, client } = await clientOn('later-field', json, {
      maxRetryAfterMs: 100,
    });
    server.resetStats();
    const refusal = await client.get('/a').catch((error: unknown) => error);
    // Before: the state was refused as corrupt and the call went to the host.
    expect(isRateLimitError(refusal)).toBe(true);
    expect(server.stats().admitted).toBe(0);
    expect(reported).toEqual([]);
    expect(store.health().corrupt).toBe(0);
    await client.close();
  });
});
