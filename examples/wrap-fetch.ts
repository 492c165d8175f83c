/**
 * wrapFetch: existing fetch code swaps one identifier. This server says nothing about its limit
 * (10 requests per second) until it refuses, and then only `Retry-After`: the events show the
 * client learning the limit from its first 429s and then waiting as told, one probe per window.
 *
 *   npx tsx examples/wrap-fetch.ts
 */
import { wrapFetch } from 'limited-client';
import { createMockServer } from 'limited-client/server';

const server = await createMockServer({
  routes: [
    {
      path: '/data/:id',
      headers: 'none',
      limits: [{ algorithm: 'fixed-window', limit: 10, windowMs: 1000 }],
    },
  ],
});

const fetch = wrapFetch(globalThis.fetch);
const start = Date.now();
const at = () => `${String(Date.now() - start).padStart(5)} ms`;
const path = (url: string) => new URL(url).pathname;
fetch.on('rate-limited', (e) => {
  console.log(`${at()}  429 for ${path(e.url)}: wait ${e.retryAfterMs} ms`);
});

const responses = await Promise.all(
  Array.from({ length: 40 }, (_, i) => fetch(`${server.url}/data/${String(i).padStart(2, '0')}`)),
);
const { totals } = fetch.stats();
console.log(
  `${responses.filter((r) => r.ok).length}/40 ok in ${Date.now() - start} ms; ` +
    `${totals.rateLimited} 429s, ${totals.attempts} attempts`,
);
await fetch.close();
await server.close();
