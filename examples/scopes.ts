/**
 * Many budgets on one host, learned with no configuration. The mock server answers like GitHub:
 * `/search/*` has its own budget (3 a minute here, resource `search`), every other route shares
 * `core` (5000 an hour), each named in `x-ratelimit-resource`. Once the searches are spent, the
 * client holds further searches (here refused unsent: the wait is longer than `maxRetryAfterMs`)
 * while the ordinary calls keep going, and `stats()` shows each budget as a scope.
 *
 *   npx tsx examples/scopes.ts
 */
import { isRateLimitError, LimitedClient } from 'limited-client';
import { createMockServer } from 'limited-client/server';

const github = (path: string, limit: number, windowMs: number, resource: string) => ({
  path,
  headers: 'github' as const,
  limits: [{ algorithm: 'fixed-window' as const, limit, windowMs, resource }],
});

const server = await createMockServer({
  routes: [github('/search/*', 3, 60_000, 'search'), github('*', 5000, 3_600_000, 'core')],
});
const client = new LimitedClient(server.url, { maxRetryAfterMs: 5_000 });

for (let i = 0; i < 5; i++) {
  try {
    const r = await client.get(`/search/issues?q=${i}`);
    console.log(`search ${i}: ${r.status}`);
    await r.arrayBuffer();
  } catch (error) {
    if (!isRateLimitError(error)) throw error;
    console.log(`search ${i}: held, not sent (${error.message})`);
  }
}
for (let i = 0; i < 3; i++) {
  const r = await client.get(`/repos/octo/hello/issues/${i}`);
  console.log(`issue ${i}: ${r.status}`);
  await r.arrayBuffer();
}
for (const scope of client.stats().hosts[server.url]?.scopes ?? []) {
  const [policy] = scope.policies;
  console.log(`${scope.name}: ${policy?.remaining} of ${policy?.limit} left`);
}
console.log(`server: ${server.stats().admitted} admitted, ${server.stats().rejected} refused`);
await client.close();
await server.close();
