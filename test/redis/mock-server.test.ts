/**
 * Several mock servers sharing one Redis enforce one limit; when Redis pauses, each route fails as
 * configured and comes back to the shared state afterwards. Real HTTP on loopback, the real Redis.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisStore } from '../../src/redis/index.js';
import {
  createMockServer,
  type LimitConfig,
  type MockServer,
  type StoreErrorEvent,
} from '../../src/server/index.js';
import { connect, deleteKeys, describeRedis, uniquePrefix } from './helpers.js';

const INSTANCES = 3;

describeRedis('mock servers sharing Redis', () => {
  const prefix = uniquePrefix('mock-server');
  const clients: RedisClientType[] = [];

  beforeAll(async () => {
    for (let i = 0; i < INSTANCES; i++) clients.push(await connect());
  });
  afterAll(async () => {
    await deleteKeys(clients[0] as RedisClientType, prefix);
    for (const client of clients) client.destroy();
  });

  async function fleet(limit: LimitConfig, round: string): Promise<MockServer[]> {
    return Promise.all(
      clients.map((client) =>
        createMockServer({
          store: new RedisStore(client, { prefix: `${prefix}${round}:`, timeoutMs: 5000 }),
          routes: [{ path: '/x', limits: [{ ...limit, key: 'global' }] }],
        }),
      ),
    );
  }

  const limits: LimitConfig[] = [
    { algorithm: 'fixed-window', limit: 10, windowMs: 1e12 },
    { algorithm: 'sliding-log', limit: 10, windowMs: 1e9 },
    { algorithm: 'token-bucket', capacity: 10, refillPerSecond: 0.001 },
    { algorithm: 'gcra', rate: 0.001, burst: 9 },
  ];
  for (const limit of limits) {
    it(`${limit.algorithm}: ${INSTANCES} servers admit exactly 10 of 60 simultaneous requests, 5 rounds`, async () => {
      for (let round = 0; round < 5; round++) {
        const servers = await fleet(limit, `${limit.algorithm}-${round}`);
        const responses = await Promise.all(
          Array.from({ length: 60 }, (_, i) => fetch(`${servers[i % INSTANCES]?.url}/x`)),
        );
        const statuses = responses.map((r) => r.status);
        expect(statuses.filter((s) => s === 200)).toHaveLength(10);
        expect(statuses.filter((s) => s === 429)).toHaveLength(50);
        const admitted = servers.reduce((sum, s) => sum + s.stats().admitted, 0);
        expect(admitted).toBe(10);
        await Promise.all(servers.map((s) => s.close()));
      }
    });
  }

  it('Redis paused: the open route decides on its local share, the closed one answers 503, both come back', async () => {
    const store = new RedisStore(clients[0] as RedisClientType, {
      prefix: `${prefix}outage:`,
      timeoutMs: 100,
      recheckMs: 300,
    });
    const minute: LimitConfig = { algorithm: 'fixed-window', limit: 100, windowMs: 3_600_000 };
    const server = await createMockServer({
      store,
      routes: [
        { path: '/open', limits: [minute], failMode: 'open', failOpenShare: 0.03 },
        { path: '/closed', limits: [minute], failMode: 'closed' },
      ],
    });
    const events: StoreErrorEvent[] = [];
    server.on('store-error', (event) => events.push(event));
    const get = async (path: string) => (await fetch(`${server.url}${path}`)).status;

    expect([await get('/open'), await get('/closed')]).toEqual([200, 200]);
    await clients[1]?.sendCommand(['CLIENT', 'PAUSE', '1000', 'ALL']);
    const during = { open: [] as number[], closed: [] as number[] };
    // Ten requests take well under the pause: one waits for the timeout, the rest fail fast or probe.
    for (let i = 0; i < 5; i++) {
      during.open.push(await get('/open'));
      during.closed.push(await get('/closed'));
    }
    // The local share of the open route is 3 (3% of 100): three admitted, then 429.
    expect(during.open).toEqual([200, 200, 200, 429, 429]);
    expect(during.closed).toEqual(Array(5).fill(503));
    const stats = server.stats();
    expect(stats.routes['* /open']).toMatchObject({ degraded: 5, admitted: 4, rejected: 2 });
    expect(stats.routes['* /closed']).toMatchObject({ failedClosed: 5, admitted: 1 });
    expect(new Set(events.map((e) => `${e.route} ${e.operation} ${e.failMode}`))).toEqual(
      new Set(['* /open take open', '* /closed take closed']),
    );

    // Back on the shared state, which still holds the requests Redis decided before the pause.
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      await sleep(20);
      status = await get('/closed');
    }
    expect(status).toBe(200);
    const open = await fetch(`${server.url}/open`);
    expect(open.status).toBe(200);
    expect(open.headers.get('ratelimit')).toMatch(/r=9[0-9]/);
    const after = server.stats();
    expect(after.degraded).toBe(5);
    await server.close();
  });
});
