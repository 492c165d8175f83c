/**
 * Partitions: one host, two quotas. The mock server limits `/search` to 3 requests a minute and
 * `/items` to 100, as GitHub limits its `search` resource apart from `core`. With a partition per
 * route, the client learns each quota on its own: once search is spent, further searches are
 * refused unsent (the wait is longer than `maxRetryAfterMs`) while item calls keep going.
 * Without the partition, the spent search quota would hold the item calls as well. (Sliding
 * logs: each window starts with its key's first request, not on the minute.)
 *
 *   npx tsx examples/partitions.ts
 */
import { isRateLimitError, LimitedClient } from 'limited-client';
import { createMockServer } from 'limited-client/server';

const server = await createMockServer({
  routes: [
    {
      path: '/search',
      headers: 'ietf',
      limits: [{ algorithm: 'sliding-log', limit: 3, windowMs: 60_000, name: 'search' }],
    },
    {
      path: '/items/:id',
      headers: 'ietf',
      limits: [{ algorithm: 'sliding-log', limit: 100, windowMs: 60_000, name: 'core' }],
    },
  ],
});

const client = new LimitedClient(server.url, {
  maxRetryAfterMs: 5_000,
  partition: ({ url }) => (new URL(url).pathname.startsWith('/search') ? 'search' : undefined),
});

for (let i = 0; i < 5; i++) {
  try {
    const r = await client.get(`/search?q=${i}`);
    console.log(`search ${i}: ${r.status}`);
    await r.arrayBuffer();
  } catch (error) {
    if (!isRateLimitError(error)) throw error;
    // The hold is recorded for `maxRetryAfterMs` at most: then one probe asks the server again.
    console.log(
      `search ${i}: not sent (spent; next probe in ${Math.ceil(error.retryAfterMs / 1000)} s)`,
    );
  }
}
const items = await Promise.all(Array.from({ length: 20 }, (_, i) => client.get(`/items/${i}`)));
console.log('items:', items.map((r) => r.status).join(' '));

for (const [key, s] of Object.entries(client.stats().hosts)) {
  const policies = s.policies.map((p) => `${p.name} ${p.remaining}/${p.limit}`).join(', ');
  console.log(`${key}: ${s.requests} requests, ${s.rateLimited} 429s, ${policies}`);
}
console.log(`server: ${server.stats().rejected} requests rejected`);
await client.close();
await server.close();
