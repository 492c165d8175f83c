/**
 * Many budgets on one host, learned with no configuration. The mock server answers like GitHub:
 * `/search/*` has its own budget (3 a minute here, resource `search`), every other route shares
 * `core` (5000 an hour), each named in `x-ratelimit-resource`. Once the searches are spent, the
 * client holds further searches (here refused unsent: the wait is longer than `maxRetryAfterMs`)
 * while the ordinary calls keep going, and `stats()` shows each budget as a scope. Then an
 * OpenAI-style route limited per model, the model named in the request's JSON body: the client
 * reads it once the host answered in OpenAI's dialect, and keeps each model's budget apart.
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

// Two models, 3 requests a minute each, counted apart by the `model` in the body.
const llm = await createMockServer({
  routes: [
    {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: 'openai',
      limits: [{ algorithm: 'fixed-window', limit: 3, windowMs: 60_000, key: { json: 'model' } }],
    },
  ],
});
const openai = new LimitedClient(llm.url, { maxRetryAfterMs: 5_000 });
for (const model of ['gpt-4o', 'gpt-4o', 'gpt-4o', 'gpt-4o', 'gpt-4o-mini']) {
  try {
    const r = await openai.post('/v1/chat/completions', { model, messages: [] });
    console.log(`${model}: ${r.status}`);
    await r.arrayBuffer();
  } catch (error) {
    if (!isRateLimitError(error)) throw error;
    console.log(`${model}: held, not sent (its budget is spent; the other model's is not)`);
  }
}
console.log(
  'scopes:',
  openai.stats().hosts[llm.url]?.scopes.map((s) => s.name),
);
console.log(`server: ${llm.stats().admitted} admitted, ${llm.stats().rejected} refused`);
await openai.close();
await llm.close();
