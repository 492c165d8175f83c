/**
 * Several mock servers sharing one Redis enforce one limit, over real HTTP on loopback and the
 * real Redis. (What they do when Redis pauses is in `outage.test.ts`.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisStore } from '../../src/redis/index.js';
import { createMockServer, type LimitConfig, type MockServer } from '../../src/server/index.js';
import { type Connection, cleanUp, connect, describeRedis, uniquePrefix } from './helpers.js';

const INSTANCES = 3;

describeRedis('mock servers sharing Redis', (kind) => {
  const prefix = uniquePrefix('mock-server');
  const clients: Connection[] = [];

  beforeAll(async () => {
    for (let i = 0; i < INSTANCES; i++) clients.push(await connect(kind));
  });
  afterAll(() => cleanUp(prefix, clients));

  async function fleet(limit: LimitConfig, round: string): Promise<MockServer[]> {
    return Promise.all(
      clients.map(({ client }) =>
        createMockServer({
          store: new RedisStore(client, { prefix: `${prefix}${round}:`, timeoutMs: 5000 }),
          routes: [{ path: '/x', limits: [{ ...limit, key: 'global' }] }],
        }),
      ),
    );
  }

  it(`an OpenAI-style route: ${INSTANCES} servers admit exactly 12 of 60 simultaneous 50-token calls under 600 tokens, and the 48 refused spend no request`, async () => {
    const servers = await Promise.all(
      clients.map(({ client }) =>
        createMockServer({
          store: new RedisStore(client, { prefix: `${prefix}openai:`, timeoutMs: 5000 }),
          routes: [
            {
              method: 'POST',
              path: '/v1/chat/completions',
              headers: 'openai',
              limits: [
                { algorithm: 'fixed-window', limit: 100, windowMs: 1e12, key: 'global' },
                {
                  algorithm: 'fixed-window',
                  limit: 600,
                  windowMs: 1e12,
                  key: 'global',
                  unit: 'tokens',
                  cost: { json: 'max_tokens' },
                },
              ],
            },
          ],
        }),
      ),
    );
    const chat = (server: MockServer | undefined, maxTokens: number) =>
      fetch(`${server?.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ max_tokens: maxTokens }),
      });
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => chat(servers[i % INSTANCES], 50)),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(12);
    expect(statuses.filter((s) => s === 429)).toHaveLength(48);
    const last = await chat(servers[0], 1);
    expect(last.status).toBe(429);
    expect(last.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(last.headers.get('x-ratelimit-remaining-requests')).toBe('88');
    await Promise.all(servers.map((s) => s.close()));
  });

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
});
