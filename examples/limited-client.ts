/**
 * LimitedClient against a server that declares its limit (5 requests per second, burst 5):
 * thirty calls fired at once all succeed, none is refused, and the client paces itself.
 *
 *   npx tsx examples/limited-client.ts
 */
import { LimitedClient } from 'limited-client';
import { createMockServer } from 'limited-client/server';

const server = await createMockServer({
  routes: [
    {
      method: 'GET',
      path: '/items/:id',
      limits: [{ algorithm: 'token-bucket', capacity: 5, refillPerSecond: 5, name: 'api' }],
    },
    { method: 'POST', path: '/orders' },
  ],
});

const api = new LimitedClient(server.url, { headers: { 'x-api-key': 'demo' } });
api.on('held', (e) => {
  if (e.reason === 'learned-limit')
    console.log(`  waiting ${e.waitMs} ms for policy "${e.policy}"`);
});

// A JSON body, serialised once, sent with an Idempotency-Key that every retry would reuse.
const order = await api.post('orders', { sku: 'book', qty: 1 });
console.log(`POST /orders: ${order.status}`, await order.json());

const started = Date.now();
const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => api.get(`items/${i}`)));
console.log(`30 GETs: ${responses.filter((r) => r.ok).length} ok in ${Date.now() - started} ms`);
console.log(`429s the server sent: ${server.stats().rejected}`);

const host = api.stats().hosts[server.url];
console.log('stats:', {
  requests: host?.requests,
  attempts: host?.attempts,
  policies: host?.policies,
});
await api.close();
await server.close();
