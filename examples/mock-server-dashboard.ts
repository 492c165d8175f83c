/**
 * The mock server's live dashboard: `dashboard: true` serves a page at `/__dashboard` (open it in a
 * browser while the server runs) and its data as JSON at `/__dashboard/data`. Here a client and a
 * plain fetch loop hit two limited routes; the JSON then says what the page draws. From the
 * command line: `npx limited-client-server --limit gcra:rate=5,burst=5 --dashboard`.
 *
 *   npx tsx examples/mock-server-dashboard.ts            (prints and stops)
 *   npx tsx examples/mock-server-dashboard.ts --keep     (stays up: open the printed URL)
 */
import { LimitedClient } from 'limited-client';
import { createMockServer } from 'limited-client/server';

const server = await createMockServer({
  dashboard: true,
  routes: [
    {
      path: '/v1/things/:id',
      limits: [{ algorithm: 'fixed-window', limit: 5, windowMs: 1000, name: 'per-second' }],
    },
    {
      method: 'POST',
      path: '/v1/search',
      limits: [{ algorithm: 'token-bucket', capacity: 3, refillPerSecond: 1, name: 'searches' }],
    },
  ],
});
console.log(`dashboard at ${server.url}/__dashboard`);

// A client that respects the limits (no 429), and a loop that does not (429s, Retry-After).
const client = new LimitedClient(server.url);
await Promise.all(
  Array.from({ length: 12 }, async (_, i) => (await client.get(`/v1/things/${i}`)).arrayBuffer()),
);
for (let i = 0; i < 8; i++) {
  await (await fetch(`${server.url}/v1/search`, { method: 'POST' })).arrayBuffer();
}

interface Data {
  routes: { route: string; admitted: number; rejected: number; limits: { name: string }[] }[];
  timeline: { routes: { route: string; admitted: number[]; rejected: number[] }[] };
  retryAfter: { route: string; count: number }[];
}
const data = (await (await fetch(`${server.url}/__dashboard/data`)).json()) as Data;
for (const r of data.routes) {
  const series = data.timeline.routes.find((s) => s.route === r.route);
  const perSecond = series?.admitted.map((a, i) => `${a}/${series.rejected[i]}`).join(' ');
  console.log(
    `${r.route}: ${r.admitted} admitted, ${r.rejected} rejected; per second ${perSecond}`,
  );
}
for (const h of data.retryAfter) console.log(`${h.route}: ${h.count} Retry-After sent`);

await client.close();
if (process.argv.includes('--keep')) {
  console.log('Ctrl-C stops it');
  process.once('SIGINT', () => void server.close());
} else {
  await server.close();
}
