/**
 * Partitions over real HTTP: one host that limits two routes apart (as GitHub limits `search` at
 * 30 a minute beside `core` at 5,000 an hour). Without partitions the client learns both policies
 * for the whole host, so a spent `search` quota holds the `core` calls too; with a partition per
 * route each learns and holds on its own.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { isRateLimitError, LimitedClient } from '../../../src/index.js';
import type { MockServerConfig } from '../../../src/server/index.js';
import { closeAll, start } from './server.js';

afterAll(closeAll);

// Sliding logs, not fixed windows: a fixed window is aligned to the minute, and a run that
// straddles a minute would see the search quota come back.
const MINUTE = 60_000;
const config: MockServerConfig = {
  routes: [
    {
      path: '/search',
      headers: 'ietf',
      limits: [{ algorithm: 'sliding-log', limit: 2, windowMs: MINUTE, name: 'search' }],
    },
    {
      path: '/items/:id',
      headers: 'ietf',
      limits: [{ algorithm: 'sliding-log', limit: 50, windowMs: MINUTE, name: 'core' }],
    },
  ],
};
const ITEMS = 10;

/** Spends the search quota (2 of 2), then asks for ten items at once. */
async function searchThenItems(client: LimitedClient) {
  for (let i = 0; i < 2; i++) {
    const r = await client.get('/search');
    expect(r.status).toBe(200);
    await r.arrayBuffer();
  }
  return Promise.allSettled(
    Array.from({ length: ITEMS }, (_, i) =>
      client.get(`/items/${i}`).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      }),
    ),
  );
}

describe('partitions: routes limited apart on one host', () => {
  it('without a partition, a spent search quota holds the item calls too', async () => {
    const server = await start(config);
    // A hold longer than 1 s is refused at once rather than slept through (60 s here).
    const client = new LimitedClient(server.url, { maxRetryAfterMs: 1000 });
    const results = await searchThenItems(client);
    const refused = results.filter((r) => r.status === 'rejected' && isRateLimitError(r.reason));
    expect(refused).toHaveLength(ITEMS);
    expect(server.stats().rejected).toBe(0);
    await client.close();
  });

  it('with a partition per route, the item calls all go and the search partition holds alone', async () => {
    const server = await start(config);
    const client = new LimitedClient(server.url, {
      maxRetryAfterMs: 1000,
      partition: ({ url }) => (new URL(url).pathname === '/search' ? 'search' : undefined),
    });
    const held = new Set<string>();
    client.on('held', (e) => held.add(`${e.partition ?? '(host)'} ${e.reason}`));
    const results = await searchThenItems(client);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : r.reason))).toEqual(
      Array(ITEMS).fill(200),
    );
    // The search partition still knows its quota is spent: a third search is refused unsent.
    await expect(client.get('/search')).rejects.toSatisfy(isRateLimitError);
    expect(server.stats().rejected).toBe(0);
    // The item calls waited only for the host's first answer (cold start), never for `search`.
    expect([...held]).toEqual(['(host) cold-start']);

    const stats = client.stats();
    expect(Object.keys(stats.hosts).sort()).toEqual([server.url, `${server.url}#search`].sort());
    const search = stats.hosts[`${server.url}#search`];
    expect(search?.partition).toBe('search');
    expect(search?.origin).toBe(server.url);
    expect(search?.policies.map((p) => [p.name, p.remaining])).toEqual([['search', 0]]);
    const core = stats.hosts[server.url];
    expect(core?.partition).toBeUndefined();
    expect(core?.requests).toBe(ITEMS);
    expect(core?.policies.map((p) => p.name)).toEqual(['core']);
    expect(stats.totals.requests).toBe(ITEMS + 3);
    await client.close();
  });

  it("a call's own partition wins over the option, and '' is the host's own", async () => {
    const server = await start(config);
    const client = new LimitedClient(server.url, {
      maxRetryAfterMs: 1000,
      partition: () => 'everything',
    });
    for (let i = 0; i < 2; i++)
      (await client.get('/search', { partition: 'search' })).body?.cancel();
    const item = await client.get('/items/1', { partition: '' });
    expect(item.status).toBe(200);
    await item.arrayBuffer();
    const other = await client.get('/items/2');
    expect(other.status).toBe(200);
    await other.arrayBuffer();
    expect(Object.keys(client.stats().hosts).sort()).toEqual(
      [server.url, `${server.url}#everything`, `${server.url}#search`].sort(),
    );
    await client.close();
  });
});
