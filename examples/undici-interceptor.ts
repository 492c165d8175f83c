/**
 * The undici interceptor: the client's pipeline for every request of an undici dispatcher. Once
 * installed as the global dispatcher, Node's own fetch (and every SDK on it) goes through it, and
 * so does `undici.request`. The server allows 10 requests per second with a burst of 5 and says so
 * in its `RateLimit` headers: 30 calls at once, from both APIs, all succeed without a 429.
 *
 *   npx tsx examples/undici-interceptor.ts
 */

import { createMockServer } from 'limited-client/server';
import { limited } from 'limited-client/undici';
import { Agent, getGlobalDispatcher, request, setGlobalDispatcher } from 'undici';

const server = await createMockServer({
  routes: [
    {
      path: '/v1/items/:id',
      limits: [
        { algorithm: 'token-bucket', capacity: 5, refillPerSecond: 10, key: 'global', name: 'api' },
      ],
    },
  ],
});

const interceptor = limited({ hosts: { '127.0.0.1': { concurrency: 8 } } });
const agent = new Agent();
const previous = getGlobalDispatcher();
setGlobalDispatcher(agent.compose(interceptor));
let held = 0;
interceptor.on('held', () => held++);

const start = Date.now();
const statuses = await Promise.all(
  Array.from({ length: 30 }, async (_, i) => {
    if (i % 2 === 0) {
      // Node's global fetch: its dispatcher is now the composed Agent.
      const response = await fetch(`${server.url}/v1/items/${i}`);
      await response.arrayBuffer();
      return response.status;
    }
    const { statusCode, body } = await request(`${server.url}/v1/items/${i}`);
    await body.dump();
    return statusCode;
  }),
);

const { totals } = interceptor.stats();
console.log(
  `${statuses.filter((s) => s === 200).length}/30 ok in ${Date.now() - start} ms; ` +
    `${server.stats().rejected} x 429 from the server; ${held} waits for the declared limit; ` +
    `${totals.attempts} attempts for ${totals.requests} requests`,
);

setGlobalDispatcher(previous);
await interceptor.close();
await agent.close();
await server.close();
