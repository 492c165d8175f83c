/**
 * One limit across processes, both sides, with Redis:
 * 1. two mock server instances enforce one limit together (server side);
 * 2. two clients, as two processes would, share one client-side rate to an API (client side).
 *
 *   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/redis-shared-limit.ts
 *
 * Each "process" here has its own Redis connection and its own RedisStore, as separate processes
 * would; they share nothing but Redis.
 */

import { LimitedClient } from 'limited-client';
import { RedisStore } from 'limited-client/redis';
import { createMockServer } from 'limited-client/server';
import { createClient } from 'redis';

const url = process.env.REDIS_URL;
if (!url) {
  console.log('Set REDIS_URL (e.g. redis://127.0.0.1:6379) to run this example.');
  process.exit(0);
}
const prefix = `example:${Date.now()}:`;

/** A "process": its own connection to Redis, and a store on it. */
async function processStore() {
  const redis = await createClient({ url }).connect();
  return { redis, store: new RedisStore(redis, { prefix }) };
}

// 1. Two server instances, one limit: 5 requests a minute for everybody, whichever instance answers.
const a = await processStore();
const b = await processStore();
const config = (store: RedisStore) => ({
  store,
  routes: [
    {
      path: '/report',
      failMode: 'open' as const, // Redis down: each instance keeps a quarter of the limit
      limits: [
        { algorithm: 'fixed-window' as const, limit: 5, windowMs: 60_000, key: 'global' as const },
      ],
    },
  ],
});
const servers = [await createMockServer(config(a.store)), await createMockServer(config(b.store))];
const statuses = [];
for (let i = 0; i < 8; i++) statuses.push((await fetch(`${servers[i % 2]?.url}/report`)).status);
console.log(`two instances, one limit of 5: ${statuses.join(' ')}`);

// 2. Two clients share 10 requests a second to an API that allows 10 a second.
const api = await createMockServer({
  routes: [
    {
      path: '*',
      limits: [{ algorithm: 'token-bucket', capacity: 10, refillPerSecond: 10, key: 'global' }],
    },
  ],
});
const clients = [
  new LimitedClient(api.url, { rate: 10, burst: 5, store: a.store }),
  new LimitedClient(api.url, { rate: 10, burst: 5, store: b.store }),
];
const started = Date.now();
const responses = await Promise.all(
  Array.from({ length: 40 }, (_, i) => clients[i % 2]?.get(`/items/${i}`)),
);
const seconds = (Date.now() - started) / 1000;
const ok = responses.filter((r) => r?.status === 200).length;
console.log(
  `two clients, one rate of 10/s: ${ok} of 40 answered 200, ${api.stats().rejected} refused with 429, in ${seconds.toFixed(1)} s`,
);
console.log('Redis:', a.store.health());

for (const client of clients) await client.close();
for (const server of [...servers, api]) await server.close();
for await (const keys of a.redis.scanIterator({ MATCH: `${prefix}*` })) {
  if (keys.length > 0) await a.redis.del(keys);
}
a.redis.destroy();
b.redis.destroy();
