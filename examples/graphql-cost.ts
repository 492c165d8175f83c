/**
 * GraphQL cost in the body: a Shopify-style endpoint reports its bucket of cost points only in the
 * JSON answer (`extensions.cost.throttleStatus`) and refuses with HTTP 200 and a `THROTTLED` error.
 * Plain fetch hands the refusals back as successes; `wrapFetch` reads the bucket from the body,
 * paces at the restore rate and retries a refusal after the points it needs are back.
 *
 *   npx tsx examples/graphql-cost.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { wrapFetch } from 'limited-client';

// A bucket of 50 points restored at 25 a second; every query costs 10.
const MAX = 50;
const RESTORE = 25;
const COST = 10;
let level = MAX;
let at = Date.now();
const server = createServer((req, res) => {
  req.resume();
  const now = Date.now();
  level = Math.min(MAX, level + ((now - at) / 1000) * RESTORE);
  at = now;
  const fits = level >= COST;
  if (fits) level -= COST;
  const cost = {
    requestedQueryCost: COST,
    actualQueryCost: fits ? COST : null,
    throttleStatus: {
      maximumAvailable: MAX,
      currentlyAvailable: Math.floor(level),
      restoreRate: RESTORE,
    },
  };
  const body = fits
    ? { data: { shop: { name: 'example' } }, extensions: { cost } }
    : {
        errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }],
        extensions: { cost },
      };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/api/2025-01/graphql.json`;

/** 15 queries at once through `send`; how many came back THROTTLED. */
async function run(send: typeof fetch): Promise<number> {
  const bodies = await Promise.all(
    Array.from({ length: 15 }, () =>
      send(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ shop { name } }' }),
      }).then((r) => r.text()),
    ),
  );
  return bodies.filter((b) => b.includes('THROTTLED')).length;
}

let start = Date.now();
console.log(
  `plain fetch:  ${await run(globalThis.fetch)} of 15 THROTTLED (${Date.now() - start} ms)`,
);
level = MAX;
at = Date.now();
const limited = wrapFetch(globalThis.fetch);
start = Date.now();
const throttled = await run(limited);
const { totals } = limited.stats();
console.log(
  `wrapFetch:    ${throttled} of 15 THROTTLED (${Date.now() - start} ms, the bucket allows 4000); ` +
    `${totals.attempts} attempts`,
);
await limited.close();
server.close();
