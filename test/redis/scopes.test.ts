/**
 * Many budgets per host across processes (issue 26): what one process learns of a host's scopes
 * (which route is counted against which budget, and each budget's state) reaches another through
 * Redis, so the other neither sends a spent search nor holds its ordinary calls. Each "process"
 * has its own connection and store; real HTTP against the mock server's GitHub fields.
 */
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isRateLimitError, LimitedClient } from '../../src/index.js';
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

const github = (path: string, limit: number, resource: string) => ({
  path,
  headers: 'github' as const,
  limits: [{ algorithm: 'fixed-window' as const, limit, windowMs: 3_600_000, resource }],
});

describeRedis('scopes shared through Redis', (kind) => {
  const prefix = uniquePrefix('scopes');
  const connections: Connection[] = [];
  let admin: RedisClientType;
  let server: MockServer;

  beforeAll(async () => {
    admin = await connectAdmin();
    for (let i = 0; i < 2; i++) connections.push(await connect(kind));
    server = await createMockServer({
      routes: [github('/search/*', 2, 'search'), github('*', 5000, 'core')],
    });
  });
  afterAll(async () => {
    await server.close();
    await deleteKeys(admin, prefix);
    admin.destroy();
    for (const c of connections) await c.close();
  });

  const store = (i: number) =>
    new RedisStore((connections[i] as Connection).client, { prefix: `${prefix}:` });

  it('a second process finds the search route spent, and its core calls free', async () => {
    const options = { maxRetryAfterMs: 1000, coldStart: false as const };
    const first = new LimitedClient(server.url, { ...options, store: store(0) });
    for (let i = 0; i < 2; i++) expect((await first.get(`/search/q${i}`)).status).toBe(200);
    const second = new LimitedClient(server.url, { ...options, store: store(1) });
    // Its pipeline reads the routes the first shared as it starts; the read is asynchronous with
    // Redis, so the first call it makes goes by a route of core, as users' first calls do.
    expect((await second.get('/repos/a/b')).status).toBe(200);
    const refusal = await second.get('/search/q9').catch((error: unknown) => error);
    expect(isRateLimitError(refusal)).toBe(true);
    expect((await second.get('/repos/a/c')).status).toBe(200);
    expect(server.stats()).toMatchObject({ admitted: 4, rejected: 0 });
    const scopes = second
      .stats()
      .hosts[server.url]?.scopes.map((s) => s.name)
      .sort();
    expect(scopes).toEqual(['github:core', 'github:search']);
    await first.close();
    await second.close();
  });
});
